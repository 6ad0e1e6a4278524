"""In-process unit tests of pipeline/analysis: the one test identity, the
summary with its regressions against pristine, make compare, the LOST
tests and skips, and the rerun selection. Each holds the stage's function
to what a bats test holds its script's process to (tests/tooling/compare.bats,
tests/tooling/select.bats, parse-console.bats and kselftest.bats:
summarize, select-tests failed, skips), in a fraction of the time.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.dont_write_bytecode = True
TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   '..', '..'))
sys.path.insert(0, TOP)
from pipeline import Fail, cli, results  # noqa: E402
from pipeline.analysis import (compare, identity, report, runs,  # noqa: E402
                               selection, skips, summary)

LOGS = os.path.join(TOP, 'tests', 'fixtures', 'console-logs')


def t(tid, status, **kw):
    """A test of results.json."""
    return dict({'id': tid, 'status': status, 'metrics': {}, 'note': None},
                **kw)


def res(variant, cls, tests, **kw):
    """A results.json as compare reads it (tests/tooling/compare.bats' res)."""
    r = {'variant': variant, 'exit_class': cls,
         'exit_class_name': 'c%d' % cls, 'boot': {'ready_uptime_s': 1.5},
         'kernel_problems': [], 'tests': tests}
    r.update(kw)
    return r


def fake(variant, *specs):
    """A results.json as summarize reads it, from 'id=status' SPECS
    (tests/integration/kselftest.bats' fake_results)."""
    tests = []
    for s in specs:
        i, st = s.rsplit('=', 1)
        tests.append({'id': i, 'key': i + '#k', 'suite': i.split('/')[0],
                      'status': st})
    c = {k: sum(1 for x in tests if x['status'] == k)
         for k in ('pass', 'fail', 'skip', 'error')}
    c['total'] = len(tests)
    cls = 1 if c['fail'] or c['error'] else 0
    return {'variant': variant, 'counts': c, 'tests': tests,
            'kernel_problems': [], 'kernel_problems_total': 0,
            'boot': {'ready_uptime_s': 1.0}, 'duration_s': 5,
            'exit_class': cls,
            'reasons': [{'class': 1, 'reason': 'a test failed'}] if cls
            else []}


def write(top, sub, r):
    os.makedirs(os.path.join(top, sub), exist_ok=True)
    with open(os.path.join(top, sub, 'results.json'), 'w',
              encoding='utf-8') as f:
        json.dump(r, f)


def quiet(fn, *args):
    """(return value, printed lines) of FN(*ARGS)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = fn(*args)
    return rc, out.getvalue().splitlines()


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


class Summary(unittest.TestCase):
    def matrix(self, runs_, *names, rules=()):
        with tempfile.TemporaryDirectory() as d:
            for r in runs_:
                write(d, r['variant'], r)
            s = summary.summarize(d, list(names), rules)
            text = summary.lines(s, d)
        return s, {r.variant: r for r in s.rows}, text

    def test_regressions_against_pristine_and_known_failures(self):
        s, rows, text = self.matrix(
            [fake('default', 'k/a/x=fail', 'k/a/y=fail', 'k/a/z=pass',
                  'k/a/w=error', 'u/p/t=fail'),
             fake('pristine', 'k/a/x=pass', 'k/a/y=fail', 'k/a/z=pass',
                  'k/a/w=pass')], 'default', 'pristine')
        self.assertEqual(1, s.exit_class)
        self.assertEqual((2, 1), (rows['default'].regressions,
                                  rows['default'].known_failures))
        self.assertEqual(['k/a/w', 'k/a/x'], rows['default'].regressed_tests)
        self.assertEqual((None, 1), (rows['pristine'].regressions,
                                     rows['pristine'].known_failures))
        self.assertIn('default: regressions versus pristine: k/a/w k/a/x',
                      text)
        self.assertIn('default: known failures (also on pristine): k/a/y',
                      text)

    def test_no_pristine_or_a_pristine_without_tests_judges_nothing(self):
        d = fake('default', 'k/a/x=fail')
        _, rows, _ = self.matrix([d], 'default')
        self.assertIsNone(rows['default'].regressions)
        _, rows, text = self.matrix([d, fake('pristine')], 'default',
                                    'pristine')
        self.assertIsNone(rows['default'].regressions)
        self.assertTrue(text[0].splitlines()[1].startswith('default '))
        self.assertIn(' -  ', text[0].splitlines()[1])

    def test_a_program_that_failed_as_a_whole_is_judged_by_its_tests(self):
        _, rows, _ = self.matrix(
            [fake('default', 'k/f/selftests: f: run.sh=fail', 'k/m/cow=fail',
                  'k/m/kfail=fail', 'k/p/missing-results=error',
                  'k/z/other=fail', 'k/m/co=fail'),
             fake('pristine', 'k/f/run.sh/t one=pass', 'k/f/run.sh/t two=pass',
                  'k/m/cow/a=pass', 'k/m/cow/b=skip', 'k/m/kfail/a=pass',
                  'k/m/kfail/b=fail', 'k/p/poll/x=pass', 'k/p/wait/y=skip')],
            'default', 'pristine')
        self.assertEqual(['k/f/selftests: f: run.sh', 'k/m/cow',
                          'k/p/missing-results'],
                         rows['default'].regressed_tests)
        self.assertEqual(['k/m/kfail'], rows['default'].known_failed_tests)

    def test_lost_tests_fail_the_matrix_unless_accepted(self):
        d = fake('default', 'k/a/x=skip', 'k/a/z=pass',
                 'k/b/missing-results=error', 'u/p/t=skip')
        for x in d['tests']:
            if x['status'] == 'skip':
                x['skip_reason'] = 'no swap' if x['id'] == 'k/a/x' \
                    else 'no KVM'
        p = fake('pristine', 'k/a/x=pass', 'k/a/y=pass', 'k/a/z=pass',
                 'k/b/r=pass', 'k/c/s=pass')
        s, rows, text = self.matrix([d, p], 'default', 'pristine')
        self.assertEqual(1, s.exit_class)
        self.assertEqual('matrix: 6 passed, 3 failed, 2 skipped', text[-1])
        self.assertEqual(['k/a/x', 'k/a/y'], rows['default'].lost_tests)
        self.assertIn('default: regressions versus pristine: LOST:k/a/x '
                      'LOST:k/a/y k/b/missing-results', text)
        self.assertEqual({'no swap': 1, 'no KVM': 1},
                         rows['default'].skip_reasons)
        _, rows, text = self.matrix([d, p], 'default', 'pristine',
                                    rules=[skips.Rule('k/a/y',
                                                      'retired upstream')])
        self.assertEqual(['k/a/x'], rows['default'].lost_tests)
        self.assertEqual(['k/a/y (retired upstream)'],
                         rows['default'].accepted_lost)
        self.assertIn('default: passed on pristine, not run or skipped here, '
                      'accepted (configs/accepted-skips.txt): k/a/y (retired '
                      'upstream)', text)

    def test_table_classes_and_variants_asked_for(self):
        with tempfile.TemporaryDirectory() as d:
            for v, log in (('default', 'clean.log'),
                           ('off', 'ktap-missing.log'),
                           ('debug', 'oops.log')):
                text = results.read_log(os.path.join(LOGS, log))
                results.write_results(results.parse(text, variant=v),
                                      os.path.join(d, v))
            rc, lines = quiet(summary.main, d, ['debug', 'default', 'off'])
            with open(os.path.join(d, 'summary.json'), encoding='utf-8') as f:
                s = json.load(f)
            self.assertEqual(3, rc)
            self.assertTrue(lines[0].startswith(
                'variant  boot s  passed  failed  regressions  errors  '
                'skipped  crashed'))
            self.assertTrue(lines[1].endswith('3 kernel-problem'))
            self.assertIn('1 (oops)', lines[1])
            self.assertTrue(lines[2].startswith(
                'default  2.0     2       0       -            0       1   '
                '     no'))
            self.assertEqual('matrix: 4 passed, 5 failed, 1 skipped',
                             lines[-1])
            v = {r['variant']: r for r in s['variants']}
            self.assertEqual(3, s['exit_class'])
            self.assertEqual((1, 2), (v['off']['failed'], v['off']['errors']))
            self.assertEqual(['oops'], v['debug']['kernel_problem_kinds'])
            self.assertNotIn('tests', v['default'])
            # only what was asked for; a variant without results is class 2
            rc, lines = quiet(summary.main, d, ['default'])
            self.assertEqual(0, rc)
            self.assertEqual('matrix: 2 passed, 0 failed, 1 skipped',
                             lines[-1])
            self.assertNotIn('debug', '\n'.join(lines))
            rc, lines = quiet(summary.main, d, ['default', 'none'])
            self.assertEqual(2, rc)
            self.assertTrue(lines[2].endswith('2 infrastructure'))
            self.assertIn('none: no result: %s does not exist' %
                          os.path.join(d, 'none', 'results.json'),
                          '\n'.join(lines))
            os.makedirs(os.path.join(d, 'broken'))
            with open(os.path.join(d, 'broken', 'results.json'), 'w',
                      encoding='utf-8') as f:
                f.write('{')
            rc, _ = quiet(summary.main, d, ['default', 'broken'])
            self.assertEqual(2, rc)


class Report(unittest.TestCase):
    RES = {'tests': [t('s/p/ok', 'pass', duration_ms=1500),
                     t('s/p/bad', 'fail', excerpt='not ok 2 bad', note='rc 1'),
                     t('s/p/off', 'skip', skip_reason='no KVM'),
                     t('s/p/died', 'error', explained_by=['oops'])],
           'kernel_problems': [{'kind': 'oops', 'line': 9,
                                'first_line': 'Oops: 0000', 'excerpt': 'RIP'}],
           'symbolized': {'error': 'no vmlinux'},
           'reasons': [{'class': 3, 'reason': 'oops'},
                       {'class': 2, 'reason': 'suite s timed out'}]}

    def test_one_line_per_test_excerpts_under_failures(self):
        lines = report.render(self.RES, 'r.json', False)
        self.assertEqual('[PASS]  s/p/ok      1.5s', lines[0])
        self.assertEqual('[FAIL]  s/p/bad     rc 1', lines[1])
        self.assertEqual('        | not ok 2 bad', lines[2])
        self.assertEqual('[SKIP]  s/p/off     no KVM', lines[3])
        self.assertEqual('[CRASH] s/p/died', lines[4])
        self.assertIn('[CRASH] kernel oops (console.log line 9): Oops: 0000',
                      lines)
        self.assertIn('        (not decoded to file:line: no vmlinux)', lines)
        self.assertEqual('[ERROR] suite s timed out', lines[-1])
        colored = report.render(self.RES, 'r.json', True)
        self.assertEqual('\x1b[1;31m[FAIL]\x1b[0m  s/p/bad     rc 1',
                         colored[1])

    def test_failures_only_what_went_wrong(self):
        # (what bisect-run prints of the first bad commit's run)
        lines = report.render(self.RES, 'r.json', False, failures=True)
        self.assertEqual([ln for ln in report.render(self.RES, 'r.json', False)
                          if ln.startswith(('[FAIL]', '[CRASH]', '[ERROR]',
                                            '        |'))], lines)


class Rerun(unittest.TestCase):
    def test_failed_tests_by_id_a_missing_result_as_its_program(self):
        def tt(suite, prog, name, status, number=1):
            return {'suite': suite, 'program': prog, 'name': name,
                    'id': '%s/%s/%s' % (suite, prog, name),
                    'status': status, 'number': number}
        r = selection.failed({
            'exit_class': 1,
            'tests': [tt('umcg', 'switch', 'global.a', 'pass'),
                      tt('umcg', 'switch', 'global.b[1]', 'fail', 2),
                      tt('umcg', 'switch', 'global.b[1]#3', 'fail', 3),
                      tt('umcg', 'block', 'test-4', 'error', None),
                      tt('smoke', 'smoke', 'global.ok', 'skip')],
            'kernel_problems': [{'kind': 'warning',
                                 'during': 'isolation/effect/global.quiesce'}],
            'suites': [{'name': 'umcg'}, {'name': 'smoke'},
                       {'name': 'isolation'}]})
        self.assertEqual(['umcg', 'isolation'], r.suites)
        self.assertEqual(['umcg/switch/global.b[[]1]', 'umcg/block',
                          'isolation/effect'], r.tests)

    def test_a_nested_kselftest_failure_reruns_its_runner_program(self):
        r = selection.failed({
            'exit_class': 1, 'suites': [{'name': 'kselftest'}],
            'tests': [
                {'suite': 'kselftest', 'program': 'futex', 'number': 3,
                 'name': 'run.sh/futex_requeue many returned: 11',
                 'status': 'fail'},
                {'suite': 'kselftest', 'program': 'futex', 'number': 5,
                 'name': 'run.sh/futex_wake private returned: 0',
                 'status': 'fail'},
                {'suite': 'kselftest', 'program': 'mm', 'name': 'cow',
                 'number': 2, 'status': 'error'}]})
        self.assertEqual(selection.Rerun(
            ['kselftest'], ['kselftest/futex/run.sh', 'kselftest/mm/cow']), r)

    def test_nothing_failed_or_a_run_that_never_got_to_a_test(self):
        self.assertEqual(selection.Rerun([], []), selection.failed(
            {'exit_class': 0, 'tests': [{'status': 'pass'}]}))
        self.assertEqual(selection.Rerun(['smoke', 'umcg'], []),
                         selection.failed({
                             'exit_class': 2, 'tests': [],
                             'suites': [{'name': 'smoke'},
                                        {'name': 'umcg'}]}))


class CommandLine(unittest.TestCase):
    """python3 -m pipeline: one parser, the subcommands in-process."""

    def test_every_subcommand_answers_help_and_usage_errors_are_2(self):
        for name in ('parse', 'summarize', 'compare', 'report', 'skips',
                     'select-tests'):
            rc, out = quiet(cli.main, [name, '--help'])
            self.assertEqual(0, rc, name)
            self.assertTrue(out[0].startswith('usage: pipeline %s' % name))
            with contextlib.redirect_stderr(io.StringIO()) as err:
                rc, _ = quiet(cli.main, [name])
            self.assertEqual(2, rc, name)
            self.assertIn('usage', err.getvalue())
        rc, out = quiet(cli.main, ['--help'])
        self.assertEqual(0, rc)
        self.assertIn('select-tests', '\n'.join(out))

    def test_bad_input_is_2_with_a_message_naming_the_subcommand(self):
        with tempfile.TemporaryDirectory() as d:
            with contextlib.redirect_stderr(io.StringIO()) as err:
                rc, _ = quiet(cli.main, ['select-tests', 'failed', d])
            self.assertEqual(2, rc)
            self.assertIn('pipeline select-tests: error: cannot read',
                          err.getvalue())
            self.assertIn('run make test-variant first', err.getvalue())
            with contextlib.redirect_stderr(io.StringIO()) as err:
                rc, _ = quiet(cli.main, ['select-tests', 'check', "a/x'y"])
            self.assertEqual(2, rc)
            self.assertIn("TESTS: 'a/x'y' has a character", err.getvalue())

    def test_select_tests_suites_asks_the_config_module(self):
        with mock.patch.dict(os.environ, {'TESTS': 'smoke/*'}):
            for var in ('CONFIGS', 'GUEST_TESTS'):
                os.environ.pop(var, None)
            rc, out = quiet(cli.main, ['select-tests', 'suites', 'default'])
        self.assertEqual((0, ['smoke']), (rc, out))

    def test_parse_then_summarize_then_skips_in_one_process(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out = quiet(cli.main, [
                'parse', '--quiet', '--variant', 'default', '--out',
                os.path.join(d, 'default'), os.path.join(LOGS, 'clean.log')])
            self.assertEqual(0, rc)
            self.assertEqual([], out)
            rc, out = quiet(cli.main, ['summarize', d, 'default'])
            self.assertEqual(0, rc)
            self.assertEqual('matrix: 2 passed, 0 failed, 1 skipped', out[-1])
            rc, out = quiet(cli.main, ['skips', os.path.join(d, 'default')])
            self.assertEqual(0, rc)
            self.assertTrue(out[0].startswith('== default: 1 skipped of 3'),
                            out)
            rc, out = quiet(cli.main, ['report', '--color', 'never',
                                       os.path.join(d, 'default')])
            self.assertEqual(0, rc)
            self.assertTrue(out[0].startswith('[PASS]'), out)



class Durations(unittest.TestCase):
    """`durations`: build-and-boot's ETA from what the last run left in
    ARTIFACTS and RESULTS."""

    def test_each_kernel_and_boot_asked_for_with_dash_for_no_number(self):
        with tempfile.TemporaryDirectory() as d:
            art, res = os.path.join(d, 'a'), os.path.join(d, 'r')
            os.makedirs(art)
            with open(os.path.join(art, 'manifest.json'), 'w',
                      encoding='utf-8') as f:
                json.dump({'kernels': {'default': {
                    'durations_s': {'total': 61.6}}}}, f)
            write(res, 'default', {'duration_s': 12.4})
            os.makedirs(os.path.join(res, 'broken'))
            with open(os.path.join(res, 'broken', 'results.json'), 'w',
                      encoding='utf-8') as f:
                f.write('{')
            with mock.patch.dict(os.environ, {'ARTIFACTS': art,
                                              'RESULTS': res}):
                rc, out = quiet(cli.main, [
                    'durations', '--kernel', 'default', '--kernel', 'debug',
                    '--boot', 'default', '--boot', 'broken', '--boot', 'x'])
        self.assertEqual((0, ['kernel default 62', 'kernel debug -',
                              'boot default 12', 'boot broken -',
                              'boot x -']), (rc, out))


class BenchTable(unittest.TestCase):
    """`bench-table`: bench-build's table and JSON, and one stage's
    seconds of a kernel.json."""

    def test_a_failed_step_has_no_time_and_the_exit_is_1(self):
        lines = ['commit\tabc\n', 'cold\t100\n', 'cold_exit\t0\n',
                 'warm\t20\n', 'cold_builds_done\t80\n',
                 'off_clean\t9\n', 'off_clean_exit\t2\n',
                 'off_clean_kernel_stage\t7\n']
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, 'bench.json')
            stdin = io.StringIO(''.join(lines))
            with mock.patch.object(sys, 'stdin', stdin), \
                    contextlib.redirect_stderr(io.StringIO()) as err:
                rc, printed = quiet(cli.main, ['bench-table', out])
            with open(out, encoding='utf-8') as f:
                doc = json.load(f)
        self.assertEqual(1, rc)
        self.assertIn('these steps failed, their rows show no time: '
                      'off_clean', err.getvalue())
        self.assertEqual(['off_clean'], doc['failed'])
        self.assertIn('| cold make (build + boot), empty ccache | 100 |  |',
                      printed)
        self.assertIn('| warm make container-build (ccache, no objects) | '
                      '20 | warm/cold builds 0.25 |', printed)
        self.assertIn('| off, empty ccache, from nothing | - | FAILED '
                      '(exit 2); kernel stage 7s |', printed)

    def test_duration_and_usage(self):
        with tempfile.TemporaryDirectory() as d:
            k = os.path.join(d, 'kernel.json')
            with open(k, 'w', encoding='utf-8') as f:
                json.dump({'durations_s': {'kernel': 12.5}}, f)
            for stage, want in (('kernel', ['12.5']), ('config', [''])):
                self.assertEqual((0, want), quiet(
                    cli.main, ['bench-table', '--duration', k, stage]))
            self.assertEqual((0, ['']), quiet(cli.main, [
                'bench-table', '--duration', os.path.join(d, 'no'), 'x']))
        for argv in ([], ['a', 'b'], ['--duration', 'k'],
                     ['--duration', 'k', 's', 'out']):
            with contextlib.redirect_stderr(io.StringIO()) as err:
                rc, _ = quiet(cli.main, ['bench-table'] + argv)
            self.assertEqual(2, rc, argv)
            self.assertIn('usage', err.getvalue())


if __name__ == '__main__':
    unittest.main()
