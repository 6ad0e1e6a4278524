"""In-process unit tests of pipeline/results/symbolize.py (kernel reports
decoded to file:line; scripts/pipeline symbolize) and of parse's one-call end of
a boot, parse + symbolize + report (scripts/test-variant).

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   '..', '..'))
sys.path.insert(0, TOP)
from pipeline import cli  # noqa: E402
from pipeline.results import symbolize  # noqa: E402

LOGS = os.path.join(TOP, 'tests', 'fixtures', 'console-logs')


def run_cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(argv)
    return rc, out.getvalue(), err.getvalue()


class DecodeTest(unittest.TestCase):

    def test_a_tests_excerpt_gets_the_decoded_lines_of_its_reports(self):
        tests = [{'excerpt': 'a\n[ 1.0] f+0x1/0x2\nb'}, {'excerpt': 'c'},
                 {}]
        symbolize.decode_tests(tests, [{'excerpt': '[ 1.0] f+0x1/0x2',
                                        'decoded': '[ 1.0] f (k/f.c:4)'}])
        self.assertEqual('a\n[ 1.0] f (k/f.c:4)\nb', tests[0]['decoded'])
        self.assertNotIn('decoded', tests[1])

    def test_the_vmlinux_must_be_the_booted_kernels(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(symbolize.NoDecode) as e:
                symbolize.vmlinux_xz(d, {'variant': 'v'})
            self.assertIn('no usable', str(e.exception))
            os.makedirs(os.path.join(d, 'v'))
            with open(os.path.join(d, 'v', 'variant.json'), 'w',
                      encoding='utf-8') as f:
                json.dump({'kernel': {'variant': 'v', 'release': '6.1'}}, f)
            with self.assertRaises(symbolize.NoDecode) as e:
                symbolize.vmlinux_xz(d, {'variant': 'v',
                                         'kernel_release': '6.2'})
            self.assertIn('the log shows kernel 6.2, but', str(e.exception))
            with self.assertRaises(symbolize.NoDecode) as e:
                symbolize.vmlinux_xz(d, {'variant': 'v'})
            self.assertIn('vmlinux.xz', str(e.exception))


class OneCallTest(unittest.TestCase):
    """parse --symbolize ARTIFACTS --report: the end of test-variant in
    one process; the verdict is parse's whatever the other two do."""

    def test_clean_run(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, 'default')
            rc, so, se = run_cli(['parse', '--variant', 'default', '--out',
                                  out, '--symbolize', d, '--report',
                                  os.path.join(LOGS, 'clean.log')])
            self.assertEqual(0, rc)
            self.assertTrue(so.startswith('default: '), so)
            self.assertEqual(1, len(so.splitlines()))
            # the report for people goes to stderr
            self.assertIn('[PASS]', se)
            with open(os.path.join(out, 'results.json'),
                      encoding='utf-8') as f:
                self.assertNotIn('symbolized', json.load(f))

    def test_a_crash_is_3_and_its_undecodable_reports_say_why(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, 'default')
            rc, so, se = run_cli(['parse', '--variant', 'default', '--out',
                                  out, '--symbolize', d, '--report',
                                  os.path.join(LOGS, 'oops.log')])
            self.assertEqual(3, rc)
            self.assertIn('symbolize: kernel reports not decoded', se)
            self.assertIn('[CRASH]', se)
            with open(os.path.join(out, 'results.json'),
                      encoding='utf-8') as f:
                self.assertIn('no usable', json.load(f)['symbolized']['error'])

    def test_symbolize_and_report_need_out(self):
        rc, _, se = run_cli(['parse', '--report',
                             os.path.join(LOGS, 'clean.log')])
        self.assertEqual(2, rc)
        self.assertIn('--out', se)


class SymbolizeCommandTest(unittest.TestCase):

    def test_a_run_without_reports_is_not_touched_and_a_missing_one_is_2(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'results.json')
            with open(path, 'w', encoding='utf-8') as f:
                f.write('{"kernel_problems": []}')
            self.assertEqual((0, '', ''), run_cli(['symbolize', d]))
            with open(path, encoding='utf-8') as f:
                self.assertEqual('{"kernel_problems": []}', f.read())
            rc, _, se = run_cli(['symbolize', os.path.join(d, 'x')])
            self.assertEqual(2, rc)
            self.assertIn('cannot read', se)


if __name__ == '__main__':
    unittest.main()
