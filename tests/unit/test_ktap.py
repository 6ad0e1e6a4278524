"""In-process unit tests of the KTAP reading (pipeline/ktap.py and the flat
parse in pipeline/results): one rule for what a result line's
directive means, at the top of a program's output or nested below a
kselftest runner's result; the nested parser on recorded real output.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import os
import sys
import unittest

sys.dont_write_bytecode = True
TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.path.insert(0, TOP)
from pipeline import ktap, results  # noqa: E402

# One result per directive; status and reason as results.json has them.
LINES = [
    'ok 1 a # SKIP no widget',
    'not ok 2 b # TODO later',
    'not ok 3 c # XFAIL known bug',
    'ok 4 d # XPASS fixed by chance',
    'not ok 5 e # TIMEOUT 30 seconds',
    'not ok 6 f # exit=139',
    'ok 7 g',
    'not ok 8 h',
]
WANT = {
    'a': ('skip', 'no widget'),
    'b': ('skip', 'later'),
    'c': ('pass', 'expected failure: known bug'),
    'd': ('fail', 'unexpected pass: fixed by chance'),
    'e': ('fail', 'timeout 30 seconds'),
    'f': ('fail', 'exit=139'),
    'g': ('pass', None),
    'h': ('fail', None),
}


def console(program_lines):
    head = ['@@@ HARNESS START variant=v date=2026-12-06T00:00:00Z',
            '@@@ READY release=6.12 uptime=1.0',
            '@@@ HARNESS SEND run-suite s',
            '@@@ SUITE-BEGIN s uptime=1.0',
            '@@@ TEST-BEGIN s/p uptime=1.0']
    tail = ['@@@ TEST-END s/p rc=0 uptime=2.0',
            '@@@ SUITE-END s rc=0 uptime=2.0',
            '@@@ HARNESS SUITE-DONE suite=s elapsed=2',
            '@@@ HARNESS SEND poweroff -f',
            '@@@ HARNESS QEMU-EXIT status=0', '@@@ HARNESS END elapsed=3']
    return '\n'.join(head + program_lines + tail) + '\n'


def outcomes(res, prefix):
    out = {}
    for t in res['tests']:
        name = t['name'][len(prefix):]
        out[name] = (t['status'], t['skip_reason'] if t['status'] == 'skip'
                     else t['note'])
    return out


class Directives(unittest.TestCase):
    def test_flat(self):
        res = results.parse(console(['TAP version 13', '1..8'] +
                                    LINES)).to_dict()
        self.assertEqual(WANT, outcomes(res, ''))

    def test_nested_below_a_runner_result(self):
        res = results.parse(console(
            ['TAP version 13', '1..1', '# selftests: t: prog',
             '# TAP version 13', '# 1..8'] + ['# ' + ln for ln in LINES] +
            ['ok 1 selftests: t: prog'])).to_dict()
        self.assertEqual(WANT, outcomes(res, 'prog/'))

    def test_the_tree_itself(self):
        tree = ktap.parse('\n'.join(['TAP version 13', '1..8'] + LINES))
        got = {t.name: (t.status, t.reason) for t in tree.subtests}
        self.assertEqual(WANT, got)


DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                    'fixtures', 'ktap')


def parsed(name):
    """The flatten() dicts of tests/fixtures/ktap/NAME, the leaves, and by
    id."""
    with open(os.path.join(DATA, name), encoding='utf-8') as f:
        t = ktap.flatten(ktap.parse(f.read()))
    return t, [x for x in t if x['leaf']], {x['id']: x for x in t}


class RecordedOutput(unittest.TestCase):
    """pipeline/ktap.py on real output: tests/fixtures/ktap/*.ktap are program
    outputs copied from serial console logs of kselftest runs in the
    pipeline's guest (tests/fixtures/ktap/README.md), and the KTAP specification's
    own example. Each test asserts concrete ids, statuses, reasons and
    counts. (Moved from tests/ktap.bats, where each check was a python3
    process of its own.)"""

    def test_spec_example_indentation_nesting(self):
        t, _, by = parsed('spec-example.ktap')
        self.assertEqual(
            ['main_test', 'main_test/example_test_1',
             'main_test/example_test_1/test_1', 'main_test/example_test_2',
             'main_test/example_test_2/test_1',
             'main_test/example_test_2/test_2', 'main_test/example_test_3',
             'main_test/example_test_3/test_1',
             'main_test/example_test_3/test_2',
             'main_test/example_test_3/test_3'], [x['id'] for x in t])
        self.assertEqual(['fail', 'pass', 'pass', 'pass', 'skip', 'pass',
                          'fail', 'pass', 'fail', 'skip'],
                         [x['status'] for x in t])
        self.assertEqual('test_1 skipped',
                         by['main_test/example_test_2/test_1']['reason'])
        self.assertEqual([0, 1, 2, 1, 2, 2, 1, 2, 2, 2],
                         [x['depth'] for x in t])
        # a test's excerpt is its own output, up to its result line
        self.assertEqual('    # test_2: FAIL\n    not ok 2 test_2',
                         by['main_test/example_test_3/test_2']['excerpt'])

    def test_kselftest_nesting_three_documents_deep_futex(self):
        # runner.sh result -> functional/run.sh -> a document per program
        t, leaves, by = parsed('noopts-futex.ktap')
        self.assertEqual(['run.sh'], [x['id'] for x in t if x['depth'] == 0])
        self.assertEqual(['fail', 'exit=1', 'futex', 12865.0],
                         [by['run.sh'][k] for k in ('status', 'reason',
                                                    'collection',
                                                    'duration_ms')])
        self.assertEqual(39, len(leaves))
        self.assertEqual({'pass'}, {x['status'] for x in leaves})
        # futex_wait and futex_waitv died on shmget() (no SYSVIPC): their
        # plans announced 3 + 7 results, 2 came
        self.assertEqual(8, by['run.sh']['missing'])
        # the same program run twice with the same arguments: unique ids
        self.assertEqual(
            ['run.sh/futex-requeue-pi broadcast=0 locked=1 owner=0 '
             'timeout=5000ns',
             'run.sh/futex-requeue-pi broadcast=0 locked=1 owner=0 '
             'timeout=5000ns#2'],
            [x['id'] for x in t
             if 'locked=1 owner=0 timeout=5000ns' in x['id'] and
             'broadcast=0' in x['id']])

    def test_pass_fail_skip_with_reasons_clone3(self):
        t, leaves, by = parsed('noopts-clone3.ktap')
        self.assertEqual(
            [('clone3', 'fail', 'exit=1'),
             ('clone3_clear_sighand', 'pass', None),
             ('clone3_set_tid', 'fail', 'exit=1'),
             ('clone3_cap_checkpoint_restore', 'fail', 'exit=1')],
            [(x['id'], x['status'], x['reason']) for x in t
             if x['depth'] == 0])
        self.assertEqual({'pass': 15, 'fail': 3, 'skip': 1, 'error': 0},
                         ktap.counts([x for x in t
                                      if x['path'][0] == 'clone3']))
        self.assertEqual(['New time NS'], [x['reason'] for x in leaves
                                           if x['status'] == 'skip'])
        self.assertEqual('fail',
                         by['clone3/clone3() in a new PID_NS']['status'])
        # a kselftest_harness.h program nested under runner.sh
        self.assertEqual('fail', by['clone3_cap_checkpoint_restore/global.'
                                    'clone3_cap_checkpoint_restore']['status'])

    def test_runner_result_glued_to_an_unterminated_line_sched(self):
        t, _, by = parsed('noopts-sched.ktap')
        self.assertEqual([('cs_prctl_test', 'fail', 'exit=1')],
                         [(x['id'], x['status'], x['reason']) for x in t])
        self.assertIn('FAILED: get_cs_cookie(0) == 0',
                      by['cs_prctl_test']['excerpt'])

    def test_output_ending_inside_a_program(self):
        # noopts-futex.ktap without runner.sh's last two lines
        t, _, by = parsed('noopts-futex-cut.ktap')
        self.assertEqual([('run.sh', 'error', 39)],
                         [(x['id'], x['status'], x['subtests']) for x in t
                          if x['depth'] == 0])
        self.assertEqual('no result line for this test (its output ended)',
                         by['run.sh']['reason'])

    def test_one_test_matched_across_two_runs_by_key_futex(self):
        # futex_requeue prints "futex_requeue many succeeds" or
        # "futex_requeue many returned: 11 ..." (twice): ids differ, the
        # key is the position
        t, _, by = parsed('futex-pass.ktap')
        self.assertEqual([('1.1/28.2', 'pass')],
                         [(x['key'], x['status']) for x in t
                          if x['name'].startswith('futex_requeue many')])
        t2, _, _ = parsed('futex-requeue-fail.ktap')
        self.assertEqual([('1.1/28.2', 'fail'), ('1.1/28.3', 'fail')],
                         [(x['key'], x['status']) for x in t2
                          if x['name'].startswith('futex_requeue many')])
        # documents at one depth are counted: the 28th program's document
        self.assertEqual('1.1/28.1',
                         by['run.sh/futex_requeue simple succeeds']['key'])


class CommandLine(unittest.TestCase):
    def test_json_lines_with_prefix_and_a_missing_file_is_exit_2(self):
        import json
        import subprocess
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE='1')
        r = subprocess.run([sys.executable, '-m', 'pipeline.ktap',
                            '--prefix', 'kselftest/05-sched',
                            os.path.join(DATA, 'noopts-sched.ktap')],
                           capture_output=True, text=True, env=env,
                           check=False, cwd=TOP)
        self.assertEqual(0, r.returncode)
        self.assertEqual('kselftest/05-sched/cs_prctl_test',
                         json.loads(r.stdout.splitlines()[0])['id'])
        r = subprocess.run([sys.executable, '-m', 'pipeline.ktap',
                            os.path.join(DATA, 'nonexistent.ktap')],
                           capture_output=True, text=True, env=env,
                           check=False, cwd=TOP)
        self.assertEqual(2, r.returncode)
        self.assertIn('nonexistent.ktap', r.stdout + r.stderr)


if __name__ == '__main__':
    unittest.main()
