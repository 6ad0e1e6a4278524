"""In-process unit tests of pipeline/results: how the harness ended a run
decides its class, with the reason it gives; record-failure, the class 2
result of a variant that was not booted (tests/unit/recorded.py: the logs).

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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recorded import (log_lines, parse, parse_lines, junit,  # noqa: E402
                      reasons, upto)
from pipeline import cli, results  # noqa: E402


def harness_log(*events):
    """clean.log as the harness writes it when it stops a run itself: the
    guest part up to its poweroff, then EVENTS."""
    return upto(log_lines('clean.log'), '^@@@ HARNESS SEND poweroff -f') + \
        list(events) + ['']


def cut_log(pattern):
    """clean.log up to and with its first line matching PATTERN, then
    QEMU ending by itself with status 0 (a guest reset or triple fault
    under -no-reboot ends so), as the harness writes it."""
    return upto(log_lines('clean.log'), pattern) + [
        '@@@ HARNESS QEMU-EXIT status=0', '@@@ HARNESS END elapsed=4.0', '']


class HarnessEndings(unittest.TestCase):
    """How the harness ended the run decides its class, with the reason
    it gives."""

    def test_poweroff_timeout_is_the_reason_not_qemu_killed(self):
        res, r = parse_lines(harness_log(
            '@@@ HARNESS POWEROFF-TIMEOUT after=60',
            '@@@ HARNESS QEMU-EXIT status=killed',
            '@@@ HARNESS END elapsed=70.1'))
        self.assertEqual(2, res.exit_class)
        self.assertEqual('QEMU did not end within 60s of poweroff -f',
                         r['reasons'][0]['reason'])
        self.assertEqual(1, len(r['reasons']))
        self.assertEqual('POWEROFF-TIMEOUT',
                         [e['event'] for e in r['harness']['events']][-3])

    def test_interrupted_is_the_reason_not_log_truncated(self):
        res, r = parse_lines(harness_log(
            '@@@ HARNESS INTERRUPTED signal=SIGINT',
            '@@@ HARNESS QEMU-EXIT status=killed',
            '@@@ HARNESS END elapsed=3.0'))
        self.assertEqual(2, res.exit_class)
        self.assertEqual('the harness was interrupted (SIGINT) and killed '
                         'QEMU', r['reasons'][0]['reason'])
        self.assertEqual(1, len(r['reasons']))

    def test_final_timeout_is_the_reason(self):
        res, r = parse_lines(harness_log(
            '@@@ HARNESS FINAL-TIMEOUT after=120',
            '@@@ HARNESS QEMU-EXIT status=killed',
            '@@@ HARNESS END elapsed=130.0'))
        self.assertEqual(2, res.exit_class)
        self.assertEqual('the final command timed out after 120s',
                         r['reasons'][0]['reason'])

    def test_a_suite_sent_that_never_began_names_it_and_where_it_stopped(
            self):
        # (QEMU exited 0)
        res, r = parse_lines(cut_log('^@@@ HARNESS SEND run-suite demo'))
        self.assertEqual(2, res.exit_class)
        self.assertEqual(2, r['exit_class'])
        self.assertEqual('suite demo was sent but never began; the console '
                         'stopped at line 220: / #', r['reasons'][0]['reason'])
        self.assertEqual('the run ended before its last step (the harness '
                         'never sent poweroff); the console stopped at line '
                         '220: / #', r['reasons'][1]['reason'])

    def test_qemu_exiting_0_in_a_suite_incomplete_suite_and_run(self):
        res, r = parse_lines(cut_log('^ok 2 global.cpus_online'))
        self.assertEqual(2, res.exit_class)
        got = [x['reason'] for x in r['reasons']]
        self.assertIn('suite demo incomplete: no SUITE-END', got)
        self.assertIn('the run ended before its last step (the harness never '
                      'sent poweroff); the console stopped at line 237: ok 2 '
                      'global.cpus_online', got)

    def test_suites_all_ended_but_the_harness_never_sent_poweroff(self):
        res, r = parse_lines(cut_log('^@@@ HARNESS SUITE-DONE suite=demo'))
        self.assertEqual(2, res.exit_class)
        self.assertEqual(2, r['counts']['pass'])
        self.assertEqual(1, len(r['reasons']))
        self.assertEqual('the run ended before its last step (the harness '
                         'never sent poweroff); the console stopped at line '
                         '247: / #', r['reasons'][0]['reason'])

    def test_a_harness_failure_the_log_does_not_explain_is_class_2(self):
        # in results.json, not only in an exit status (parse-console
        # --harness-status)
        res, r = parse('clean.log', harness_status=2)
        self.assertEqual(2, res.exit_class)
        self.assertEqual(2, r['exit_class'])
        self.assertEqual('the harness exited 2, and the console log does not '
                         'say why', r['reasons'][0]['reason'])
        self.assertTrue(junit(res).findall('.//testcase'))
        # a status of 0, or a log that explains the failure, adds nothing
        res, r = parse('clean.log', harness_status=0)
        self.assertEqual(0, res.exit_class)
        res, r = parse('panic-sysrq.log', harness_status=3)
        self.assertEqual(3, res.exit_class)
        self.assertNotIn('does not say why', json.dumps(r))




class RecordFailureCommand(unittest.TestCase):
    """`record-failure` (scripts/pipeline record-failure) with
    test-variant's and ci/boot-job's arguments; the files it writes:
    tests/tooling/parse-console.bats."""

    def run_cli(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(['record-failure'] + list(argv))
        return rc, out.getvalue(), err.getvalue()

    def test_writes_class_2_with_the_reason_and_prints_the_summary(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, 'default')
            rc, line, err = self.run_cli('--variant', 'default', '--out', out,
                                         '--log', 'x.log', 'no', 'build')
            self.assertEqual(0, rc, err)
            with open(os.path.join(out, 'results.json'),
                      encoding='utf-8') as f:
                r = json.load(f)
            self.assertEqual(line, results.summary_line(
                results.failure_result('default', 'no build')) + '\n')
            self.assertEqual((2, 'no build', os.path.abspath('x.log')),
                             (r['exit_class'], r['reasons'][0]['reason'],
                              r['log']))
            self.assertTrue(os.path.isfile(os.path.join(out, 'junit.xml')))
            # OUT cannot be made: 2 with the message, never 1
            rc, _, err = self.run_cli('--variant', 'default', '--out',
                                      os.path.join(out, 'results.json', 'x'),
                                      'why')
            self.assertEqual(2, rc)
            self.assertIn('pipeline record-failure: error: ', err)

    def test_variant_out_and_a_reason_are_required(self):
        for argv in ((), ('--variant', 'v', 'why'), ('--out', 'd', 'why'),
                     ('--variant', 'v', '--out', 'd')):
            rc, _, err = self.run_cli(*argv)
            self.assertEqual(2, rc, argv)
            self.assertIn('usage: pipeline record-failure', err)


if __name__ == '__main__':
    unittest.main()
