"""In-process unit tests of pipeline/results on recorded console logs:
kernel reports and the KTAP results, results.json, junit.xml and the .ktap
files, and the log's records (tests/unit/recorded.py: the logs and the
helpers). The harness's endings: test_results_endings.py; the accounting
against the boot's plan: test_results_plan.py.

Each test asserts concrete values: exit class, problem kinds, test
ids/statuses, and fields of results.json and junit.xml.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""

import os
import re
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recorded import (LOGS, PATTERNS, log_lines, parse,  # noqa: E402
                      parse_lines, kinds, junit, reasons, insert)
from pipeline import results  # noqa: E402


class RecordedLogs(unittest.TestCase):
    """Each recorded log, as the kernel printed it."""

    def test_clean_boot_with_a_passing_ktap_stream_class_0_and_every_field(
            self):
        res, r = parse('clean.log')
        self.assertEqual(0, res.exit_class)
        self.assertTrue(results.summary_line(res).startswith(
            'lkdtm: class 0 (pass) - boot 2.05s - 2 passed, 0 failed, '
            '1 skipped, 0 errors'))
        self.assertEqual('lkdtm', r['variant'])
        self.assertEqual('6.12.118-pipeline+', r['kernel_release'])
        self.assertEqual('pass', r['exit_class_name'])
        self.assertEqual(2.05, r['boot']['ready_uptime_s'])
        self.assertEqual(4.5, r['boot']['ready_elapsed_s'])
        self.assertEqual(5.3, r['duration_s'])
        # the command line carries panic=-1: no false panic
        self.assertIn('panic=-1', r['kernel_cmdline'])
        self.assertEqual([], r['kernel_problems'])
        self.assertEqual(['demo/basic/global.uname_is_linux',
                          'demo/basic/global.cpus_online',
                          'demo/basic/global.needs_nohz_full'],
                         [t['id'] for t in r['tests']])
        self.assertEqual(['pass', 'pass', 'skip'],
                         [t['status'] for t in r['tests']])
        self.assertEqual('nohz_full not on the command line',
                         r['tests'][2]['skip_reason'])
        self.assertEqual(10, r['tests'][0]['duration_ms'])
        # metrics from ksft_print_msg and from TH_LOG
        self.assertEqual({'release_len': 18}, r['tests'][0]['metrics'])
        self.assertEqual({'cpus': 2}, r['tests'][1]['metrics'])
        self.assertEqual('#  RUN           global.cpus_online ...',
                         r['tests'][1]['excerpt'].splitlines()[0])
        self.assertEqual('ok 2 global.cpus_online',
                         r['tests'][1]['excerpt'].splitlines()[-1])
        self.assertEqual([('demo', 0, True)],
                         [(s['name'], s['rc'], s['complete'])
                          for s in r['suites']])
        # junit: counts, one suite per suite plus harness
        t = junit(res)
        self.assertEqual(('4', '0', '0', '1'),
                         (t.get('tests'), t.get('failures'), t.get('errors'),
                          t.get('skipped')))
        self.assertEqual(['harness', 'demo'],
                         [s.get('name') for s in t.iter('testsuite')])
        # the suite's KTAP file, markers stripped
        with tempfile.TemporaryDirectory() as d:
            results.write_results(res, d)
            with open(os.path.join(d, 'demo.ktap'), encoding='utf-8') as f:
                ktap = f.read().splitlines()
        self.assertFalse([ln for ln in ktap if '@@@' in ln])
        self.assertIn('    ok 1 global.uname_is_linux', ktap)
        self.assertIn('ok 1 basic', ktap)

    def test_ktap_plan_with_missing_results_and_a_failing_test_class_1(self):
        # (the runner SIGKILLed: the missing ones are lost to the kill)
        res, r = parse('ktap-missing.log')
        self.assertEqual(1, res.exit_class)
        self.assertTrue(any('broken/killed/test-3: no result in the console '
                            'log (program exited rc=137)' in x
                            for x in reasons(r, 1)))
        self.assertEqual('', kinds(r))
        self.assertEqual(
            [('broken/fails/global.pid_is_positive', 'pass'),
             ('broken/fails/global.one_is_two', 'fail'),
             ('broken/killed/global.first_passes', 'pass'),
             ('broken/killed/global.second_kills_runner', 'error'),
             ('broken/killed/test-3', 'error')],
            [(t['id'], t['status']) for t in r['tests']])
        self.assertIs(True, r['tests'][3]['missing'])
        self.assertIn('rc=137', r['tests'][3]['note'])
        self.assertIn('Expected 2 (2) == one (1)', r['tests'][1]['excerpt'])
        self.assertEqual([('fails', 2, 2, 1), ('killed', 3, 1, 137)],
                         [(p['name'], p['plan'], p['results'], p['rc'])
                          for p in r['suites'][0]['programs']])
        t = junit(res)
        self.assertEqual(('6', '1', '2'), (t.get('tests'), t.get('failures'),
                                           t.get('errors')))
        self.assertEqual(['global.second_kills_runner', 'test-3'],
                         [c.get('name') for c in t.iter('testcase')
                          if c.find('error') is not None])

    def test_panic_from_sysrq_trigger_class_3_panic_with_its_text(self):
        res, r = parse('panic-sysrq.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('panic', kinds(r))
        p = r['kernel_problems'][0]
        self.assertEqual('Kernel panic - not syncing: sysrq triggered crash',
                         p['first_line'])
        self.assertEqual('lkdtm/trigger', p['during'])
        self.assertIn('sysrq_handle_crash', p['excerpt'])
        # the program died with the kernel: its result is missing, not
        # passed
        self.assertEqual([('error', ['panic'])],
                         [(t['status'], t['explained_by'])
                          for t in r['tests']])
        self.assertEqual(['Kernel panic - not syncing: sysrq triggered crash'],
                         [c.find('failure').get('message')
                          for c in junit(res).iter('testcase')
                          if c.get('classname') == 'kernel'])

    def test_panic_from_lkdtm_panic_class_3(self):
        res, r = parse('panic-lkdtm.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('panic', kinds(r))
        self.assertEqual('Kernel panic - not syncing: dumptest',
                         r['kernel_problems'][0]['first_line'])
        self.assertEqual(1, r['harness']['qemu_exit_status'])

    def test_oops_one_report_from_the_bug_line_to_end_trace(self):
        res, r = parse('oops.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('oops', kinds(r))
        self.assertEqual(1, r['kernel_problems_total'])
        p = r['kernel_problems'][0]
        self.assertEqual('BUG: kernel NULL pointer dereference, address: '
                         '0000000000000000', p['first_line'])
        self.assertIn('BUG: kernel NULL pointer dereference',
                      p['excerpt'].splitlines()[0])
        self.assertIn('Oops: Oops: 0002 [#1] SMP', p['excerpt'])
        self.assertTrue(p['excerpt'].splitlines()[-1].endswith(
            '---[ end trace 0000000000000000 ]---'))
        # KTAP lines the program printed in the middle of the splat stay
        # out of it
        self.assertNotIn('TAP version', p['excerpt'])
        self.assertEqual('lkdtm/trigger/lkdtm.EXCEPTION', r['tests'][0]['id'])
        self.assertEqual('error', r['tests'][0]['status'])

    def test_bug_kind_from_kernel_bug_at_excerpt_from_cut_here(self):
        res, r = parse('bug.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('bug', kinds(r))
        p = r['kernel_problems'][0]
        self.assertEqual('kernel BUG at drivers/misc/lkdtm/bugs.c:105!',
                         p['first_line'])
        self.assertTrue(p['excerpt'].splitlines()[0].endswith(
            '------------[ cut here ]------------'))
        self.assertIn('Oops: invalid opcode', p['excerpt'])
        self.assertEqual(['bug'], r['tests'][0]['explained_by'])

    def test_warning_fails_the_boot_although_every_test_passed(self):
        res, r = parse('warning.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('warning', kinds(r))
        self.assertEqual({'pass': 3, 'fail': 0, 'skip': 1, 'error': 0,
                          'bench': 0, 'total': 4, 'flaky': 0}, r['counts'])
        p = r['kernel_problems'][0]
        self.assertEqual('WARNING: CPU: 1 PID: 50 at drivers/misc/lkdtm/'
                         'bugs.c:112 lkdtm_WARNING+0xc/0xf', p['first_line'])
        self.assertEqual('lkdtm/trigger', p['during'])
        self.assertTrue(p['excerpt'].splitlines()[-1].endswith(
            '---[ end trace 0000000000000000 ]---'))
        self.assertNotIn('RUN', p['excerpt'])
        t = junit(res)
        self.assertEqual(['warning'], [c.get('name')
                                       for c in t.iter('testcase')
                                       if c.get('classname') == 'kernel'])
        self.assertEqual('1', t.get('failures'))

    def test_ubsan_kernel_text_cut_into_a_ktap_plan_line(self):
        res, r = parse('ubsan.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('ubsan', kinds(r))
        p = r['kernel_problems'][0]
        self.assertRegex(p['first_line'], r'^UBSAN: array-index-out-of-'
                         r'bounds in .*lkdtm/bugs\.c:406:16$')
        # "1..1[    3.130472] index 8 ..." in the log: the plan is found
        self.assertEqual(1, r['suites'][0]['programs'][0]['plan'])
        self.assertIn("index 8 is out of range for type 'char [8]'",
                      p['excerpt'])
        self.assertEqual([('lkdtm/trigger/lkdtm.ARRAY_BOUNDS', 'pass')],
                         [(t['id'], t['status']) for t in r['tests']])

    def test_kfence_use_after_free_excerpt_framed_by_the_lines(self):
        res, r = parse('kfence.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('kfence', kinds(r))
        p = r['kernel_problems'][0]
        self.assertTrue(p['first_line'].startswith(
            'BUG: KFENCE: use-after-free read in '
            'lkdtm_KFENCE_READ_AFTER_FREE'))
        self.assertIn('==================', p['excerpt'].splitlines()[0])
        self.assertIn('==================', p['excerpt'].splitlines()[-1])

    def test_soft_lockup_with_rcu_stalls_and_a_suite_timeout_3_beats_2(self):
        res, r = parse('softlockup.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('rcu-stall,soft-lockup', kinds(r))
        self.assertEqual('watchdog: BUG: soft lockup - CPU#0 stuck for 12s! '
                         '[trigger:50]', r['kernel_problems'][1]['first_line'])
        self.assertEqual('lkdtm/trigger/lkdtm.SOFTLOCKUP',
                         r['kernel_problems'][0]['during'])
        self.assertTrue(r['kernel_problems'][0]['excerpt'].splitlines()[-1]
                        .endswith('</TASK>'))
        self.assertTrue(any('suite lkdtm timed out after 40s' in x
                            for x in reasons(r, 2)))
        self.assertIs(True, r['suites'][0]['timed_out'])

    def test_hung_task_attributed_to_the_running_test(self):
        res, r = parse('hung-task.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('hung-task', kinds(r))
        p = r['kernel_problems'][0]
        self.assertEqual('INFO: task trigger:49 blocked for more than 3 '
                         'seconds.', p['first_line'])
        self.assertEqual('lkdtm/trigger/lkdtm.HUNG_TASK', p['during'])
        self.assertEqual('error', r['tests'][0]['status'])

    def test_kasan_slab_use_after_free(self):
        res, r = parse('kasan.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('kasan', kinds(r))
        p = r['kernel_problems'][0]
        self.assertTrue(p['first_line'].startswith(
            'BUG: KASAN: slab-use-after-free in lkdtm_READ_AFTER_FREE'))
        self.assertIn('Freed by task', p['excerpt'])
        self.assertIn('==================', p['excerpt'].splitlines()[-1])

    def test_kasan_double_free(self):
        res, r = parse('kasan-double-free.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('kasan', kinds(r))
        self.assertTrue(r['kernel_problems'][0]['first_line'].startswith(
            'BUG: KASAN: double-free in '))

    def test_lockdep_lock_held_returning_to_user_space_then_atomic_sleep(
            self):
        # (LKDTM SPINLOCKUP)
        res, r = parse('lockdep.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('lockdep,atomic-sleep', kinds(r))
        self.assertEqual(
            ['WARNING: lock held when returning to user space!',
             'BUG: sleeping function called from invalid context at '
             'fs/file_table.c:452',
             'BUG: scheduling while atomic: trigger/47/0x00000002'],
            [p['first_line'] for p in r['kernel_problems']])
        # the lockdep report prints no stack: it must stop before the next
        # one
        first = r['kernel_problems'][0]['excerpt'].splitlines()
        self.assertEqual(7, len(first))
        self.assertTrue(first[0].endswith(
            '================================================'))
        # tests after it still pass, the boot still fails
        self.assertEqual(3, r['counts']['pass'])

    def test_lockdep_circular_locking_dependency(self):
        # (mutex ABBA)
        res, r = parse('lockdep-circular.log', variant='debug-x')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('lockdep', kinds(r))
        self.assertEqual(1, r['kernel_problems_total'])
        p = r['kernel_problems'][0]
        self.assertEqual('WARNING: possible circular locking dependency '
                         'detected', p['first_line'])
        self.assertIn('*** DEADLOCK ***', p['excerpt'])
        self.assertTrue(p['excerpt'].splitlines()[-1].endswith('</TASK>'))
        self.assertEqual('debug-x', r['variant'])

    def test_suspicious_rcu_usage_kind_lockdep(self):
        res, r = parse('rcu-suspicious.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('lockdep', kinds(r))
        p = r['kernel_problems'][0]
        self.assertEqual('WARNING: suspicious RCU usage', p['first_line'])
        self.assertIn('suspicious rcu_dereference_check() usage!',
                      p['excerpt'])

    def test_sleeping_in_atomic_context_atomic_sleep(self):
        # (preempt_disable + msleep)
        res, r = parse('atomic-sleep.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('atomic-sleep,lockdep', kinds(r))
        self.assertEqual('BUG: scheduling while atomic: trigger/49/'
                         '0x00000002', r['kernel_problems'][0]['first_line'])

    def test_kmemleak_and_a_ktap_version_line_cut_by_kernel_text(self):
        res, r = parse('kmemleak.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('kmemleak', kinds(r))
        p = r['kernel_problems'][0]
        self.assertEqual('kmemleak: 1 new suspected memory leaks (see '
                         '/sys/kernel/debug/kmemleak)', p['first_line'])
        self.assertEqual('shell', p['during'])
        # "TAP version 13[    3.489491] lkdtm: ..." in the log
        self.assertEqual('TAP version 13',
                         r['suites'][0]['programs'][0]['ktap'][0])
        self.assertEqual([('lkdtm/trigger/lkdtm.KMEMLEAK', 'pass')],
                         [(t['id'], t['status']) for t in r['tests']])

    def test_kernel_text_interleaved_in_marker_lines_markers_still_parsed(
            self):
        res, r = parse('interleaved.log')
        self.assertEqual(0, res.exit_class)
        self.assertEqual({'pass': 16, 'fail': 0, 'skip': 8, 'error': 0,
                          'bench': 0, 'total': 24, 'flaky': 0}, r['counts'])
        self.assertEqual(8, len(r['suites']))
        self.assertTrue(all(s['complete'] and s['rc'] == 0
                            for s in r['suites']))
        self.assertTrue(all(p['complete'] and p['rc'] == 0
                            for s in r['suites'] for p in s['programs']))
        self.assertEqual(24, len(set(t['id'] for t in r['tests'])))
        # the 8 runs of suite demo share one KTAP file
        with tempfile.TemporaryDirectory() as d:
            results.write_results(res, d)
            with open(os.path.join(d, 'demo.ktap'), encoding='utf-8') as f:
                ktap = f.read().splitlines()
        self.assertEqual(8, sum(1 for ln in ktap
                                if re.match(r'^ok [0-9]* basic$', ln)))
        self.assertEqual('1..8', ktap[2])

    def test_truncated_log_cut_inside_a_ktap_line_missing_are_errors(self):
        res, r = parse('truncated.log')
        self.assertEqual(2, res.exit_class)
        self.assertEqual([('global.uname_is_linux', 'pass'),
                          ('global.cpus_online', 'error'),
                          ('test-3', 'error')],
                         [(t['name'], t['status']) for t in r['tests']])
        self.assertTrue(any('log truncated' in x['reason']
                            for x in r['reasons']))
        self.assertIs(False, r['suites'][0]['complete'])

    def test_truncated_log_cut_inside_an_oops_class_3_partial_splat(self):
        res, r = parse('truncated-oops.log')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('oops', kinds(r))
        self.assertTrue(r['kernel_problems'][0]['excerpt'].splitlines()[-1]
                        .endswith('direc'))

    def test_log_without_markers_test_binary_as_init_ktap_and_panic(self):
        res, r = parse('no-markers.log', variant='raw')
        self.assertEqual(3, res.exit_class)
        self.assertEqual('raw', r['variant'])
        self.assertIs(False, r['boot']['ready'])
        self.assertEqual('panic', kinds(r))
        self.assertEqual('Kernel panic - not syncing: Attempted to kill '
                         'init! exitcode=0x00000000',
                         r['kernel_problems'][0]['first_line'])
        self.assertEqual(
            [('ktap/program1/global.uname_is_linux', 'pass'),
             ('ktap/program1/global.cpus_online', 'pass'),
             ('ktap/program1/global.needs_nohz_full', 'skip')],
            [(t['id'], t['status']) for t in r['tests']])

    def test_no_false_positives(self):
        # panic_on_warn/oops=panic on the command line, failure text from
        # user space and in test names
        res, r = parse('false-positives.log')
        self.assertEqual(0, res.exit_class)
        self.assertEqual([], r['kernel_problems'])
        self.assertIn('panic_on_warn=1 oops=panic', r['kernel_cmdline'])
        self.assertEqual(['global.kernel_BUG_at_is_only_a_name',
                          'global.WARNING_in_a_name'],
                         [t['name'] for t in r['tests']])
        # the same log is still parsed for real problems: proof the scan
        # ran
        self.assertTrue(any('Kernel panic - not syncing: userspace text' in ln
                            for ln in log_lines('false-positives.log')))

    def test_a_debug_checker_that_turned_itself_off_is_a_kernel_problem(
            self):
        # (kmemleak disabled, lockdep off) clean.log with the kernel's own
        # lines inserted before the suite
        for line in ('[    2.600000] kmemleak: Kernel memory leak detector '
                     'disabled',
                     '[    2.600000] turning off the locking correctness '
                     'validator.'):
            res, r = parse_lines(insert(log_lines('clean.log'),
                                        '^@@@ HARNESS SEND run-suite demo',
                                        [line]))
            self.assertEqual(3, res.exit_class)
            self.assertEqual(line.split('] ', 1)[1],
                             r['kernel_problems'][0]['first_line'])
        self.assertEqual('lockdep', kinds(r))
        self.assertEqual(2, r['counts']['pass'])

    def test_every_recorded_log_is_classified_and_its_junit_parses(self):
        # what parse-console --out does with each log (its options and exit
        # status stay in tests/tooling/parse-console.bats); a log stays
        # under 200 KiB so that the fixtures stay reviewable
        names = sorted(n for n in os.listdir(LOGS) if n.endswith('.log'))
        self.assertGreater(len(names), 20)
        with tempfile.TemporaryDirectory() as tmp:
            for name in names:
                with self.subTest(log=name):
                    path = os.path.join(LOGS, name)
                    res = results.parse(results.read_log(path), PATTERNS,
                                        log_path=os.path.abspath(path))
                    out = os.path.join(tmp, name[:-len('.log')])
                    results.write_results(res, out)
                    self.assertLessEqual(int(res.exit_class), 3)
                    ET.parse(os.path.join(out, 'junit.xml'))
                    self.assertLess(os.path.getsize(path), 204800)


class Records(unittest.TestCase):
    def test_split_records_a_user_line_cut_mid_text_is_rejoined(self):
        # The join rule alone. The recorded logs only show kernel text
        # landing before a user line's newline ("1..1[ 3.13] index 8 ..."
        # in ubsan.log); a program writing a partial line can be cut
        # anywhere.
        t = ('@@@ TEST-E[    5.000001] WARNING: CPU: 0 PID: 1 at x.c:1 '
             'f+0x0/0x1\n'
             'ND s/p rc=0 uptime=5.1\n'
             'ok 1 glo[    5.000002] ---[ end trace 0000000000000000 ]---\n'
             'bal.x\n'
             'abc@@@ SUITE-END s rc=0 uptime=5.2\n'
             'guest:/# @@@ HARNESS SEND poweroff -f\n')
        # a guest marker counts only as a whole line at column 0 (ktap-run
        # ends a program's last line, so run-suite's never follow one); the
        # harness's own line can follow the shell's prompt
        self.assertEqual(
            [(1, 'k', '[    5.000001] WARNING: CPU: 0 PID: 1 at x.c:1 '
              'f+0x0/0x1'),
             (1, 'u', '@@@ TEST-END s/p rc=0 uptime=5.1'),
             (3, 'k', '[    5.000002] ---[ end trace 0000000000000000 ]---'),
             (3, 'u', 'ok 1 global.x'),
             (5, 'u', 'abc@@@ SUITE-END s rc=0 uptime=5.2'),
             (6, 'u', 'guest:/# '),
             (6, 'u', '@@@ HARNESS SEND poweroff -f')],
            results.split_records(t))




if __name__ == '__main__':
    unittest.main()
