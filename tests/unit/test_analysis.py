"""In-process unit tests of pipeline/analysis: the one test identity, the
LOST tests and make compare (tests/unit/resultsets.py: the results sets).
Each holds the stage's function to what a bats test holds its script's
process to (tests/tooling/compare.bats), in a fraction of the time. The
summary, the report, the rerun selection and the command line:
test_analysis_runs.py.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from resultsets import (t, res, write)  # noqa: E402
from pipeline import Fail, results  # noqa: E402
from pipeline.analysis import compare, identity, runs, skips  # noqa: E402


class Identity(unittest.TestCase):
    def test_by_id_else_by_place_only_between_renamed_tests(self):
        before = [t('k/m/a/x', 'pass', key='1.1'),
                  t('k/m/b/y', 'pass', key='2.1'),
                  t('k/c/[41] Result', 'pass', key='1.1')]
        now = [t('k/m/b/y', 'pass', key='1.1'),
               t('k/m/a', 'skip', key='0.1'),
               t('k/c/[97] Result', 'fail', key='1.1')]
        p = identity.Pairing(before, now)
        self.assertIs(now[0], p.in_now(before[1]))
        # b/y moved to 1.1, but a/x is not in a's place any more
        self.assertIsNone(p.in_now(before[0]))
        # a pid in the name: the same place, the same test
        self.assertIs(now[2], p.in_now(before[2]))
        self.assertIs(before[2], p.in_before(now[2]))
        self.assertEqual('pass', p.was(now[2]))

    def test_a_bad_result_that_stands_for_more_is_judged_by_the_tests_below(
            self):
        before = [t('k/f/run.sh/t one', 'pass'), t('k/m/kfail/a', 'pass'),
                  t('k/m/kfail/b', 'fail'), t('k/p/poll/x', 'pass'),
                  t('s/q/global.one', 'pass')]
        p = identity.Pairing(before, [])
        self.assertEqual('pass', p.was(t('k/f/selftests: f: run.sh', 'fail')))
        self.assertEqual('fail', p.was(t('k/m/kfail', 'fail')))
        self.assertEqual('pass', p.was(t('k/p/missing-results', 'error')))
        self.assertEqual('pass', p.was(t('s/q/test-2', 'error',
                                          missing=True)))
        # (a name that only starts like one is not below it)
        self.assertIsNone(p.was(t('k/m/kfai', 'fail')))
        # a good result is itself only
        self.assertIsNone(p.was(t('k/m/kfail', 'pass')))

    def test_one_list_of_bad_outcomes(self):
        from pipeline.models import BAD, GOOD, Status
        self.assertEqual((Status.FAIL, Status.ERROR), BAD)
        self.assertEqual((Status.PASS, Status.BENCH), GOOD)
        self.assertEqual('fail', identity.verdict(['pass', 'error']))
        self.assertEqual('pass', identity.verdict(['skip', 'bench']))
        self.assertIsNone(identity.verdict(['skip']))


class Lost(unittest.TestCase):
    def test_skipped_or_absent_in_scope_not_below_a_failure(self):
        before = [t('k/a/x', 'pass'), t('k/a/y', 'pass'),
                  t('k/b/r', 'pass'), t('k/c/s', 'bench'),
                  t('k/a/f', 'fail')]
        now = [t('k/a/x', 'skip'), t('k/a/z', 'pass'),
               t('k/b/missing-results', 'error')]
        self.assertEqual([('k/a/x', 'skip'), ('k/a/y', None)],
                         skips.lost(before, now, skips.ran_in(now)))
        # everywhere: k/c vanished too; k/b is lost to its failure
        self.assertEqual(['k/a/x', 'k/a/y', 'k/c/s'],
                         [x.id for x in skips.lost(before, now)])

    def test_planned_in_a_run_that_selected_less(self):
        b = res('default', 0, [t('a/b/c', 'pass')],
                plan={'suites': [{'name': 'a', 'programs': [],
                                  'optional': ['b']}], 'tests': ['a/b/c']})
        scope = skips.planned_in(b)
        self.assertTrue(scope('a/b/c'))
        self.assertFalse(scope('a/b/d'))
        self.assertFalse(scope('a/e/f'))
        # no plan: the programs it ran
        self.assertTrue(skips.planned_in({'tests': [t('a/b/c', 'pass')]})(
            'a/b/zz'))

    def test_accepted_rules_need_a_reason(self):
        with tempfile.TemporaryDirectory() as d:
            f = os.path.join(d, 'acc')
            with open(f, 'w', encoding='utf-8') as fh:
                fh.write('# why\na/b/[d]  retired with the old ABI\n')
            rules = skips.load_accepted(f)
            self.assertEqual([skips.Rule('a/b/[d]',
                                         'retired with the old ABI')], rules)
            self.assertEqual('retired with the old ABI',
                             skips.accepted(rules, 'a/b/d'))
            self.assertIsNone(skips.accepted(rules, 'a/b/e'))
            with open(f, 'w', encoding='utf-8') as fh:
                fh.write('a/b/d\n')
            with self.assertRaisesRegex(Fail, 'acc:1: "a/b/d" has no reason'):
                skips.load_accepted(f)
            self.assertEqual([], skips.load_accepted(os.path.join(d, 'no')))

    def test_listing_per_reason_most_frequent_first(self):
        r = {'tests': [t('k/a/x', 'skip', skip_reason='no swap'),
                       t('u/p/t', 'skip', skip_reason='no KVM'),
                       t('u/p/u', 'skip', skip_reason='no KVM'),
                       t('k/a/z', 'pass')]}
        lines = skips.listing('default', r)
        self.assertEqual('== default: 3 skipped of 4, 2 reasons', lines[0])
        self.assertEqual('     2  no KVM\n        u/p/t u/p/u', lines[1])
        self.assertEqual('     1  no swap\n        k/a/x', lines[2])


class Compare(unittest.TestCase):
    def diff(self, a, b, rules=()):
        d = compare.compare_variant(a, b, rules)
        return d, '\n'.join(d.lines)

    def test_the_same_results_are_no_regression(self):
        a = res('default', 0, [t('umcg/switch/global.a', 'pass'),
                               t('smoke/smoke/global.b', 'skip')])
        d, _ = self.diff(a, a)
        self.assertFalse(d.regressed)
        self.assertEqual(compare.Tally(), d.tally)

    def test_new_failure_fixed_lost_and_a_metric_ratio(self):
        a = res('default', 0, [
            t('umcg/switch/global.a', 'pass'), t('umcg/block/global.c', 'fail'),
            t('smoke/smoke/global.b', 'pass'),
            t('umcg-bench/switch_bench/global.x', 'pass',
              metrics={'umcg_futex_ratio': 1.06, 'unit': 'ns'})])
        b = res('default', 1, [
            t('umcg/switch/global.a', 'fail'), t('umcg/block/global.c', 'pass'),
            t('smoke/smoke/global.b', 'skip'),
            t('umcg-bench/switch_bench/global.x', 'pass',
              metrics={'umcg_futex_ratio': 1.59, 'unit': 'ns'})],
            boot={'ready_uptime_s': 1.75})
        d, text = self.diff(a, b)
        self.assertTrue(d.regressed)
        self.assertEqual(compare.Tally(new=1, fixed=1, lost=1), d.tally)
        self.assertEqual('   class 0 c0 -> 1 c1   WORSE', d.lines[0])
        self.assertIn('   NEW FAILURE  umcg/switch/global.a: pass -> fail',
                      d.lines)
        self.assertIn('   FIXED        umcg/block/global.c: fail -> pass',
                      d.lines)
        self.assertIn('   LOST         smoke/smoke/global.b: pass -> skip',
                      d.lines)
        self.assertIn('   metric umcg-bench/switch_bench/global.x '
                      'umcg_futex_ratio: 1.06 -> 1.59 (+0.53, x1.500)', text)
        self.assertIn('   boot to READY (guest uptime, s): 1.5 -> 1.75 '
                      '(+0.25, x1.167)', text)
        # the news first
        rows = [ln for ln in d.lines if ln[3:4].isupper() and
                not ln.startswith('   class')]
        self.assertTrue(rows[0].startswith('   NEW FAILURE'), rows)
        self.assertTrue(rows[1].startswith('   LOST'), rows)

    def test_a_new_kernel_problem_and_an_accepted_lost_test(self):
        a = res('default', 0, [t('a/b/c', 'pass'), t('a/b/d', 'pass')])
        b = res('default', 3, [t('a/b/c', 'pass')], kernel_problems=[
            {'kind': 'warning',
             'first_line': 'WARNING: at kernel/sched/umcg.c:10'}])
        d, text = self.diff(a, b)
        self.assertTrue(d.regressed)
        self.assertIn('   NEW KERNEL PROBLEM  warning: 0 -> 1 (WARNING: at '
                      'kernel/sched/umcg.c:10)', text)
        self.assertIn('   LOST         a/b/d: pass -> -', text)
        b = res('default', 0, [t('a/b/c', 'pass'), t('a/b/e', 'skip')])
        d, text = self.diff(a, b, [skips.Rule('a/b/[d]', 'retired')])
        self.assertFalse(d.regressed)
        self.assertIn('   lost, ok     a/b/d: pass -> -  (accepted: retired)',
                      text)
        self.assertIn('   only in B    a/b/e: - -> skip', text)

    def test_a_run_that_planned_less_loses_nothing_it_did_not_select(self):
        a = res('default', 0, [t('a/b/c', 'pass'), t('a/b/d', 'pass'),
                               t('a/e/f', 'pass')])
        b = res('default', 0, [t('a/b/c', 'pass')],
                plan={'suites': [{'name': 'a', 'programs': [],
                                  'optional': ['b']}], 'tests': ['a/b/c']})
        d, text = self.diff(a, b)
        self.assertFalse(d.regressed)
        self.assertIn('   only in A    a/b/d: pass -> -', text)
        b = res('default', 0, [t('a/b/x', 'pass')],
                plan={'suites': [{'name': 'a', 'programs': ['b'],
                                  'optional': []}], 'tests': []})
        d, text = self.diff(a, b)
        self.assertTrue(d.regressed)
        self.assertIn('   LOST         a/b/c: pass -> -', text)

    def test_a_new_name_in_the_same_place_is_the_same_test(self):
        a = res('default', 0, [t('k/clone3/[41] Result matches', 'pass',
                                 key='1.1')])
        b = res('default', 0, [t('k/clone3/[97] Result matches', 'pass',
                                 key='1.1')])
        d, text = self.diff(a, b)
        self.assertFalse(d.regressed)
        self.assertNotIn('LOST', text)
        # and one that failed there before is no new failure: the rule
        # the summary judges pristine by
        a['tests'][0]['status'] = 'fail'
        b['tests'][0]['status'] = 'fail'
        d, text = self.diff(a, b)
        self.assertFalse(d.regressed)
        self.assertEqual(0, d.tally.new)

    def test_a_program_that_failed_in_both_is_no_new_failure(self):
        # its tests failed in A; in B it failed as a whole: the summary
        # calls that a known failure, and so does compare
        a = res('default', 1, [t('k/m/kfail/a', 'pass'),
                               t('k/m/kfail/b', 'fail')])
        b = res('default', 1, [t('k/m/kfail', 'fail')])
        d, text = self.diff(a, b)
        self.assertEqual(0, d.tally.new)
        self.assertIn('   only in B    k/m/kfail: - -> fail', text)
        # one whose tests passed in A is a new failure
        a['tests'][1]['status'] = 'pass'
        d, text = self.diff(a, b)
        self.assertEqual(1, d.tally.new)
        self.assertTrue(d.regressed)

    def test_a_crashed_program_loses_its_tests_to_that_failure(self):
        a = res('default', 0, [t('k/m/a/x', 'pass', key='1.1'),
                               t('k/m/b/y', 'pass', key='2.1'),
                               t('k/f/global.one', 'pass', key=None),
                               t('k/f/global.two', 'pass', key=None)])
        b = res('default', 0, [t('k/m/b/y', 'pass', key='1.1'),
                               t('k/m/a', 'skip', key='0.1'),
                               t('k/f/global.one', 'pass', key=None),
                               t('k/f/test-2', 'error', key=None,
                                 missing=True)])
        d, text = self.diff(a, b)
        self.assertTrue(d.regressed)
        self.assertIn('   LOST         k/m/a/x: pass -> -', text)
        self.assertNotIn('LOST         k/f/global.two', text)
        self.assertIn('   NEW FAILURE  k/f/test-2: - -> error', text)

    def test_sets_variants_and_bad_input(self):
        with tempfile.TemporaryDirectory() as d:
            A, B = os.path.join(d, 'A'), os.path.join(d, 'B')
            write(A, 'default', res('default', 0, [t('a/b/c', 'pass')]))
            write(A, 'off', res('off', 0, [t('a/b/c', 'pass')]))
            # a CI download: results-<variant>/
            write(B, 'results-default', res('default', 1,
                                            [t('a/b/c', 'fail')]))
            lines, bad = compare.compare(A, B)
            self.assertEqual(['default', 'off'], bad)
            self.assertIn('== off: in A only: no result in B   REGRESSED',
                          lines)
            self.assertEqual('compare: regressed: default off; 1 new '
                             'failures, 0 lost, 0 fixed, 0 other status '
                             'changes', lines[-1])
            lines, bad = compare.compare(os.path.join(A, 'default'),
                                         os.path.join(B, 'results-default'))
            self.assertEqual(['default'], bad)
            with self.assertRaisesRegex(Fail, 'in neither'):
                compare.compare(A, B, ['nope'])
            with self.assertRaisesRegex(Fail, 'is not a directory of results'):
                compare.compare(A, os.path.join(d, 'nothing'))
            os.mkdir(os.path.join(d, 'empty'))
            with self.assertRaisesRegex(Fail, 'no results.json in'):
                runs.load_set(os.path.join(d, 'empty'))


if __name__ == '__main__':
    unittest.main()
