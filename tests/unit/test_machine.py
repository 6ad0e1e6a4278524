"""In-process unit tests of a run on a real machine (pipeline/machine.py,
the `kernel-pipeline-tests` command of the tests package): its console log
is read by the one parser, whose verdict rules hold for it as for a QEMU
boot (a machine has no poweroff; its last step is the END line), the
kernel log's records as console lines, and a whole run of a tiny package
on this host (run-suite and its programs as real processes, no mounts,
the kernel log from a file).

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import io
import json
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.path.insert(0, TOP)
from pipeline import machine, protocol, results  # noqa: E402
from pipeline.cli import machine as command  # noqa: E402

START = ['@@@ HARNESS START variant=v date=2026-12-06T00:00:00Z',
         '@@@ HARNESS ACCEL machine no QEMU: kernel-pipeline-tests on m',
         '[    0.100000] Kernel command line: isolcpus=1 nohz_full=1',
         '@@@ READY release=6.12 uptime=100.0',
         '@@@ HARNESS READY-SEEN elapsed=0.1']
SUITE = ['@@@ HARNESS SEND run-suite s',
         '@@@ SUITE-BEGIN s uptime=100.1',
         '@@@ TEST-BEGIN s/p uptime=100.1',
         'TAP version 13', '1..1', 'ok 1 t',
         '@@@ TEST-END s/p rc=0 uptime=100.2',
         '@@@ SUITE-END s rc=0 uptime=100.2',
         '@@@ HARNESS SUITE-DONE suite=s elapsed=0.3']


def parse(lines):
    return results.parse('\n'.join(lines) + '\n').to_dict()


def why(r):
    return [(x['class'], x['reason']) for x in r['reasons']]


class Verdict(unittest.TestCase):
    """The parser's rules on a machine's log: the same classes."""

    def test_a_machine_run_ends_with_END_and_no_poweroff_is_class_0(self):
        r = parse(START + SUITE + ['@@@ HARNESS END elapsed=1.0'])
        self.assertEqual((0, []), (r['exit_class'], why(r)))
        self.assertEqual('machine', r['accel']['name'])
        self.assertEqual('isolcpus=1 nohz_full=1', r['kernel_cmdline'])

    def test_a_machine_run_without_its_END_is_truncated_class_2(self):
        r = parse(START + SUITE)
        self.assertEqual(2, r['exit_class'])
        self.assertIn('log truncated', why(r)[0][1])

    def test_a_QEMU_boot_still_needs_its_poweroff(self):
        lines = [x for x in START if 'ACCEL' not in x] + SUITE + [
            '@@@ HARNESS QEMU-EXIT status=0', '@@@ HARNESS END elapsed=1']
        r = parse(lines)
        self.assertEqual(2, r['exit_class'])
        self.assertIn('never sent poweroff', why(r)[0][1])

    def test_a_kernel_report_from_the_kernel_log_is_class_3(self):
        warn = machine.kmsg_line('4,900,101000000,-;WARNING: CPU: 1 PID: 7 '
                                 'at kernel/sched/core.c:1 f+0x1/0x2')
        r = parse(START + SUITE[:5] + [warn] + SUITE[5:] +
                  ['@@@ HARNESS END elapsed=1.0'])
        self.assertEqual(3, r['exit_class'])


class KernelLog(unittest.TestCase):
    def test_a_record_becomes_a_console_line_with_its_time(self):
        self.assertEqual('[    5.000012] hello',
                         machine.kmsg_line('6,12,5000012,-;hello'))
        self.assertEqual('[12345.678901] a;b',
                         machine.kmsg_line('6,1,12345678901,c;a;b\n'))

    def test_continuation_and_malformed_records_are_no_line(self):
        self.assertIsNone(machine.kmsg_line(' SUBSYSTEM=pci'))
        self.assertIsNone(machine.kmsg_line('no header'))


def fake_package(root, programs, final=''):
    """A tests package's tree under ROOT: the runner of guest-tests/runner
    (ktap-run: the tooling fake that only runs the program), suite s with
    PROGRAMS {name: shell text}, its variant.json and config."""
    os.makedirs(os.path.join(root, 'bin'))
    for f, src in (('run-suite', 'guest-tests/runner/run-suite'),
                   ('debug-checks', 'guest-tests/runner/debug-checks'),
                   ('ready', 'guest-tests/runner/ready'),
                   ('ktap-run', 'tests/fixtures/fakes/ktap-run')):
        shutil.copy(os.path.join(TOP, src), os.path.join(root, 'bin', f))
    tests = {}
    d = os.path.join(root, 'tests', 's')
    os.makedirs(d)
    for name, text in programs.items():
        with open(os.path.join(d, name), 'w', encoding='utf-8') as f:
            f.write('#!/bin/sh\n' + text)
        os.chmod(os.path.join(d, name), 0o755)
        tests[name] = ['t']
    art = os.path.join(root, 'artifacts', 'v')
    os.makedirs(art)
    with open(os.path.join(art, 'config'), 'w', encoding='utf-8') as f:
        f.write('CONFIG_X=y\n')
    v = {'format': 'kernel-pipeline-variant/1', 'variant': 'v',
         'kernel': {'variant': 'v', 'release': '6.12.0-v'},
         'params': {'suites': ['s'], 'package_suites': ['s'],
                    'timeout_scale': 1, 'final': final, 'cmdline': ''},
         'suites': {'s': {'timeout': 20, 'silence': 0,
                          'programs': sorted(programs), 'tests': tests}}}
    with open(os.path.join(art, 'variant.json'), 'w',
              encoding='utf-8') as f:
        json.dump(v, f)
    with open(os.path.join(root, 'package.json'), 'w',
              encoding='utf-8') as f:
        json.dump({'format': 'kernel-pipeline-tests/1', 'variant': 'v',
                   'version': '1.0+kp.0-1', 'release': '6.12.0-v'}, f)


class Run(unittest.TestCase):
    """A whole run of a tiny package: run-suite is the guest's own."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.root = os.path.join(self.tmp, 'pkg')
        self.out = os.path.join(self.tmp, 'out')
        self.kmsg = os.path.join(self.tmp, 'kmsg')
        with open(self.kmsg, 'w', encoding='utf-8') as f:
            f.write('6,1,100000,-;Linux version 6.12.0-v\n'
                    '6,2,200000,-;Kernel command line: nohz_full=1\n')

    def run_it(self, *args):
        out = io.StringIO()
        rc = command.main(['--out', self.out, '--no-setup', '--kmsg',
                           self.kmsg] + list(args), root=self.root,
                          stdout=out)
        return rc, out.getvalue()

    def test_its_harness_lines_are_the_protocol_s(self):
        # (the QEMU harness's: tests/tooling/harness-fake.bats)
        fake_package(self.root, {'p': 'printf "TAP version 13\\n1..1\\n'
                                      'ok 1 t\\n"\n'}, final='true')
        for args in ((), ('--timeout-scale', '0.01')):
            _, text = self.run_it(*args)
            lines = [ln for ln in text.splitlines()
                     if ln.startswith(protocol.PREFIX)]
            self.assertIn('@@@ HARNESS END', '\n'.join(lines))
            self.assertEqual([], [protocol.check(ln) for ln in lines
                                  if protocol.check(ln)])

    def test_a_passing_suite_writes_the_results_a_QEMU_run_writes(self):
        fake_package(self.root, {'p': 'printf "TAP version 13\\n1..1\\n'
                                      'ok 1 t\\n"\n'})
        rc, text = self.run_it()
        self.assertEqual(0, rc, text)
        d = os.path.join(self.out, 'v')
        for f in ('console.log', 'plan.json', 'results.json', 'junit.xml',
                  's.ktap'):
            self.assertTrue(os.path.isfile(os.path.join(d, f)), f)
        with open(os.path.join(d, 'results.json'), encoding='utf-8') as f:
            r = json.load(f)
        self.assertEqual(('v', 0, 1), (r['variant'], r['exit_class'],
                                        r['counts']['pass']))
        self.assertEqual('machine', r['accel']['name'])
        self.assertEqual('nohz_full=1', r['kernel_cmdline'])
        # the parser again on the saved log (make parse) says the same
        with open(os.path.join(d, 'console.log'), encoding='utf-8') as f:
            log = f.read()
        with open(os.path.join(d, 'plan.json'), encoding='utf-8') as f:
            plan = json.load(f)
        self.assertEqual(0, results.parse(log, plan=plan).exit_class)
        self.assertIn('@@@ HARNESS SEND run-suite s', log)
        self.assertIn('ok 1 t', text)

    def test_a_kernel_log_that_cannot_be_read_is_class_2(self):
        # (issue 42: the only trace was a comment, and the run class 0;
        # kernel reports are seen only there)
        fake_package(self.root, {'p': 'printf "TAP version 13\\n1..1\\n'
                                      'ok 1 t\\n"\n'})
        self.kmsg = os.path.join(self.tmp, 'no-such-kmsg')
        rc, text = self.run_it()
        self.assertEqual(2, rc, text)
        with open(os.path.join(self.out, 'v', 'results.json'),
                  encoding='utf-8') as f:
            r = json.load(f)
        self.assertEqual(['the kernel log cannot be read (%s: No such file '
                          'or directory): kernel reports would go unseen'
                          % self.kmsg], [x['reason'] for x in r['reasons']])

    def test_a_failing_program_is_class_1(self):
        fake_package(self.root, {'p': 'printf "TAP version 13\\n1..1\\n'
                                      'not ok 1 t\\n"\nexit 1\n'})
        rc, _ = self.run_it()
        self.assertEqual(1, rc)

    def test_a_planned_test_that_never_printed_is_class_2(self):
        fake_package(self.root, {'p': 'echo "TAP version 13"\n'})
        rc, _ = self.run_it()
        self.assertEqual(2, rc)

    def test_tests_globs_select_and_an_unknown_suite_is_refused(self):
        fake_package(self.root, {'p': 'printf "TAP version 13\\n1..1\\n'
                                      'ok 1 t\\n"\n',
                                 'q': 'exit 9\n'})
        rc, text = self.run_it('--tests', 's/p')
        self.assertEqual(0, rc, text)
        # (its error goes to stderr: kept out of unittest's result line,
        # which scripts/run-tests reads)
        with contextlib.redirect_stderr(io.StringIO()):
            rc, text = self.run_it('--suites', 'nosuch')
        self.assertEqual(2, rc)

    def test_a_suite_past_its_timeout_is_stopped_class_2(self):
        fake_package(self.root, {'p': 'sleep 30\n'})
        rc, _ = self.run_it('--timeout-scale', '0.05')
        self.assertEqual(2, rc)
        with open(os.path.join(self.out, 'v', 'results.json'),
                  encoding='utf-8') as f:
            r = json.load(f)
        self.assertIn('suite s timed out after 1s',
                      [x['reason'] for x in r['reasons']])


if __name__ == '__main__':
    unittest.main()
