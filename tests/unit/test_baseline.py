"""ci/baseline: a run that does less than the green run of main it is held
to says so, by name (pipeline/analysis/baseline.py)."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, TOP)
sys.dont_write_bytecode = True

from pipeline import Fail, cli, counts  # noqa: E402
from pipeline.analysis import baseline  # noqa: E402

PLAN = {'format': 'kernel-pipeline-plan/1', 'variant': 'default',
        'tests': [], 'suites': [
            {'name': 'smoke', 'programs': ['smoke'], 'optional': [],
             'tests': {}},
            {'name': 'umcg', 'programs': ['abi', 'switch'], 'optional': [],
             'tests': {}}]}


def run(tests, plan=None, exit_class=0, variant='default'):
    return {'variant': variant, 'exit_class': exit_class,
            'plan': plan if plan is not None else PLAN,
            'tests': [{'id': i, 'status': s, **({'skip_reason': r} if r
                                                  else {})}
                      for i, s, r in tests]}


GREEN = [('smoke/smoke/global.release', 'pass', None),
         ('umcg/abi/global.numbers', 'pass', None),
         ('umcg/switch/switch.fast_path', 'pass', None),
         ('umcg/switch/switch.fallback', 'skip', 'needs 2 CPUs')]


class Baseline(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.base = os.path.join(self.d, 'baseline')

    def tearDown(self):
        self.tmp.cleanup()

    def results(self, name, *runs):
        top = os.path.join(self.d, name)
        for r in runs:
            os.makedirs(os.path.join(top, r['variant']), exist_ok=True)
            with open(os.path.join(top, r['variant'], 'results.json'),
                      'w') as f:
                json.dump(r, f)
        return top

    def check(self, now, rules=()):
        self.results('green', run(GREEN))
        with contextlib.redirect_stdout(io.StringIO()):
            baseline.write(os.path.join(self.d, 'green'), self.base, 'test')
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = baseline.main(self.results('now', now), self.base, [],
                               accepted=self.accepted(rules))
        return rc, out.getvalue()

    def accepted(self, rules):
        p = os.path.join(self.d, 'accepted-skips.txt')
        with open(p, 'w') as f:
            f.writelines('%s %s\n' % r for r in rules)
        return p

    def test_written_from_a_green_run_its_passes_only(self):
        self.results('green', run(GREEN))
        with contextlib.redirect_stdout(io.StringIO()):
            baseline.write(os.path.join(self.d, 'green'), self.base, 'c0ffee')
        ids = baseline.read(os.path.join(self.base, 'default.tests'))
        self.assertEqual(['smoke/smoke/global.release',
                          'umcg/abi/global.numbers',
                          'umcg/switch/switch.fast_path'], ids)
        with open(os.path.join(self.base, 'default.tests')) as f:
            self.assertIn('c0ffee', f.read())

    def test_a_run_that_was_not_green_makes_no_baseline(self):
        self.results('red', run(GREEN, exit_class=1))
        with self.assertRaisesRegex(Fail, 'not green.*default'):
            baseline.write(os.path.join(self.d, 'red'), self.base, 'x')

    def test_written_for_the_green_variants_named(self):
        self.results('mixed', run(GREEN), run(GREEN, exit_class=1,
                                              variant='debug'))
        with contextlib.redirect_stdout(io.StringIO()):
            baseline.write(os.path.join(self.d, 'mixed'), self.base, 'x',
                           ['default'])
        self.assertEqual(['default.tests'], os.listdir(self.base))
        with self.assertRaisesRegex(Fail, 'not green: debug'):
            baseline.write(os.path.join(self.d, 'mixed'), self.base, 'x',
                           ['debug'])
        with self.assertRaisesRegex(Fail, 'no results of kvm'):
            baseline.write(os.path.join(self.d, 'mixed'), self.base, 'x',
                           ['kvm'])

    def test_a_run_without_a_class_is_not_green(self):
        # (as rerun-failed and compare read it: no class recorded is no
        # whole run's result, class 2; a baseline took it for green)
        r = run(GREEN)
        del r['exit_class']
        self.results('classless', r)
        with self.assertRaisesRegex(Fail, 'not green.*default'):
            baseline.write(os.path.join(self.d, 'classless'), self.base, 'x')

    def test_the_same_run_loses_nothing(self):
        rc, out = self.check(run(GREEN))
        self.assertEqual(0, rc, out)
        self.assertIn('baseline default: 3 tests, 0 lost', out)
        self.assertTrue(out.endswith('baseline: 1 passed, 0 failed, '
                                     '0 skipped\n'), out)

    def test_a_test_made_to_skip_is_lost_by_name(self):
        now = [t if t[0] != 'umcg/abi/global.numbers' else
               (t[0], 'skip', 'no UMCG') for t in GREEN]
        rc, out = self.check(run(now))
        self.assertEqual(1, rc, out)
        self.assertIn('baseline: LOST default/umcg/abi/global.numbers: pass -> skip '
                      '(no UMCG)', out)
        self.assertIn('baseline: 0 passed, 1 failed, 0 skipped', out)

    def test_its_counts_are_written_for_make_check(self):
        now = [t if t[0] != 'umcg/abi/global.numbers' else
               (t[0], 'skip', 'no UMCG') for t in GREEN]
        self.results('green', run(GREEN))
        with contextlib.redirect_stdout(io.StringIO()):
            baseline.write(os.path.join(self.d, 'green'), self.base, 'test')
            path = os.path.join(self.d, 'counts.json')
            baseline.main(self.results('now', run(now)), self.base, [],
                          accepted=self.accepted(()), counts_path=path)
        self.assertEqual(counts.Counts(0, 1, 0), counts.read(path))

    def test_counts_that_are_none_are_refused(self):
        path = os.path.join(self.d, 'c.json')
        for text in ('', '{}', '{"counts": {}}',
                     '{"counts": {"passed": null}}',
                     '{"counts": {"passed": -1}}', '[1]'):
            with open(path, 'w') as f:
                f.write(text)
            with self.assertRaises(Fail, msg=text):
                counts.read(path)

    def test_counts_of_several_files_a_line_each_in_one_process(self):
        # make check reads every section's counts with one `pipeline
        # counts` (a Python start each cost a stubbed check run a second)
        good = os.path.join(self.d, 'good.json')
        counts.write(good, counts.Counts(4, 0, 1))
        bad = os.path.join(self.d, 'bad.json')
        with open(bad, 'w') as f:
            f.write('{}')
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(['counts', good, bad, good], 'pipeline')
        # a FILE without counts: an empty line in its place, named on
        # stderr, exit 2
        self.assertEqual(2, rc)
        self.assertEqual('4 0 1 0\n\n4 0 1 0\n', out.getvalue())
        self.assertIn('no counts in %s' % bad, err.getvalue())
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(0, cli.main(['counts', good], 'pipeline'))
        self.assertEqual('4 0 1 0\n', out.getvalue())

    def test_a_test_removed_is_lost(self):
        now = [t for t in GREEN if t[0] != 'umcg/switch/switch.fast_path']
        rc, out = self.check(run(now))
        self.assertEqual(1, rc, out)
        self.assertIn('default/umcg/switch/switch.fast_path: pass -> did not '
                      'run', out)

    def test_a_test_renamed_alone_in_its_place_is_no_loss(self):
        # mrelease_test names the size that worked: 1MB, or 2MB after a
        # retry (the CI run of 7 Dec 2026 called the 2MB pass a loss)
        plan = json.loads(json.dumps(PLAN))
        plan['suites'].append({'name': 'kselftest', 'programs': ['mm'],
                               'optional': [], 'tests': {}})
        name = 'kselftest/mm/mrelease_test/Success reaping a child with %s'
        green = GREEN + [(name % '1MB', 'pass', None),
                         ('kselftest/mm/mremap_test/a', 'pass', None)]
        self.results('green', run(green, plan=plan))
        with contextlib.redirect_stdout(io.StringIO()):
            baseline.write(os.path.join(self.d, 'green'), self.base, 'test')
        for now, lost in (
                ([(name % '2MB', 'pass', None)], None),
                ([(name % '2MB', 'skip', 'no')], name % '1MB'),
                # two new names in the place of one: which is it?
                ([(name % '2MB', 'pass', None), (name % '4MB', 'pass', None)],
                 name % '1MB')):
            out = io.StringIO()
            tests = GREEN + [('kselftest/mm/mremap_test/a', 'pass', None)]
            with contextlib.redirect_stdout(out):
                rc = baseline.main(self.results('now', run(tests + now,
                                                           plan=plan)),
                                   self.base, [])
            self.assertEqual(0 if lost is None else 1, rc, out.getvalue())
            if lost:
                self.assertIn('LOST default/%s' % lost, out.getvalue())

    def test_a_program_gone_from_the_initramfs_loses_its_tests(self):
        # (the plan of the new run no longer names it: a per-program scope
        # would not see it)
        plan = json.loads(json.dumps(PLAN))
        plan['suites'][1]['programs'] = ['switch']
        now = [t for t in GREEN if not t[0].startswith('umcg/abi/')]
        rc, out = self.check(run(now, plan=plan))
        self.assertEqual(1, rc, out)
        self.assertIn('default/umcg/abi/global.numbers: pass -> did not run',
                      out)

    def test_accepted_skips_are_said_not_failed(self):
        now = [t if t[0] != 'umcg/abi/global.numbers' else
               (t[0], 'skip', 'flaky') for t in GREEN]
        rc, out = self.check(run(now), rules=[('umcg/abi/*', 'timing')])
        self.assertEqual(0, rc, out)
        self.assertIn('lost, ok  default/umcg/abi/global.numbers', out)
        self.assertIn('accepted: timing', out)

    def test_a_test_below_a_failed_program_is_that_failure_not_a_loss(self):
        now = [t for t in GREEN if not t[0].startswith('umcg/switch/')]
        now.append(('umcg/switch', 'fail', None))
        rc, out = self.check(run(now))
        self.assertEqual(0, rc, out)

    def test_a_suite_not_planned_or_a_test_not_selected_is_no_loss(self):
        plan = json.loads(json.dumps(PLAN))
        plan['suites'] = plan['suites'][:1]
        rc, out = self.check(run(GREEN[:1], plan=plan))
        self.assertEqual(0, rc, out)
        plan = json.loads(json.dumps(PLAN))
        plan['tests'] = ['umcg/abi*', 'smoke/*']
        now = [t for t in GREEN if 'switch' not in t[0]]
        rc, out = self.check(run(now, plan=plan))
        self.assertEqual(0, rc, out)

    def test_a_variant_without_a_baseline_is_said_not_judged(self):
        rc, out = self.check(run(GREEN[:1], variant='kvm'))
        self.assertEqual(0, rc, out)
        self.assertIn('baseline kvm: no ', out)
        self.assertIn('baseline: 0 passed, 0 failed, 1 skipped', out)

    def test_a_variant_asked_for_without_results_loses_every_test(self):
        self.results('green', run(GREEN))
        with contextlib.redirect_stdout(io.StringIO()):
            baseline.write(os.path.join(self.d, 'green'), self.base, 'x')
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = baseline.main(self.results('now', run(GREEN, variant='kvm')),
                               self.base, ['default', 'kvm'])
        self.assertEqual(1, rc, out.getvalue())
        self.assertIn('baseline: LOST default: no results in', out.getvalue())

    def test_a_bad_baseline_line_is_an_error_naming_it(self):
        os.makedirs(self.base)
        with open(os.path.join(self.base, 'default.tests'), 'w') as f:
            f.write('not a test id\n')
        self.results('now', run(GREEN))
        with self.assertRaisesRegex(Fail, "default.tests: 'not a test id'"):
            baseline.check(os.path.join(self.d, 'now'), self.base)

    def test_a_kselftest_id_with_spaces_reads_back(self):
        # kselftest subtests are named in words ("Arguments > page size"):
        # what write() puts in a baseline, read() takes back
        sub = 'kselftest/clone3/clone3/Arguments > page size'
        self.results('green', run(GREEN + [(sub, 'pass', None)]))
        with contextlib.redirect_stdout(io.StringIO()):
            baseline.write(os.path.join(self.d, 'green'), self.base, 'test')
        self.assertIn(sub, baseline.read(os.path.join(self.base,
                                                      'default.tests')))

    def test_the_command_line(self):
        self.results('green', run(GREEN))
        with contextlib.redirect_stdout(io.StringIO()) as out:
            self.assertEqual(0, cli.main(['baseline', 'write', os.path.join(
                self.d, 'green'), '--baseline', self.base]))
            now = self.results('now', run(GREEN[1:]))
            self.assertEqual(1, cli.main(['baseline', 'check', now,
                                          '--baseline', self.base]))
        self.assertIn('baseline: LOST default/smoke/smoke/global.release', out.getvalue())

    def test_the_repository_baseline_reads(self):
        # every committed file is a list of test ids
        d = os.path.join(TOP, 'ci', 'baseline')
        for f in sorted(os.listdir(d)):
            if f.endswith(baseline.SUFFIX):
                self.assertTrue(baseline.read(os.path.join(d, f)), f)


if __name__ == '__main__':
    unittest.main()
