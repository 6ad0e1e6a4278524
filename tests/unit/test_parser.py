"""In-process unit tests of the one KTAP reading of a program's output:
the same rules at the top of the output (a kselftest_harness.h program's
own KTAP) and nested below a result (kselftest's runner prefixes "# " per
depth; KTAP and KUnit indent). Every directive at every depth, and what a
test's result carries besides its status: its name, duration, metrics and
log excerpt.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import json
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..'))
from pipeline import results  # noqa: E402

HEAD = ['@@@ HARNESS START variant=v date=2026-12-06T00:00:00Z',
        '@@@ READY release=6.12 uptime=1.0',
        '@@@ HARNESS SEND run-suite s',
        '@@@ SUITE-BEGIN s uptime=1.0',
        '@@@ TEST-BEGIN s/p uptime=1.0']
TAIL = ['@@@ TEST-END s/p rc=0 uptime=2.0',
        '@@@ SUITE-END s rc=0 uptime=2.0',
        '@@@ HARNESS SUITE-DONE suite=s elapsed=2',
        '@@@ HARNESS SEND poweroff -f',
        '@@@ HARNESS QEMU-EXIT status=0', '@@@ HARNESS END elapsed=3']


def console(program_lines, end=True):
    """The console log of one boot whose program s/p printed
    PROGRAM_LINES; END=False: the log stops, without a newline, after
    them (a log cut mid-line)."""
    if not end:
        return '\n'.join(HEAD + program_lines)
    return '\n'.join(HEAD + program_lines + TAIL) + '\n'


def parse(text):
    """TEXT's results.json, as a dict."""
    return results.parse(text, patterns=[]).to_dict()


def by_name(res, prefix=''):
    """The results of program s/p by their name below PREFIX."""
    return {t['name'][len(prefix):]: t for t in res['tests']
            if t['name'].startswith(prefix)}


# Each directive form once, on "ok" and on "not ok" lines; the outcome
# results.json gives it: (status, reason), the reason being skip_reason
# for a skip and note otherwise.
DIRECTIVES = [
    ('ok 1 a # SKIP no widget', ('skip', 'no widget')),
    ('not ok 2 b # SKIP no widget', ('skip', 'no widget')),
    ('ok 3 c # skip lower case', ('skip', 'lower case')),
    ('ok 4 d # SKIP', ('skip', 'skip')),
    ('not ok 5 e # TODO later', ('skip', 'later')),
    ('ok 6 f # TODO', ('skip', 'todo')),
    ('not ok 7 g # XFAIL known bug', ('pass', 'expected failure: known bug')),
    ('ok 8 h # XFAIL known bug', ('pass', 'expected failure: known bug')),
    ('ok 9 i # XPASS fixed by chance',
     ('fail', 'unexpected pass: fixed by chance')),
    ('not ok 10 j # xpass', ('fail', 'unexpected pass:')),
    ('not ok 11 k # TIMEOUT 30 seconds', ('fail', 'timeout 30 seconds')),
    ('ok 12 l # TIMEOUT', ('fail', 'timeout')),
    ('not ok 13 m # exit=139', ('fail', 'exit=139')),
    ('ok 14 - n # SKIP with a TAP 13 dash', ('skip', 'with a TAP 13 dash')),
    ('ok 15 o', ('pass', None)),
    ('not ok 16 p', ('fail', None)),
]
# (the test names are the letters a, b, c, ...)
WANT = dict(zip('abcdefghijklmnop', (w for _, w in DIRECTIVES)))


def outcomes(res, prefix=''):
    return {n: (t['status'], t['skip_reason'] if t['status'] == 'skip'
                else t['note'])
            for n, t in by_name(res, prefix).items() if n}


def count_results(lines):
    return sum(1 for ln in lines if ln.startswith(('ok ', 'not ok ')))


def ktap(lines, prefix=''):
    """A KTAP document of LINES, each line behind PREFIX."""
    return [prefix + ln for ln in
            ['TAP version 13', '1..%d' % count_results(lines)] + lines]


class EveryDirectiveAtEveryDepth(unittest.TestCase):
    """One rule for what a result line's directive means, wherever the
    result is."""

    def test_top_level(self):
        res = parse(console(ktap([ln for ln, _ in DIRECTIVES])))
        self.assertEqual(WANT, outcomes(res))

    def test_nested_below_a_kselftest_runner_result(self):
        res = parse(console(
            ['TAP version 13', '1..1', '# selftests: t: prog'] +
            ktap([ln for ln, _ in DIRECTIVES], '# ') +
            ['ok 1 selftests: t: prog']))
        self.assertEqual(WANT, outcomes(res, 'prog/'))

    def test_nested_twice_a_script_running_programs(self):
        res = parse(console(
            ['TAP version 13', '1..1', '# selftests: t: run.sh',
             '# TAP version 13', '# 1..1'] +
            ktap([ln for ln, _ in DIRECTIVES], '# # ') +
            ['# ok 1 inner', 'ok 1 selftests: t: run.sh']))
        self.assertEqual(WANT, outcomes(res, 'run.sh/inner/'))

    def test_nested_by_indentation_ktap_and_kunit(self):
        res = parse(console(
            ['KTAP version 1', '1..1'] +
            ktap([ln for ln, _ in DIRECTIVES], '    ') +
            ['not ok 1 suite']))
        self.assertEqual(WANT, outcomes(res, 'suite/'))


# The runner's frame around one program's nested output.
def nested(lines):
    return ['TAP version 13', '1..1', '# selftests: t: prog',
            '# TAP version 13',
            '# 1..%d' % count_results([ln[2:] for ln in lines])] + \
        lines + ['ok 1 selftests: t: prog']


class OneRuleAtEveryDepth(unittest.TestCase):
    """What a result carries besides its status is read by the same rules
    at the top of a program's output and nested below a runner's result
    (each pair: flat, then nested)."""

    def test_kernel_lines_are_in_the_excerpt_of_the_test_they_came_in(self):
        kernel = '[    1.500000] virtio_net virtio0: link up'
        res = parse(console(ktap([kernel, 'ok 1 a'])))
        self.assertEqual(kernel + '\nok 1 a', by_name(res)['a']['excerpt'])
        res = parse(console(nested([kernel, '# ok 1 a'])))
        self.assertEqual(kernel + '\n# ok 1 a',
                         by_name(res, 'prog/')['a']['excerpt'])

    def test_a_metric_line_before_a_result_is_its_metric(self):
        res = parse(console(ktap(['# metric: ns=12.5', 'ok 1 a'])))
        self.assertEqual({'ns': 12.5}, by_name(res)['a']['metrics'])
        res = parse(console(nested(['# # metric: ns=12.5', '# ok 1 a'])))
        self.assertEqual({'ns': 12.5}, by_name(res, 'prog/')['a']['metrics'])

    def test_duration_line_gives_the_duration_and_is_not_in_the_excerpt(self):
        # the number as the guest wrote it: 7 stays 7 in results.json, 7.5
        # is 7.5
        res = parse(console(ktap(['# duration_ms=7', 'ok 1 a',
                                  '# duration_ms=7.5', 'ok 2 b'])))
        a, b = by_name(res)['a'], by_name(res)['b']
        self.assertEqual(('7', 'ok 1 a', '7.5'),
                         (json.dumps(a['duration_ms']), a['excerpt'],
                          json.dumps(b['duration_ms'])))
        res = parse(console(nested(['# # duration_ms=7', '# ok 1 a',
                                    '# # duration_ms=7.5', '# ok 2 b'])))
        a, b = by_name(res, 'prog/')['a'], by_name(res, 'prog/')['b']
        self.assertEqual(('7', '# ok 1 a', '7.5'),
                         (json.dumps(a['duration_ms']), a['excerpt'],
                          json.dumps(b['duration_ms'])))

    def test_version_and_plan_lines_are_not_in_the_first_excerpt(self):
        res = parse(console(ktap(['# hello', 'ok 1 a'])))
        self.assertEqual('# hello\nok 1 a', by_name(res)['a']['excerpt'])
        res = parse(console(nested(['# # hello', '# ok 1 a'])))
        self.assertEqual('# # hello\n# ok 1 a',
                         by_name(res, 'prog/')['a']['excerpt'])

    def test_a_run_line_starts_the_excerpt_and_names_a_nameless_result(self):
        # kselftest_harness.h: "#  RUN <test> ...", its output, its result
        lines = ['# Starting 2 tests from 1 test cases.',
                 '#  RUN           t.a ...', '#            OK  t.a',
                 'ok 1 t.a', '#  RUN           t.b ...', 'ok 2']
        res = parse(console(ktap(lines)))
        got = by_name(res)
        self.assertEqual(['t.a', 't.b'], list(got))
        self.assertEqual('#  RUN           t.a ...\n#            OK  t.a\n'
                         'ok 1 t.a', got['t.a']['excerpt'])
        res = parse(console(nested(['# ' + ln for ln in lines])))
        got = by_name(res, 'prog/')
        self.assertEqual(['t.a', 't.b'], list(got))
        self.assertEqual('# #  RUN           t.a ...\n# #            OK  t.a\n'
                         '# ok 1 t.a', got['t.a']['excerpt'])

    def test_the_cut_off_last_line_of_a_log_is_never_a_result(self):
        res = parse(console(ktap(['ok 1 a', 'ok 2 b']), end=False))
        self.assertEqual(['a', 'test-2'], list(by_name(res)))
        self.assertEqual('error', by_name(res)['test-2']['status'])
        res = parse(console(['TAP version 13', '1..1',
                             '# selftests: t: prog', '# TAP version 13',
                             '# 1..2', '# ok 1 a', '# ok 2 b'], end=False))
        self.assertEqual({'prog': 'error', 'prog/a': 'pass'},
                         {n: t['status'] for n, t in by_name(res).items()
                          if n != 'missing-results'})

    def test_a_long_excerpt_keeps_its_head_tail_and_the_count_between(self):
        lines = ['# line %d' % i for i in range(250)]
        res = parse(console(ktap(lines + ['ok 1 a'])))
        self.assertIn('[... 51 lines omitted ...]',
                      by_name(res)['a']['excerpt'])
        res = parse(console(nested(['# ' + ln for ln in lines] +
                                   ['# ok 1 a'])))
        self.assertIn('[... 51 lines omitted ...]',
                      by_name(res, 'prog/')['a']['excerpt'])

    def test_a_runner_result_glued_to_an_unterminated_line(self):
        # a program that ended without a newline: runner.sh's result is
        # on the same line as its last output
        glued = '# (cs_prctl_test.c:287) - not ok 1 selftests: t: prog'
        res = parse(console(['TAP version 13', '1..1', glued]))
        self.assertEqual({'selftests: t: prog': 'fail'},
                         {n: t['status'] for n, t in by_name(res).items()})
        res = parse(console(['TAP version 13', '1..1',
                             '# selftests: t: prog', '# TAP version 13',
                             '# 1..1', '# ok 1 a', glued]))
        self.assertEqual({'prog': 'fail', 'prog/a': 'pass'},
                         {n: t['status'] for n, t in by_name(res).items()})

    def test_a_bail_out_is_the_programs_whole_line(self):
        res = parse(console(ktap(['ok 1 a', 'Bail out! cannot go on'])))
        self.assertEqual('Bail out! cannot go on',
                         res['suites'][0]['programs'][0]['bail_out'])


if __name__ == '__main__':
    unittest.main()
