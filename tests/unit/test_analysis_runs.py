"""In-process unit tests of pipeline/analysis over a run's results: the
summary with its regressions against pristine, the report, the rerun
selection, the command line (summarize, select-tests failed, skips),
durations and the benchmark table (tests/unit/resultsets.py: the results
sets; tests/tooling/select.bats holds the processes).

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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from resultsets import (t, res, fake, write, quiet, LOGS)  # noqa: E402
from pipeline import cli, results  # noqa: E402
from pipeline.analysis import report, selection, skips, summary  # noqa: E402


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
