"""In-process unit tests of benchmarks: tests a suite.conf declares as
`benchmarks` (they print `# metric:` lines and assert nothing). One that
ran to the end is 'bench' in results.json, never counted as passed; one
that failed, crashed or never ran is a failure or an error as any test;
one that skipped is a skip. The declaration travels suite.conf ->
variant.json (pipeline/artifacts.py) -> plan.json (scripts/pipeline boot plan)
-> pipeline/results; pipeline/analysis (summary, compare, skips, report)
and scripts/check read the status.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import contextlib
import dataclasses
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True
TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   '..', '..'))
SCRIPTS = os.path.join(TOP, 'scripts')
sys.path.insert(0, TOP)
from pipeline import config as variants  # noqa: E402
from pipeline import Fail, artifacts, boot, describe, results  # noqa: E402
from pipeline.analysis import compare, report, skips, summary  # noqa: E402


# A kselftest_harness.h program with one test that checks and one that
# only measures; SPEED is the measuring one's result line.
def program(speed='ok 2 t.speed', after=True):
    lines = ['TAP version 13', '1..2',
             '# Starting 2 tests from 1 test cases.',
             '#  RUN           t.check ...', '#            OK  t.check',
             'ok 1 t.check', '#  RUN           t.speed ...',
             '# metric: ns_per_call=12.5']
    if speed is None:
        return lines            # the program died in the benchmark
    lines += ['#            OK  t.speed', speed]
    if after:
        lines += ['# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:0 error:0']
    return lines


def console(lines, rc=0, more=()):
    """A console log of suite s: program p printing LINES, ending with
    rc, then the programs of MORE ((name, lines, rc))."""
    out = ['@@@ HARNESS START variant=v date=2026-12-06T00:00:00Z',
           '@@@ READY release=6.12 uptime=1.0',
           '@@@ HARNESS SEND run-suite s',
           '@@@ SUITE-BEGIN s uptime=1.0']
    for name, ls, r in (('p', lines, rc),) + tuple(more):
        out += ['@@@ TEST-BEGIN s/%s uptime=1.0' % name] + list(ls) + \
            ['@@@ TEST-END s/%s rc=%s uptime=2.0' % (name, r)]
    out += ['@@@ SUITE-END s rc=%d uptime=2.0' % (0 if rc == 0 else 1),
            '@@@ HARNESS SUITE-DONE suite=s elapsed=2',
            '@@@ HARNESS SEND poweroff -f',
            '@@@ HARNESS QEMU-EXIT status=0', '@@@ HARNESS END elapsed=3']
    return '\n'.join(out) + '\n'


def plan(benchmarks=('s/p/t.speed',), programs=('p',), tests=None):
    """A plan (scripts/pipeline boot plan) of suite s with BENCHMARKS declared."""
    return {'format': 'kernel-pipeline-plan/1', 'variant': 'v',
            'tests': [], 'checkers': [], 'final': '',
            'suites': [{'name': 's', 'programs': list(programs),
                        'optional': [],
                        'tests': tests if tests is not None else
                        {'p': ['t.check', 't.speed']},
                        'benchmarks': list(benchmarks)}]}


def parse(text, p=None):
    return results.parse(text, patterns=[], plan=p or plan())


def statuses(res):
    return {t.id: t.status for t in res.tests}


class Verdict(unittest.TestCase):
    def test_a_declared_benchmark_that_ran_is_bench_not_pass(self):
        res = parse(console(program()))
        self.assertEqual({'s/p/t.check': 'pass', 's/p/t.speed': 'bench'},
                         statuses(res))
        self.assertEqual(0, res.exit_class)
        c = res.counts
        self.assertEqual((1, 1, 0, 0, 0, 2),
                         (c['pass'], c['bench'], c['fail'], c['skip'],
                          c['error'], c['total']))
        # its measurements are kept as before
        speed = [t for t in res.tests if t.name == 't.speed'][0]
        self.assertEqual({'ns_per_call': 12.5}, speed.metrics)

    def test_recorded_isolated_run_getppid_cost_is_bench(self):
        # a real console log (tests/fixtures/console-logs/isolated.log) against its
        # recorded plan, which predates benchmarks, and with them declared
        logs = os.path.join(TOP, 'tests', 'fixtures', 'console-logs')
        text = results.read_log(os.path.join(logs, 'isolated.log'))
        p = results.read_plan(os.path.join(logs, 'isolated.plan.json'))
        res = results.parse(text, plan=p)
        self.assertEqual((28, 0), (res.counts['pass'],
                                   res.counts['bench']))
        for sp in p['suites']:
            if sp['name'] == 'isolation':
                sp['benchmarks'] = ['isolation/cost/cost.getppid_cost']
        res = results.parse(text, plan=p)
        self.assertEqual(0, res.exit_class)
        self.assertEqual((27, 1, 32), (res.counts['pass'],
                                       res.counts['bench'],
                                       res.counts['total']))
        self.assertEqual(['isolation/cost/cost.getppid_cost'],
                         [t.id for t in res.tests
                          if t.status == 'bench'])

    def test_undeclared_it_is_a_pass_and_a_program_glob_takes_all(self):
        res = parse(console(program()), plan(benchmarks=()))
        self.assertEqual({'s/p/t.check': 'pass', 's/p/t.speed': 'pass'},
                         statuses(res))
        self.assertEqual(0, res.counts['bench'])
        res = parse(console(program()), plan(benchmarks=('s/p',)))
        self.assertEqual({'bench'}, set(statuses(res).values()))

    def test_a_benchmark_that_failed_is_a_failure(self):
        res = parse(console(program('not ok 2 t.speed'), rc=1))
        self.assertEqual('fail', statuses(res)['s/p/t.speed'])
        self.assertEqual(1, res.exit_class)
        self.assertEqual((1, 0, 1), (res.counts['pass'],
                                     res.counts['bench'],
                                     res.counts['fail']))

    def test_a_benchmark_that_skipped_is_a_skip(self):
        res = parse(console(program('ok 2 t.speed # SKIP no UMCG')))
        self.assertEqual('skip', statuses(res)['s/p/t.speed'])
        self.assertEqual(0, res.counts['bench'])

    def test_a_benchmark_that_crashed_is_an_error(self):
        # the program died (SIGSEGV) inside the benchmark: no result line
        res = parse(console(program(None), rc=139))
        self.assertEqual('error', statuses(res)['s/p/t.speed'])
        self.assertEqual(1, res.exit_class)
        self.assertEqual(0, res.counts['bench'])

    def test_a_planned_benchmark_that_did_not_run_is_an_error(self):
        # its program listed it, it printed no result, the program exited 0
        lines = ['1..1' if ln == '1..2' else ln for ln in program()
                 if 't.speed' not in ln]
        res = parse(console(lines))
        self.assertEqual('error', statuses(res)['s/p/t.speed'])
        self.assertEqual(2, res.exit_class)
        # a benchmark program that never began
        res = parse(console(program()),
                    plan(benchmarks=('s/q',), programs=('p', 'q')))
        self.assertEqual('error', statuses(res)['s/q'])
        self.assertEqual(2, res.exit_class)
        self.assertEqual(0, res.counts['bench'])

    def test_summary_line_counts_benchmarks_apart_from_passes(self):
        line = results.summary_line(parse(console(program())))
        self.assertIn('1 passed, 0 failed, 0 skipped, 0 errors, '
                      '1 benchmark ran', line)

    def test_junit_a_benchmark_is_a_testcase_without_failure_named_so(self):
        tree = results.junit_tree(parse(console(program())))
        suite = tree.getroot().find("testsuite[@name='s']")
        self.assertEqual(('2', '0', '0', '0'),
                         tuple(suite.get(k) for k in ('tests', 'failures',
                                                      'errors', 'skipped')))
        case = suite.find("testcase[@name='t.speed']")
        self.assertEqual([], [e.tag for e in case
                              if e.tag in ('failure', 'error', 'skipped')])
        self.assertEqual('benchmark', case.find(
            "properties/property[@name='kind']").get('value'))
        self.assertIn('metric: ns_per_call=12.5',
                      case.find('system-out').text)
        # a test that passed is no benchmark
        self.assertIsNone(suite.find("testcase[@name='t.check']/properties"))

    def test_ktap_file_names_the_benchmarks_of_a_program(self):
        with tempfile.TemporaryDirectory() as d:
            results.write_results(parse(console(program())), d)
            with open(os.path.join(d, 's.ktap'), encoding='utf-8') as f:
                text = f.read()
        self.assertIn('# benchmarks (ran; not counted as passed): '
                      't.speed\nok 1 p\n', text)


def results_dir(top, variant, res):
    results.write_results(dataclasses.replace(res, variant=variant),
                          os.path.join(top, variant))


class Summary(unittest.TestCase):
    def run_summarize(self, top, *names):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = summary.main(top, list(names))
        return rc, out.getvalue().splitlines()

    def test_matrix_line_keeps_its_format_benchmarks_on_a_line_before(self):
        with tempfile.TemporaryDirectory() as d:
            results_dir(d, 'v', parse(console(program())))
            rc, lines = self.run_summarize(d, 'v')
            with open(os.path.join(d, 'summary.json'), encoding='utf-8') as f:
                s = json.load(f)
        self.assertEqual(0, rc)
        self.assertEqual('matrix: 1 passed, 0 failed, 0 skipped', lines[-1])
        self.assertEqual('benchmarks: 1 ran (not counted as passed)',
                         lines[-2])
        self.assertEqual({'passed': 1, 'failed': 0, 'skipped': 0,
                          'benchmarks': 1}, s['counts'])
        self.assertEqual(1, s['variants'][0]['benchmarks'])

    def test_against_pristine_a_benchmark_that_fails_or_stops_regresses(self):
        base = parse(console(program()))
        with tempfile.TemporaryDirectory() as d:
            results_dir(d, 'pristine', base)
            results_dir(d, 'v', parse(console(program('not ok 2 t.speed'),
                                              rc=1)))
            # it ran on pristine and skips here: LOST
            results_dir(d, 'w', parse(console(
                program('ok 2 t.speed # SKIP no UMCG'))))
            self.run_summarize(d, 'pristine', 'v', 'w')
            with open(os.path.join(d, 'summary.json'), encoding='utf-8') as f:
                rows = {r['variant']: r for r in json.load(f)['variants']}
        self.assertEqual(['s/p/t.speed'], rows['v']['regressed_tests'])
        self.assertEqual(['s/p/t.speed'], rows['w']['lost_tests'])


class Compare(unittest.TestCase):
    def results(self, status):
        """results.json of a run whose benchmark ended STATUS (None: not
        there)."""
        tests = [{'id': 's/p/t.check', 'status': 'pass', 'note': None}]
        if status is not None:
            tests.append({'id': 's/p/t.speed', 'status': status,
                          'note': None})
        return {'variant': 'v', 'exit_class': 0, 'tests': tests,
                'plan': plan()}

    def test_pass_before_the_change_and_bench_after_is_no_change(self):
        d = compare.compare_variant(self.results('pass'),
                                    self.results('bench'))
        self.assertFalse(d.regressed)
        self.assertEqual(compare.Tally(), d.tally)
        self.assertEqual([], [ln for ln in d.lines if 's/p/t.speed' in ln])
        d = compare.compare_variant(self.results('bench'),
                                    self.results('pass'))
        self.assertFalse(d.regressed)
        self.assertEqual(0, d.tally.changed)

    def test_a_benchmark_that_ran_and_then_fails_or_is_missing_regresses(self):
        d = compare.compare_variant(self.results('bench'),
                                    self.results('fail'))
        self.assertTrue(d.regressed)
        self.assertEqual(1, d.tally.new)
        d = compare.compare_variant(self.results('bench'),
                                    self.results(None))
        self.assertTrue(d.regressed)
        self.assertEqual(1, d.tally.lost)
        self.assertIn('   LOST         s/p/t.speed: bench -> -', d.lines)
        # and one that failed and ran again is fixed
        d = compare.compare_variant(self.results('fail'),
                                    self.results('bench'))
        self.assertFalse(d.regressed)
        self.assertEqual(1, d.tally.fixed)

    def test_skips_lost_a_benchmark_that_ran_is_lost_when_it_skips(self):
        before = [{'id': 's/p/t.speed', 'status': 'bench'}]
        self.assertEqual([('s/p/t.speed', 'skip')], skips.lost(
            before, [{'id': 's/p/t.speed', 'status': 'skip'}]))
        self.assertEqual([('s/p/t.speed', None)], skips.lost(before, []))


class Report(unittest.TestCase):
    def test_a_benchmark_is_shown_as_one(self):
        res = parse(console(program()))
        lines = report.render(res.to_dict(), 'results.json', False)
        speed = [ln for ln in lines if 's/p/t.speed' in ln]
        self.assertEqual(1, len(speed))
        self.assertTrue(speed[0].startswith('[BENCH] s/p/t.speed'), speed)
        self.assertIn('ns_per_call=12.5', speed[0])


class Declaration(unittest.TestCase):
    """suite.conf's `benchmarks` to variant.json and the plan."""

    def tearDown(self):
        variants._suite_cache.clear()

    def suite_conf(self, text):
        d = tempfile.mkdtemp()
        self.addCleanup(lambda: subprocess.run(['rm', '-rf', d], check=True))
        os.makedirs(os.path.join(d, 's'))
        with open(os.path.join(d, 's', 'suite.conf'), 'w',
                  encoding='utf-8') as f:
            f.write(text)
        variants._suite_cache.clear()
        old = os.environ.get('GUEST_TESTS')
        os.environ['GUEST_TESTS'] = d
        try:
            return variants.suite_conf('s')
        finally:
            if old is None:
                del os.environ['GUEST_TESTS']
            else:
                os.environ['GUEST_TESTS'] = old

    def test_suite_conf_key_globs_over_program_and_test(self):
        self.assertEqual([], self.suite_conf('timeout = 5\n')['benchmarks'])
        self.assertEqual(['cost/cost.getppid_cost', 'switch_*'],
                         self.suite_conf('benchmarks = cost/cost.getppid_cost'
                                         ' switch_*\n')['benchmarks'])
        for bad in ('/cost', 'cost//x', 'cost/', "co'st"):
            with self.assertRaises(Fail) as e:
                self.suite_conf('benchmarks = %s\n' % bad)
            self.assertIn('benchmarks', str(e.exception))

    def test_the_project_declares_its_benchmarks(self):
        variants._suite_cache.clear()
        self.assertEqual(['cost/cost.getppid_cost'],
                         variants.suite_conf('isolation')['benchmarks'])
        # bench_errors asserts (a broken measurement must end the run): a
        # test, not a benchmark
        self.assertEqual(['switch_bench'],
                         variants.suite_conf('umcg-bench')['benchmarks'])

    def test_variant_json_has_them_as_test_ids_and_a_typo_is_an_error(self):
        da = describe   # pipeline/describe.py's variant.json writer
        progs = ['cost', 'effect']
        tests = {'cost': ['cost.exit_hook_only_while_active',
                          'cost.getppid_cost']}
        self.assertEqual(['isolation/cost/cost.getppid_cost', 'isolation/e*'],
                         da.benchmarks('isolation', ['cost/cost.getppid_cost',
                                                     'e*'], progs, tests))
        for typo in ('cost/cost.getpid_cost', 'costs'):
            with self.assertRaises(Fail) as e:
                da.benchmarks('isolation', [typo], progs, tests)
            self.assertIn("'%s'" % typo, str(e.exception))

    def test_the_plan_carries_them_and_an_old_variant_json_has_none(self):
        bp = boot   # pipeline/boot.py, which scripts/pipeline boot plan prints
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, 'v'))
            with open(os.path.join(d, 'v', 'config'), 'w',
                      encoding='utf-8') as f:
                f.write('CONFIG_X=y\n')
            v = {'variant': 'v', 'kernel': {'variant': 'v'},
                 'params': {'cmdline': '', 'final': ''},
                 'suites': {'s': {'programs': ['p', 'q'],
                                  'benchmarks': ['s/p']},
                            'old': {'programs': ['r']}}}
            p = bp.plan(d, v, ['s', 'old'], [])
        self.assertEqual([['s/p'], None],
                         [s.get('benchmarks') for s in p['suites']])


class CheckLine(unittest.TestCase):
    """scripts/check's last line is CI's: its format stays; benchmarks
    that ran are said on a line before it."""

    def run_check(self, main_job_exit=0):
        """(exit status, stdout lines) of scripts/check on stubs whose
        main job writes a summary of 3 passed and 2 benchmarks and exits
        MAIN_JOB_EXIT."""
        with tempfile.TemporaryDirectory() as p:
            os.makedirs(os.path.join(p, 'scripts'))
            for t in ('system', 'integration'):
                os.makedirs(os.path.join(p, 'tests', t))
                open(os.path.join(p, 'tests', t, 'x.bats'), 'w').close()
            for f in ('check', 'lib.sh'):
                with open(os.path.join(SCRIPTS, f), encoding='utf-8') as src, \
                        open(os.path.join(p, 'scripts', f), 'w',
                             encoding='utf-8') as dst:
                    dst.write(src.read())
            os.chmod(os.path.join(p, 'scripts', 'check'), 0o755)
            stubs = {
                # (a section's counts: the JSON it writes to
                # $SECTION_COUNTS)
                'run-tests': 'echo \'{"counts": {"passed": 4, "failed": 0, '
                             '"skipped": 1}}\' >"$SECTION_COUNTS"',
                'in-runtime': 'exec "$@"',
                # (class and counts: pipeline/classes.py's rules and
                # pipeline/counts.py's reader, the real ones)
                'pipeline': 'if [ "$1" = baseline ]; then echo \'{"counts": '
                            '{"passed": 0, "failed": 0, "skipped": 0}}\' '
                            '>"$SECTION_COUNTS"; elif [ "$1" = class ] || '
                            '[ "$1" = counts ]; then exec %s "$@"; else echo '
                            'default; fi' % os.path.join(SCRIPTS, 'pipeline'),
                # summarize's summary.json (check counts it), its lines
                'build-and-boot': 'mkdir -p results; echo \'{"counts": '
                                  '{"passed": 3, "failed": 0, "skipped": 0, '
                                  '"benchmarks": 2}}\' '
                                  '>results/summary.json; '
                                  'echo "benchmarks: 2 ran (not counted as '
                                  'passed)"; echo "matrix: 3 passed, 0 '
                                  'failed, 0 skipped"; exit %d'
                                  % main_job_exit,
            }
            for name, body in stubs.items():
                path = os.path.join(p, 'scripts', name)
                with open(path, 'w', encoding='utf-8') as f:
                    f.write('#!/bin/sh\n%s\n' % body)
                os.chmod(path, 0o755)
            env = {k: v for k, v in os.environ.items()
                   if k not in ('TOP', 'CHECK', 'VARIANTS', 'RESULTS')}
            r = subprocess.run([os.path.join(p, 'scripts', 'check')],
                               capture_output=True, text=True, env=env,
                               check=False)
        return r.returncode, r.stdout.splitlines(), r.stdout + r.stderr

    def test_last_line_unchanged_benchmarks_before_it(self):
        rc, lines, out = self.run_check()
        self.assertEqual(0, rc, out)
        self.assertEqual('check: 15 passed, 0 failed, 3 skipped', lines[-1])
        # (the matrix's own line is further up, in its section)
        self.assertEqual('benchmarks: 2 ran (not counted as passed)',
                         lines[-2])

    def test_a_failed_main_job_is_never_a_pass(self):
        # summarize died after writing summary.json, or a variant is
        # class 1 with no failing test: the summary says 0 failed
        rc, lines, out = self.run_check(main_job_exit=2)
        self.assertNotEqual(0, rc, out)
        self.assertEqual('check: 15 passed, 1 failed, 3 skipped', lines[-1])


if __name__ == '__main__':
    unittest.main()
