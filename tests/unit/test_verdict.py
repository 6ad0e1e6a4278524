"""In-process unit tests of the verdict (pipeline/results/verdict.py): each
class rule on a small log, the enums of status and class, and the
results.json layout the typed models write (tests/unit/test_results.py
has the rules on recorded logs).

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..'))
from pipeline import results  # noqa: E402
from pipeline.models import CLASS_NAMES, ExitClass, Status  # noqa: E402

START = ['@@@ HARNESS START variant=v date=2026-12-06T00:00:00Z',
         '[    0.000000] Linux version 6.12.0 (x@y) #1',
         '[    0.100000] Kernel command line: console=ttyS0 panic=-1',
         '[    0.200000] Run /init as init process',
         '@@@ READY release=6.12 uptime=1.0', '@@@ HARNESS READY-SEEN '
         'elapsed=2.0']
END = ['@@@ HARNESS SEND poweroff -f', '@@@ HARNESS QEMU-EXIT status=0',
       '@@@ HARNESS END elapsed=3']
PROGRAM = ['TAP version 13', '1..1', 'ok 1 t']


def suite(program=PROGRAM, rc=0, suite_rc=None, name='s'):
    """Suite NAME run by the harness: program p printed PROGRAM, ended
    with RC."""
    return ['@@@ HARNESS SEND run-suite %s' % name,
            '@@@ SUITE-BEGIN %s uptime=1.0' % name,
            '@@@ TEST-BEGIN %s/p uptime=1.0' % name] + program + [
        '@@@ TEST-END %s/p rc=%s uptime=2.0' % (name, rc),
        '@@@ SUITE-END %s rc=%s uptime=2.0' % (
            name, (0 if rc == 0 else 1) if suite_rc is None else suite_rc),
        '@@@ HARNESS SUITE-DONE suite=%s elapsed=2' % name]


def parse(lines, **kw):
    res = results.parse('\n'.join(lines) + '\n', **kw)
    return res, res.to_dict()


def why(r):
    return [(x['class'], x['reason']) for x in r['reasons']]


class Classes(unittest.TestCase):
    """One rule each: the class it gives and the reason it says."""

    def test_every_test_passed_or_skipped_is_class_0_without_reasons(self):
        res, r = parse(START + suite(['TAP version 13', '1..2', 'ok 1 a',
                                      'ok 2 b # SKIP no widget']) + END)
        self.assertEqual((0, 'pass', []),
                         (r['exit_class'], r['exit_class_name'], why(r)))
        self.assertIs(ExitClass.PASS, res.exit_class)

    def test_a_failed_test_is_class_1(self):
        _, r = parse(START + suite(['TAP version 13', '1..1', 'not ok 1 t'],
                                   rc=1) + END)
        self.assertEqual([(1, 'test s/p/t failed'),
                          (1, 'suite s ended rc=1'),
                          (1, 'program s/p exited rc=1')], why(r))

    def test_a_program_that_failed_after_passing_everything_is_class_1(self):
        _, r = parse(START + suite(rc=3, suite_rc=0) + END)
        self.assertEqual(['pass', 'fail'], [t['status'] for t in r['tests']])
        self.assertEqual('s/p/exit-status', r['tests'][1]['id'])
        self.assertEqual([(1, 'test s/p/exit-status failed'),
                          (1, 'program s/p exited rc=3')], why(r))

    def test_a_result_that_is_no_result_is_an_error_of_class_1(self):
        # the runner's own result never came, its program ended: the
        # nested tests stand, the runner's test is an error
        _, r = parse(START + suite(['TAP version 13', '1..1',
                                    '# selftests: t: prog', '# TAP version 13',
                                    '# 1..1', '# ok 1 a'], rc=0) + END)
        self.assertEqual([('s/p/prog', 'error', False), ('s/p/prog/a', 'pass',
                                                         False)],
                         [(t['id'], t['status'], t['missing'])
                          for t in r['tests']])
        self.assertEqual([(1, 'test s/p/prog: no result line for this test '
                           '(its output ended)')], why(r))

    def test_each_harness_stop_is_class_2_with_its_reason(self):
        for event, reason in (
                ('BOOT-TIMEOUT after=300', 'boot timeout after 300s'),
                ('SUITE-TIMEOUT suite=s after=40',
                 'suite s timed out after 40s'),
                ('SILENCE after=60', 'console silent for 60s'),
                ('FINAL-TIMEOUT after=120',
                 'the final command timed out after 120s'),
                ('POWEROFF-TIMEOUT after=60',
                 'QEMU did not end within 60s of poweroff -f'),
                ('INTERRUPTED signal=SIGTERM',
                 'the harness was interrupted (SIGTERM) and killed QEMU')):
            _, r = parse(START + suite() + [
                '@@@ HARNESS SEND poweroff -f', '@@@ HARNESS ' + event,
                '@@@ HARNESS QEMU-EXIT status=killed',
                '@@@ HARNESS END elapsed=9'])
            self.assertEqual([(2, reason)], why(r), event)

    def test_qemu_failing_on_its_own_is_class_2_a_stop_or_panic_explains_it(
            self):
        _, r = parse(START + suite() + END[:1] + [
            '@@@ HARNESS QEMU-EXIT status=1', '@@@ HARNESS END elapsed=3'])
        self.assertEqual([(2, 'QEMU exited with status 1 without a kernel '
                           'panic')], why(r))
        _, r = parse(START + suite() + END[:1] + [
            '@@@ HARNESS SILENCE after=60', '@@@ HARNESS QEMU-EXIT status=1',
            '@@@ HARNESS END elapsed=3'])
        self.assertEqual([(2, 'console silent for 60s')], why(r))

    def test_no_ready_marker_is_class_2(self):
        _, r = parse(START[:4] + ['@@@ HARNESS BOOT-TIMEOUT after=300',
                                  '@@@ HARNESS QEMU-EXIT status=killed',
                                  '@@@ HARNESS END elapsed=300'])
        self.assertEqual([(2, 'boot timeout after 300s'),
                          (2, 'no READY marker: the boot did not complete')],
                         why(r))
        self.assertIs(False, r['boot']['ready'])

    def test_a_panic_the_harness_saw_without_its_text_is_class_3(self):
        res, r = parse(START + suite() + ['@@@ HARNESS PANIC',
                                          '@@@ HARNESS QEMU-EXIT status=1',
                                          '@@@ HARNESS END elapsed=3'])
        self.assertEqual(3, res.exit_class)
        self.assertEqual([(3, 'kernel panic: @@@ HARNESS PANIC (panic text '
                           'not in the log)')], why(r))
        self.assertEqual(1, r['kernel_problems_total'])

    def test_the_class_is_the_highest_reason_listed_first(self):
        res, r = parse(START + suite(['TAP version 13', '1..1',
                                      'not ok 1 t'], rc=1) + [
            '[    2.500000] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x1',
            '[    2.500001] ---[ end trace 0000000000000000 ]---',
            '@@@ HARNESS SEND poweroff -f',
            '@@@ HARNESS POWEROFF-TIMEOUT after=60',
            '@@@ HARNESS QEMU-EXIT status=killed',
            '@@@ HARNESS END elapsed=70'])
        self.assertEqual(ExitClass.KERNEL_PROBLEM, res.exit_class)
        self.assertEqual([3, 2, 1, 1, 1], [c for c, _ in why(r)])
        self.assertEqual('kernel-problem', r['exit_class_name'])

    def test_a_run_that_never_booted_is_class_2_with_its_reason(self):
        res = results.failure_result('v', 'the kernel did not build',
                                     '/x/build.log')
        r = res.to_dict()
        self.assertEqual((2, [(2, 'the kernel did not build')], False,
                          '/x/build.log', []),
                         (r['exit_class'], why(r), r['booted'], r['log'],
                          r['tests']))
        self.assertIn('not booted', results.summary_line(res))


class Incomplete(unittest.TestCase):
    """Class 2 has two names (issue 43): 'incomplete', something planned
    has no outcome, and 'infrastructure', the machinery failed; both exit
    2, so nothing outside changes."""

    def test_a_suite_that_ran_no_program_is_incomplete(self):
        res, r = parse(START + ['@@@ HARNESS SEND run-suite s',
                                '@@@ SUITE-BEGIN s uptime=1.0',
                                '@@@ SUITE-END s rc=0 uptime=1.0',
                                '@@@ HARNESS SUITE-DONE suite=s elapsed=2']
                       + END)
        self.assertEqual((2, 'incomplete'),
                         (r['exit_class'], r['exit_class_name']))
        self.assertIs(ExitClass.INCOMPLETE, res.exit_class)
        self.assertEqual(2, int(res.exit_class))
        self.assertEqual(['incomplete'], [x.cls.label for x in res.reasons])

    def test_infrastructure_names_a_class_2_that_has_both(self):
        # (no READY: the machinery; the suite never began: incomplete)
        _, r = parse(START[:4] + ['@@@ HARNESS SEND run-suite s',
                                  '@@@ HARNESS BOOT-TIMEOUT after=5',
                                  '@@@ HARNESS QEMU-EXIT status=killed',
                                  '@@@ HARNESS END elapsed=5'])
        self.assertEqual((2, 'infrastructure'),
                         (r['exit_class'], r['exit_class_name']))

    def test_the_names_of_class_2(self):
        self.assertEqual(ExitClass.INFRASTRUCTURE, ExitClass.INCOMPLETE)
        self.assertIsNot(ExitClass.INFRASTRUCTURE, ExitClass.INCOMPLETE)
        self.assertEqual('incomplete', ExitClass.INCOMPLETE.label)
        self.assertIs(ExitClass.INFRASTRUCTURE, ExitClass(2))


class Models(unittest.TestCase):
    def test_the_classes_and_their_names(self):
        self.assertEqual({0: 'pass', 1: 'test-failure', 2: 'infrastructure',
                          3: 'kernel-problem'}, CLASS_NAMES)
        self.assertEqual(CLASS_NAMES, results.CLASS_NAMES)
        self.assertEqual(['pass', 'fail', 'skip', 'error', 'bench'],
                         [s.value for s in Status])

    def test_results_json_keeps_its_fields_and_their_order(self):
        # what summarize, compare, report and older results read: each
        # kind of result has the fields it always had, in that order
        _, r = parse(START + suite(['TAP version 13', '1..2', 'ok 1 a'],
                                   rc=0) + END)
        self.assertEqual(
            [['id', 'suite', 'program', 'name', 'number', 'status',
              'duration_ms', 'skip_reason', 'note', 'line', 'excerpt',
              'metrics'],
             ['id', 'suite', 'program', 'name', 'number', 'status',
              'missing', 'duration_ms', 'skip_reason', 'note', 'line',
              'excerpt', 'metrics', 'explained_by']],
            [list(t) for t in r['tests']])
        _, r = parse(START + suite(['TAP version 13', '1..2',
                                    '# selftests: t: prog', '# TAP version 13',
                                    '# 1..1', '# ok 1 a',
                                    'ok 1 selftests: t: prog']) + END)
        self.assertEqual(
            [['id', 'key', 'suite', 'program', 'name', 'number', 'status',
              'duration_ms', 'missing', 'skip_reason', 'note', 'line',
              'depth', 'junit_suite', 'excerpt', 'metrics'],
             ['id', 'key', 'suite', 'program', 'name', 'number', 'status',
              'missing', 'duration_ms', 'skip_reason', 'note', 'line',
              'junit_suite', 'excerpt', 'metrics', 'explained_by']],
            [list(t) for t in r['tests']])
        self.assertEqual(
            ['schema', 'log', 'variant', 'kernel_release', 'kernel_cmdline',
             'boot', 'duration_s', 'accel', 'exit_class', 'exit_class_name',
             'reasons', 'kernel_problems', 'kernel_problems_total', 'counts',
             'plan', 'checks', 'tests', 'suites', 'harness'], list(r))
        self.assertEqual(['pass', 'fail', 'skip', 'error', 'bench', 'total',
                          'flaky'], list(r['counts']))


if __name__ == '__main__':
    unittest.main()
