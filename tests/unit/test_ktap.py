"""In-process unit tests of the KTAP reading: one rule for what a result
line's directive means, whether the line is at the top of a program's
output or nested below a kselftest runner's result.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..', 'scripts'))
import consolelog  # noqa: E402
import ktap  # noqa: E402

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
        res = consolelog.parse(console(['TAP version 13', '1..8'] + LINES))
        self.assertEqual(WANT, outcomes(res, ''))

    def test_nested_below_a_runner_result(self):
        res = consolelog.parse(console(
            ['TAP version 13', '1..1', '# selftests: t: prog',
             '# TAP version 13', '# 1..8'] + ['# ' + ln for ln in LINES] +
            ['ok 1 selftests: t: prog']))
        self.assertEqual(WANT, outcomes(res, 'prog/'))

    def test_the_tree_itself(self):
        tree = ktap.parse('\n'.join(['TAP version 13', '1..8'] + LINES))
        got = {t.name: (t.status, t.reason) for t in tree.subtests}
        self.assertEqual(WANT, got)


if __name__ == '__main__':
    unittest.main()
