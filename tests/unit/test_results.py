"""In-process unit tests of pipeline/results on recorded console logs:
kernel reports, the KTAP results, the harness's endings and the accounting
against the boot's plan, results.json, junit.xml and the .ktap files.

Every log under tests/fixtures/console-logs/ is genuine serial console
output of a real kernel booted in QEMU (its README.md says how each was
made), some edited here the way a broken guest would have printed them;
the plans are what scripts/pipeline boot plan --plan-out wrote for those runs.
Each test asserts concrete values: exit class, problem kinds, test
ids/statuses, and fields of results.json and junit.xml. (Moved from
tests/tooling/parse-console.bats, where each was a parse-console process
and a python3 process per assertion; parse-console's own options stay
there.)

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import contextlib
import io
import json
import os
import re
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True
TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.path.insert(0, TOP)
from pipeline import cli, results  # noqa: E402

LOGS = os.path.join(TOP, 'tests', 'fixtures', 'console-logs')
PATTERNS = results.load_patterns()


def log_lines(name):
    """The recorded log NAME as lines (a final '' when it ends with a
    newline), split as sed splits them: at newlines only."""
    return results.read_log(os.path.join(LOGS, name)).split('\n')


def parse_text(text, plan=None, **kw):
    return results.parse(text, PATTERNS, plan=plan, **kw)


def parse(name, plan=None, **kw):
    """NAME's BootResult, and its results.json as a dict."""
    res = parse_text(results.read_log(os.path.join(LOGS, name)), plan, **kw)
    return res, res.to_dict()


def parse_lines(lines, plan=None, **kw):
    res = parse_text('\n'.join(lines), plan, **kw)
    return res, res.to_dict()


def plan_of(name):
    return results.read_plan(os.path.join(LOGS, name))


def kinds(r):
    return ','.join(dict.fromkeys(p['kind'] for p in r['kernel_problems']))


def junit(res):
    return results.junit_tree(res).getroot()


def reasons(r, cls):
    return [x['reason'] for x in r['reasons'] if x['class'] == cls]


def insert(lines, pattern, new, after=False):
    """sed's /PATTERN/i (or a) NEW: the lines NEW before (after) every
    line matching PATTERN."""
    out = []
    for ln in lines:
        if re.search(pattern, ln):
            out.extend([ln] + new if after else new + [ln])
        else:
            out.append(ln)
    return out


def delete(lines, pattern, end=None, keep=None):
    """sed's /PATTERN/d, or /PATTERN/,/END/d; KEEP: the lines of the range
    that stay (sed's {/KEEP/!d})."""
    out = []
    inside = False
    for ln in lines:
        if inside:
            if re.search(end, ln):
                inside = False
            if keep and re.search(keep, ln):
                out.append(ln)
            continue
        if re.search(pattern, ln):
            inside = end is not None
            if keep and re.search(keep, ln):
                out.append(ln)
            continue
        out.append(ln)
    return out


def upto(lines, pattern):
    """sed -n '1,/PATTERN/p': the lines up to the first one after the
    first that matches PATTERN."""
    for i, ln in enumerate(lines[1:], 1):
        if re.search(pattern, ln):
            return lines[:i + 1]
    raise AssertionError('no line matches %r' % pattern)


def mini(rc, ktap):
    """A run of one suite k whose program p printed KTAP and exited RC,
    framed as run-suite and the harness frame it."""
    return ['@@@ HARNESS START variant=v date=x',
            '@@@ READY release=x uptime=1',
            '@@@ HARNESS SEND run-suite k', '@@@ SUITE-BEGIN k uptime=1',
            '@@@ TEST-BEGIN k/p uptime=1'] + ktap + [
        '@@@ TEST-END k/p rc=%s uptime=2' % rc,
        '@@@ SUITE-END k rc=%s uptime=2' % (0 if rc == 0 else 1),
        '@@@ HARNESS SEND poweroff -f', '@@@ HARNESS QEMU-EXIT status=0',
        '@@@ HARNESS END elapsed=3', '']


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


def checks(kmemleak, lockdep, panic_on_warn, kmemleak_detail=None):
    """The output of runner/debug-checks where the recorded run's final
    command (the older kmemleak-scan) printed its report."""
    return ['@@@ CHECK kmemleak %s %s' % (kmemleak,
                                          kmemleak_detail or
                                          'two scans done'),
            '@@@ CHECK lockdep %s debug_locks=%s' % (
                lockdep, 1 if lockdep == 'on' else 0),
            '@@@ CHECK panic_on_warn %s panic_on_warn=1' % panic_on_warn]


def prefixes(texts):
    return [x.split(':')[0] for x in texts]


class Plan(unittest.TestCase):
    """Every planned program, test and debug checker is accounted for."""

    def test_a_recorded_isolated_run_holds_against_its_plan(self):
        res, r = parse('isolated.log', plan_of('isolated.plan.json'))
        self.assertEqual(0, res.exit_class)
        self.assertEqual(['abi', 'cost', 'effect', 'lifetime', 'off',
                          'sample', 'stress', 'sysfs'],
                         r['plan']['suites'][1]['programs'])
        self.assertEqual([], r['plan']['unplanned'])
        self.assertEqual({'pass': 28, 'fail': 0, 'skip': 4, 'error': 0,
                          'bench': 0, 'total': 32, 'flaky': 0}, r['counts'])

    def sample_deleted(self, keep_markers=True):
        return delete(log_lines('isolated.log'),
                      '^@@@ TEST-BEGIN isolation/sample',
                      '^@@@ TEST-END isolation/sample',
                      '^@@@ TEST-' if keep_markers else None)

    def test_a_program_that_exited_0_without_a_result_is_class_2(self):
        # (kunit.py: 0 tests run)
        res, r = parse_lines(self.sample_deleted(),
                             plan_of('isolated.plan.json'))
        self.assertEqual(2, res.exit_class)
        self.assertEqual(['test isolation/sample/sample: no result in the '
                          'console log: the program exited rc=0 without '
                          'printing a KTAP result line'], reasons(r, 2))
        self.assertEqual(['error'], [t['status'] for t in r['tests']
                                     if t['program'] == 'sample'])

    def test_a_program_that_is_not_executable_is_class_2_naming_it(self):
        # (run-suite no longer skips it)
        lines = []
        for ln in self.sample_deleted():
            if ln.startswith('@@@ TEST-END isolation/sample rc=0'):
                lines += ['# run-suite: isolation/sample is not executable: '
                          'it cannot run',
                          ln.replace('rc=0', 'rc=126', 1)]
            else:
                lines.append(ln)
        res, r = parse_lines(lines, plan_of('isolated.plan.json'))
        self.assertEqual(2, res.exit_class)
        self.assertEqual(['test isolation/sample/sample: no result in the '
                          'console log (program exited rc=126)'],
                         reasons(r, 2))
        self.assertIn('program isolation/sample exited rc=126',
                      reasons(r, 1))
        self.assertTrue(any('is not executable' in t['excerpt']
                            for t in r['tests'] if t['program'] == 'sample'))

    def test_a_planned_program_that_never_began_is_class_2_with_the_plan(
            self):
        # the same log passed without one
        lines = self.sample_deleted(keep_markers=False)
        res, r = parse_lines(lines)
        self.assertEqual(0, res.exit_class)
        res, r = parse_lines(lines, plan_of('isolated.plan.json'))
        self.assertEqual(2, res.exit_class)
        self.assertEqual(['test isolation/sample: planned but never began; '
                          'the console stopped at line 466: [   27.408080] '
                          'reboot: Power down'], reasons(r, 2))
        self.assertEqual([('isolation/sample', 'error', True)],
                         [(t['id'], t['status'], t['missing'])
                          for t in r['tests'] if t['program'] == 'sample'])

    def test_a_program_that_ran_but_was_not_planned_is_class_2(self):
        p = plan_of('isolated.plan.json')
        p['suites'][1]['programs'].remove('sample')
        res, r = parse('isolated.log', p)
        self.assertEqual(2, res.exit_class)
        self.assertEqual(['program isolation/sample ran but was not planned '
                          '(the initramfs and variant.json disagree)'],
                         reasons(r, 2))
        self.assertEqual(['isolation/sample'], r['plan']['unplanned'])
        # a plan that is not one is refused (parse-console: exit 2)
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, 'bad.json')
            with open(bad, 'w', encoding='utf-8') as f:
                f.write('{"suites": []}\n')
            with self.assertRaisesRegex(OSError, 'bad.json is not a plan '
                                        r'\(kernel-pipeline-plan/1\)'):
                results.read_plan(bad)

    def test_a_kselftest_test_that_never_printed_top_or_nested_is_class_2(
            self):
        res, r = parse('default-kselftest-prctl.log')
        self.assertEqual(0, res.exit_class)
        self.assertEqual({'pass': 3, 'fail': 0, 'skip': 2, 'error': 0,
                          'bench': 0, 'total': 5, 'flaky': 0}, r['counts'])
        res, r = parse_lines(delete(
            log_lines('default-kselftest-prctl.log'),
            '^ok 1 selftests: prctl: disable-tsc-test'))
        self.assertEqual(2, res.exit_class)
        self.assertEqual(['test kselftest/prctl/missing-results: 1 of 5 '
                          'results the runner announced never came'],
                         reasons(r, 2))
        # its "ok" stays, but the test inside it never printed: untested,
        # not passed
        res, r = parse_lines(delete(
            log_lines('default-kselftest-prctl.log'), '^# ok 1 vma.renaming'))
        self.assertEqual(2, res.exit_class)
        self.assertEqual(['test kselftest/prctl/set-anon-vma-name-test: 1 '
                          'planned subtests never reported'], reasons(r, 2))

    def test_debug_checkers_unreported_off_or_kasan_never_initialized(self):
        plan = plan_of('debug.plan.json')
        unreported = ['debug checker kmemleak was not reported',
                      'debug checker lockdep was not reported',
                      'debug checker panic_on_warn was not reported']
        # the recorded run predates debug-checks: nothing says they
        # stayed on
        res, r = parse('debug.log', plan)
        self.assertEqual(2, res.exit_class)
        self.assertEqual(unreported, prefixes(reasons(r, 2)))
        self.assertIn("debug checker lockdep was not reported: the final "
                      "command 'kmemleak-scan' ended (line 900) without a "
                      "@@@ CHECK lockdep line", reasons(r, 2))
        done = '^# kmemleak-scan: done'
        debug = log_lines('debug.log')
        res, r = parse_lines(insert(debug, done, checks('on', 'on', 'on'),
                                    after=True), plan)
        self.assertEqual(0, res.exit_class)
        self.assertEqual('debug_locks=1', r['checks']['lockdep']['detail'])
        res, r = parse_lines(insert(debug, done, checks(
            'off', 'on', 'on', '/sys/kernel/debug/kmemleak refuses a scan '
            '(kmemleak disabled itself)'), after=True), plan)
        self.assertEqual(2, res.exit_class)
        self.assertEqual(1, len(reasons(r, 2)))
        self.assertRegex(reasons(r, 2)[0], r'^debug checker kmemleak is off: '
                         r'/sys/kernel/debug/kmemleak refuses a scan '
                         r'\(kmemleak disabled itself\) \(line .*\)$')
        res, r = parse_lines(insert(debug, done, checks('on', 'off', 'on'),
                                    after=True), plan)
        self.assertEqual(2, res.exit_class)
        self.assertEqual(1, len(reasons(r, 2)))
        self.assertRegex(reasons(r, 2)[0], r'^debug checker lockdep is off: '
                         r'debug_locks=0 \(line .*\)$')
        no_banner = delete(debug, 'KernelAddressSanitizer initialized')
        res, r = parse_lines(insert(no_banner, done, checks('on', 'on', 'on'),
                                    after=True), plan)
        self.assertEqual(2, res.exit_class)
        self.assertEqual(['debug checker kasan is off: neither the console '
                          'nor debug-checks saw "KernelAddressSanitizer '
                          'initialized"'], reasons(r, 2))
        # ... unless debug-checks found the banner in dmesg (a quiet
        # console)
        res, r = parse_lines(insert(no_banner, done, checks('on', 'on', 'on')
                                    + ['@@@ CHECK kasan on dmesg'],
                                    after=True), plan)
        self.assertEqual(0, res.exit_class)
        # CHECK lines count only from the final command: a test cannot
        # vouch
        res, r = parse_lines(insert(debug, r'^@@@ TEST-END smoke/smoke',
                                    checks('on', 'on', 'on')), plan)
        self.assertEqual(2, res.exit_class)
        self.assertEqual(unreported, sorted(set(prefixes(reasons(r, 2)))))

    def test_every_ktap_documents_plan_counts_a_bail_out_loses_the_rest(
            self):
        # (a kselftest target prints two); a program that bailed out or
        # crashed lost its rest to that failure (class 1). The target's
        # own skips, then the runner's document short of its plan, rc 0
        res, r = parse_lines(mini(0, [
            'TAP version 13', '1..2', 'ok 1 a # SKIP slow',
            'ok 2 b # SKIP slow', 'TAP version 13', '1..3',
            'ok 1 selftests: p: c']))
        self.assertEqual(2, res.exit_class)
        self.assertEqual(['test k/p/doc2.test-2: no result in the console log '
                          '(program exited rc=0)',
                          'test k/p/doc2.test-3: no result in the console log '
                          '(program exited rc=0)'], reasons(r, 2))
        res, r = parse_lines(mini(1, ['TAP version 13', '1..3', 'ok 1 a',
                                      'Bail out! cannot go on']))
        self.assertEqual(1, res.exit_class)
        self.assertIn('test k/p/test-2: no result in the console log '
                      '(program exited rc=1)', reasons(r, 1))

    def test_a_kselftest_that_skips_after_its_nested_plan_is_a_skip(self):
        res, r = parse_lines(mini(0, [
            'TAP version 13', '1..1', '# TAP version 13', '# 1..4',
            '# ok 1 first',
            'ok 1 selftests: mm: memfd_secret # SKIP no secretmem']))
        self.assertEqual(0, res.exit_class)
        self.assertEqual(
            [('k/p/memfd_secret', 'skip',
              'no secretmem (3 planned subtests never reported)'),
             ('k/p/memfd_secret/first', 'pass', None)],
            [(t['id'], t['status'], t['skip_reason']) for t in r['tests']])

    def test_a_tests_glob_that_matched_no_test_that_ran_is_class_2(self):
        # (a rerun of a renamed test is not a pass)
        res, r = parse_lines(
            mini(0, ['TAP version 13', '1..1', 'ok 1 global.there']),
            {'format': 'kernel-pipeline-plan/1',
             'tests': ['k/p/global.there', 'k/p/global.renamed'],
             'suites': [{'name': 'k', 'programs': [], 'optional': ['p'],
                         'tests': {}}],
             'checkers': [], 'variant': 'v', 'final': ''})
        self.assertEqual(2, res.exit_class)
        self.assertEqual(["TESTS glob 'k/p/global.renamed' matched no test "
                          "that ran"], reasons(r, 2))

    def test_a_listed_test_that_never_printed_is_class_2_by_name(self):
        # even when the KTAP count is right; a result nobody planned is
        # listed. The program printed a test under another name: its
        # count is right
        lines = [re.sub('^ok 1 global.sample_runs_to_completion',
                        'ok 1 global.sample_renamed', ln)
                 for ln in log_lines('isolated.log')]
        res, r = parse_lines(lines, plan_of('isolated.plan.json'))
        self.assertEqual(2, res.exit_class)
        self.assertEqual(['test isolation/sample/global.sample_runs_to_'
                          'completion: planned (the program lists it) but no '
                          'result in the console log'], reasons(r, 2))
        self.assertEqual(['isolation/sample/global.sample_renamed'],
                         r['plan']['unplanned'])
        # the recorded run: every listed test has its result
        res, r = parse('isolated.log', plan_of('isolated.plan.json'))
        self.assertEqual(0, res.exit_class)

    def test_tests_globs_reach_kselftest_results_by_the_runners_names(self):
        # (nested name/sub, flat 'selftests: T: name'); a selected program
        # that crashed is class 1, not an unmatched glob
        tests = ['kselftest/prctl/set-anon-vma-name-test',
                 'kselftest/prctl/disable-tsc-test',
                 'kselftest/prctl/disable-tsc-on-off-stress-test']
        res, r = parse('default-kselftest-prctl.log', {
            'format': 'kernel-pipeline-plan/1', 'tests': tests,
            'suites': [{'name': 'kselftest', 'programs': [],
                        'optional': ['prctl'], 'tests': {}}],
            'checkers': [], 'variant': 'default', 'final': ''})
        self.assertEqual(0, res.exit_class)
        self.assertEqual(tests, r['plan']['tests'])
        # the selected program segfaulted before its first result
        res, r = parse_lines(mini(139, []), {
            'format': 'kernel-pipeline-plan/1', 'tests': ['k/p/global.x'],
            'suites': [{'name': 'k', 'programs': [], 'optional': ['p'],
                        'tests': {}}],
            'checkers': [], 'variant': 'v', 'final': ''})
        self.assertEqual(1, res.exit_class)



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
