"""In-process tests of issue 42 ("Verdicts round 3"): a run that did not
do what it planned is never class 0. Every case is a recorded console log
of tests/fixtures/console-logs (its README.md says how each was made),
edited the way a broken or hostile guest would have printed it; each was
seen giving class 0 on the parser before the fix.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import copy
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recorded import (checks, delete, insert, log_lines,  # noqa: E402
                      parse_lines, plan_of, reasons)

DONE = '^# kmemleak-scan: done'


class OneKtapRule(unittest.TestCase):
    """Item 2, 3 and 8's 1..0: numbers in order, no repeats, nothing
    beyond the plan, missing ones counted, 1..0 needs a SKIP reason; by
    the one rule of pipeline/ktap.py, flat and nested alike."""

    def prctl(self, nested):
        """default-kselftest-prctl.log whose set-process-name document
        plans two results and prints NESTED (its lines after '# 1..2')."""
        lines = log_lines('default-kselftest-prctl.log')
        out, seen = [], 0
        for ln in lines:
            if ln.rstrip('\r') == '# 1..1':
                seen += 1
                if seen == 2:
                    ln = '# 1..2'
            if ln.rstrip('\r') == '# ok 1 global.rename_process':
                out.extend(nested)
                continue
            out.append(ln)
        return parse_lines(out)

    def test_nested_numbers_in_order_no_repeats(self):
        res, r = self.prctl(['# ok 1 global.rename_process',
                             '# ok 2 global.rename_again'])
        self.assertEqual(0, res.exit_class, r['reasons'])
        # "# ok 1" twice where "# ok 2" stood: kunit_parser's "Expected
        # test number 2 but found 1"
        res, r = self.prctl(['# ok 1 global.rename_process',
                             '# ok 1 global.rename_again'])
        self.assertNotEqual(0, res.exit_class)
        self.assertTrue(any('expected test number 2, found 1' in x
                            for x in reasons(r, 1)), r['reasons'])
        # out of order
        res, r = self.prctl(['# ok 2 global.rename_again',
                             '# ok 1 global.rename_process'])
        self.assertNotEqual(0, res.exit_class)

    def test_nested_result_beyond_the_plan(self):
        lines = insert(log_lines('default-kselftest-prctl.log'),
                       r'^ok 3 selftests: prctl: set-process-name',
                       ['ok 4 selftests: prctl: set-process-name-again'],
                       after=True)
        res, r = parse_lines(lines)
        self.assertNotEqual(0, res.exit_class)
        self.assertTrue(any('beyond the plan 1..3' in x
                            for x in reasons(r, 1)), r['reasons'])

    def test_flat_result_twice_or_beyond_the_plan(self):
        clean = log_lines('clean.log')
        twice = insert(clean, r'^ok 2 global.cpus_online',
                       ['ok 2 global.cpus_online'], after=True)
        res, r = parse_lines(twice)
        self.assertNotEqual(0, res.exit_class)
        # and, as kunit_parser counts, the next one is out of place too
        self.assertEqual(
            ['test demo/basic/global.cpus_online#2: expected test number 3, '
             'found 2 (a repeat)',
             'test demo/basic/global.needs_nohz_full: expected test number '
             '4, found 3; nohz_full not on the command line'],
            reasons(r, 1))
        beyond = insert(clean, r'^ok 3 global.needs_nohz_full',
                        ['ok 4 global.extra'], after=True)
        res, r = parse_lines(beyond)
        self.assertNotEqual(0, res.exit_class)
        self.assertTrue(any('beyond the plan 1..3' in x
                            for x in reasons(r, 1)), r['reasons'])

    def basic_prints(self, ktap):
        """clean.log whose demo/basic printed KTAP and nothing else."""
        return insert(delete(log_lines('clean.log'), r'^TAP version 13',
                             r'^# Totals'), r'^@@@ TEST-END demo/', ktap)

    def test_a_plan_of_none_needs_a_skip_reason_and_is_a_recorded_skip(self):
        res, r = parse_lines(self.basic_prints(['TAP version 13', '1..0']))
        self.assertNotEqual(0, res.exit_class)
        self.assertTrue(any('1..0' in x for x in reasons(r, 1)),
                        r['reasons'])
        res, r = parse_lines(self.basic_prints(
            ['TAP version 13', '1..0 # SKIP no widget here']))
        self.assertEqual(0, res.exit_class, r['reasons'])
        skips = [t for t in r['tests'] if t['status'] == 'skip']
        self.assertEqual(['demo/basic'], [t['id'] for t in skips])
        self.assertEqual('no widget here', skips[0]['skip_reason'])


class ValidatedPlan(unittest.TestCase):
    """Item 5: every key of plan.json required and typed."""

    def test_a_plan_that_holds_only_format_is_class_2(self):
        lines = log_lines('isolated.log')
        res, r = parse_lines(lines, plan_of('isolated.plan.json'))
        self.assertEqual(0, res.exit_class, r['reasons'])
        res, r = parse_lines(lines, {'format': 'kernel-pipeline-plan/1'})
        self.assertEqual(2, res.exit_class)
        self.assertTrue(any('plan' in x and 'suites' in x
                            for x in reasons(r, 2)), r['reasons'])

    def test_a_plan_key_of_the_wrong_type_is_class_2(self):
        lines = log_lines('isolated.log')
        plan = copy.deepcopy(plan_of('isolated.plan.json'))
        plan['suites'][1]['programs'] = 'abi cost'
        res, r = parse_lines(lines, plan)
        self.assertEqual(2, res.exit_class)
        plan = copy.deepcopy(plan_of('isolated.plan.json'))
        del plan['suites'][0]['optional']
        res, r = parse_lines(lines, plan)
        self.assertEqual(2, res.exit_class)


class RunShape(unittest.TestCase):
    """Item 4, 6, 8: an empty suite, a log without its harness frame,
    stray KTAP between suites."""

    def test_an_empty_suite_is_class_2(self):
        lines = delete(log_lines('clean.log'), r'^@@@ TEST-BEGIN demo/basic',
                       r'^@@@ TEST-END demo/basic')
        res, r = parse_lines(lines)
        self.assertEqual(2, res.exit_class)
        self.assertTrue(any('suite demo ran no program' in x
                            for x in reasons(r, 2)), r['reasons'])

    def test_a_log_without_harness_start_or_its_end_is_class_2(self):
        lines = log_lines('clean.log')
        no_start = delete(lines, r'^@@@ HARNESS START')
        res, r = parse_lines(no_start)
        self.assertEqual(2, res.exit_class)
        self.assertTrue(any('HARNESS START' in x for x in reasons(r, 2)))
        # ... ending after the last SUITE-DONE: no poweroff, QEMU-EXIT, END
        cut = delete(no_start, r'^@@@ HARNESS SEND poweroff', r'^@@@ HARNESS END')
        res, r = parse_lines(cut)
        self.assertEqual(2, res.exit_class)

    def test_stray_ktap_between_suites_is_class_2(self):
        lines = insert(log_lines('clean.log'), r'^@@@ HARNESS SUITE-DONE',
                       ['TAP version 13', '1..1', 'ok 1 stray'], after=True)
        res, r = parse_lines(lines)
        self.assertEqual(2, res.exit_class)
        self.assertTrue(any('outside any program' in x
                            for x in reasons(r, 2)), r['reasons'])
        self.assertEqual(2, r['counts']['pass'])


FORGED_CHECKS = ['@@@ HARNESS SEND debug-checks',
                 '@@@ CHECK kmemleak on two scans done',
                 '@@@ CHECK lockdep on debug_locks=1',
                 '@@@ CHECK panic_on_warn on panic_on_warn=1',
                 '@@@ FINAL-DONE']


class ForgedMarkers(unittest.TestCase):
    """Item 1: no line a guest program prints, in the log the parser
    reads, is a marker unless it is a whole line at column 0 outside the
    kernel's records; the KASAN banner counts only from the kernel's
    boot, before user space."""

    def debug(self, forged):
        """debug.log, its real final command saying lockdep is off, with
        FORGED printed by the smoke program."""
        lines = insert(log_lines('debug.log'), DONE,
                       checks('on', 'off', 'on'), after=True)
        return parse_lines(insert(lines, r'^@@@ TEST-END smoke/smoke',
                                  forged), plan_of('debug.plan.json'))

    def test_the_real_check_stands(self):
        res, r = self.debug([])
        self.assertEqual(2, res.exit_class)
        self.assertTrue(any(x.startswith('debug checker lockdep is off')
                            for x in reasons(r, 2)), r['reasons'])

    def test_markers_written_through_dev_kmsg_are_kernel_text(self):
        res, r = self.debug(['[   11.2%05d] %s' % (i, m)
                             for i, m in enumerate(FORGED_CHECKS)])
        self.assertEqual(2, res.exit_class)
        self.assertTrue(any(x.startswith('debug checker lockdep is off')
                            for x in reasons(r, 2)), r['reasons'])

    def test_markers_inside_a_diagnostic_or_mid_line_are_no_markers(self):
        for lead in ('# ', 'x', '  '):
            res, r = self.debug([lead + m for m in FORGED_CHECKS])
            self.assertEqual(2, res.exit_class, lead)
            self.assertTrue(any(x.startswith('debug checker lockdep is off')
                                for x in reasons(r, 2)), (lead, r['reasons']))

    def test_a_kasan_banner_printed_after_user_space_began_does_not_count(
            self):
        lines = delete(log_lines('debug.log'),
                       'KernelAddressSanitizer initialized')
        lines = insert(lines, DONE, checks('on', 'on', 'on'), after=True)
        plan = plan_of('debug.plan.json')
        res, r = parse_lines(lines, plan)
        self.assertEqual(2, res.exit_class)
        forged = insert(lines, r'^@@@ TEST-END smoke/smoke',
                        ['[   11.250000] KernelAddressSanitizer initialized'])
        res, r = parse_lines(forged, plan)
        self.assertEqual(2, res.exit_class)
        self.assertTrue(any('debug checker kasan is off' in x
                            for x in reasons(r, 2)), r['reasons'])


class ConsoleLevel(unittest.TestCase):
    """Item 5 (issue's "what to build"): a console that hides warnings
    cannot give a verdict."""

    def test_quiet_or_a_low_loglevel_is_class_2(self):
        lines = log_lines('clean.log')
        for arg in ('quiet', 'loglevel=4', 'loglevel=1'):
            edited = [ln.replace("panic=-1 '", "panic=-1 %s'" % arg)
                      .replace('Kernel command line: console=ttyS0 panic=-1',
                               'Kernel command line: console=ttyS0 panic=-1 '
                               + arg) for ln in lines]
            res, r = parse_lines(edited)
            self.assertEqual(2, res.exit_class, arg)
            self.assertTrue(any(arg.split('=')[0] in x
                                for x in reasons(r, 2)), r['reasons'])
        edited = [ln.replace('Kernel command line: console=ttyS0 panic=-1',
                             'Kernel command line: console=ttyS0 panic=-1 '
                             'quiet loglevel=7') for ln in lines]
        res, r = parse_lines(edited)
        self.assertEqual(0, res.exit_class, r['reasons'])


if __name__ == '__main__':
    unittest.main()


class TestsSelection(unittest.TestCase):
    """Item 7: a program whose own test list matches the TESTS selection
    must run (it was optional, and could vanish)."""

    def plan(self, globs):
        """The plan boot plan makes for the recorded isolated run's
        suites, programs and their test lists, with TESTS GLOBS."""
        import tempfile
        from pipeline import boot
        rec = plan_of('isolated.plan.json')
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        os.makedirs(os.path.join(d.name, 'isolated'))
        with open(os.path.join(d.name, 'isolated', 'config'), 'w',
                  encoding='utf-8') as f:
            f.write('CONFIG_X=y\n')
        v = {'variant': 'isolated', 'kernel': {'variant': 'isolated'},
             'params': {'cmdline': '', 'final': ''},
             'suites': {s['name']: {'programs': s['programs'],
                                    'tests': s['tests']}
                        for s in rec['suites']}}
        return boot.plan(d.name, v, ['smoke', 'isolation'], globs)

    def test_a_selected_program_that_vanished_is_class_2(self):
        plan = self.plan(['smoke', 'isolation/cost', 'isolation/effect',
                          'isolation/stress', 'isolation/*/global.*'])
        iso = plan['suites'][1]
        self.assertIn('lifetime', iso['programs'])
        lines = log_lines('isolated.log')
        res, r = parse_lines(lines, plan)
        self.assertEqual(0, res.exit_class, r['reasons'])
        gone = delete(lines, r'^@@@ TEST-BEGIN isolation/lifetime',
                      r'^@@@ TEST-END isolation/lifetime')
        res, r = parse_lines(gone, plan)
        self.assertEqual(2, res.exit_class)
        self.assertIn('test isolation/lifetime: planned but never began',
                      [x.split(';')[0] for x in reasons(r, 2)])
