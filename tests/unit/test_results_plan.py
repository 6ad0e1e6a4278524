"""In-process unit tests of pipeline/results: every planned program, test
and debug checker of a boot's plan is accounted for in its console log
(tests/unit/recorded.py: the logs).

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""

import os
import re
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recorded import (checks, delete, insert, log_lines,  # noqa: E402
                      mini, parse, parse_lines, plan_of, reasons)
from pipeline import results  # noqa: E402


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





if __name__ == '__main__':
    unittest.main()
