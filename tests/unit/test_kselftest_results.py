"""In-process unit tests of pipeline/results on kselftest output: the
runner's nested KTAP as results per nested test, a target cut inside a
program, and the guest's retry of a kselftests/flaky.conf failure
(`@@@ RETRY`): when a retried failure is flaky, and when the first run
stands. The KTAP is real output (tests/fixtures/ktap/README.md), wrapped
in the markers of one kselftest suite.

(Moved from tests/integration/kselftest.bats, where each log was a
parse-console process and each assertion a jq process; the bats file keeps
a retried failure's way through parse-console and summarize.)

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recorded import PATTERNS, TOP  # noqa: E402
from pipeline import ktap, results  # noqa: E402

KTAP = os.path.join(TOP, 'tests', 'fixtures', 'ktap')


def ktap_text(name):
    """The recorded KTAP file NAME of tests/fixtures/ktap."""
    with open(os.path.join(KTAP, name), encoding='utf-8') as f:
        return f.read()


def lines_of(text):
    return text.split('\n')[:-1] if text.endswith('\n') else text.split('\n')


def ksft_log(target, ktap_name, rc):
    """A console log in which the kselftest suite ran target TARGET's real
    output KTAP_NAME, ending with status RC."""
    return (['@@@ HARNESS START variant=v date=2026-12-03T00:00:00Z',
             '@@@ READY release=6.12 uptime=1.0',
             '@@@ HARNESS SEND run-suite kselftest',
             '@@@ SUITE-BEGIN kselftest uptime=1.0',
             '@@@ TEST-BEGIN kselftest/%s uptime=1.0' % target]
            + lines_of(ktap_text(ktap_name))
            + ['@@@ TEST-END kselftest/%s rc=%s uptime=9.0' % (target, rc),
               '@@@ SUITE-END kselftest rc=%s uptime=9.0' % rc,
               '@@@ HARNESS SUITE-DONE suite=kselftest elapsed=9',
               '@@@ HARNESS SEND poweroff -f',
               '@@@ HARNESS QEMU-EXIT status=0', '@@@ HARNESS END elapsed=10'])


def ksft_retry_log(first, retry, second, cut=False):
    """kselftest/futex with a retry: the KTAP text FIRST, the RETRY line,
    the KTAP text SECOND (CUT: the log ends there)."""
    out = ['@@@ HARNESS START variant=default date=2026-12-06T00:00:00Z',
           '@@@ READY release=6.12 uptime=1.0',
           '@@@ HARNESS SEND run-suite kselftest',
           '@@@ SUITE-BEGIN kselftest uptime=1.0',
           '@@@ TEST-BEGIN kselftest/futex uptime=1.0']
    out += lines_of(first) + [retry] + lines_of(second)
    if not cut:
        out += ['@@@ TEST-END kselftest/futex rc=0 uptime=9.0',
                '@@@ SUITE-END kselftest rc=0 uptime=9.0',
                '@@@ HARNESS SUITE-DONE suite=kselftest elapsed=9',
                '@@@ HARNESS SEND poweroff -f',
                '@@@ HARNESS QEMU-EXIT status=0',
                '@@@ HARNESS END elapsed=10']
    return out


def parse(lines):
    """(exit status as parse-console's, results.json as a dict)."""
    res = results.parse('\n'.join(lines) + '\n', PATTERNS)
    return int(res.exit_class), res.to_dict()


def field(r, key, value, out):
    """jq -r '.tests[] | select(.KEY == VALUE) | .OUT': one line each."""
    return '\n'.join('null' if t.get(out) is None else str(t.get(out))
                     for t in r['tests'] if t.get(key) == value)


def n_status(r, status):
    return sum(1 for t in r['tests'] if t['status'] == status)


def replace_line(text, old, new):
    """sed 's/^OLD$/NEW/'."""
    return ''.join(new + '\n' if ln == old + '\n' else ln
                   for ln in text.splitlines(keepends=True))


MANY = ('run.sh/futex_requeue many returned: 11 Resource temporarily '
        'unavailable')
RETRY_MANY = '@@@ RETRY kselftest/futex run.sh/futex_requeue?many*'


class Nested(unittest.TestCase):

    def test_nested_ktap_gives_a_result_per_nested_test_junit_per_target(
            self):
        status, r = parse(ksft_log('clone3', 'noopts-clone3.ktap', 1))
        self.assertEqual(1, status)
        # every nested test, by suite/target/program/test
        self.assertEqual('fail', field(
            r, 'id', 'kselftest/clone3/clone3/clone3() in a new PID_NS',
            'status'))
        self.assertEqual('pass', field(
            r, 'id', 'kselftest/clone3/clone3/simple clone3()', 'status'))
        self.assertEqual('fail', field(
            r, 'id', 'kselftest/clone3/clone3_cap_checkpoint_restore/'
            'global.clone3_cap_checkpoint_restore', 'status'))
        self.assertEqual('New time NS', [t for t in r['tests']
                                         if t['status'] == 'skip'][0]
                         ['skip_reason'])
        # leaves only: counts are tests, not programs
        c = ktap.counts(ktap.flatten(ktap.parse(
            ktap_text('noopts-clone3.ktap'))))
        self.assertEqual([c['pass'], c['fail'], c['skip']],
                         [r['counts'][k] for k in ('pass', 'fail', 'skip')])
        self.assertIsNotNone(r['tests'][0].get('key'))
        # failing lines in the test's excerpt
        self.assertIn('Result (-22) is different than expected (0)', field(
            r, 'id', 'kselftest/clone3/clone3/clone3() in a new PID_NS',
            'excerpt'))
        # the JUnit file as written
        with tempfile.TemporaryDirectory() as out:
            res = results.parse('\n'.join(
                ksft_log('clone3', 'noopts-clone3.ktap', 1)) + '\n', PATTERNS)
            results.write_results(res, out)
            with open(os.path.join(out, 'junit.xml'), encoding='utf-8') as f:
                xml = f.read()
        self.assertIn('<testsuite name="kselftest/clone3"', xml)
        self.assertIn('name="clone3/clone3() in a new PID_NS"', xml)

    def test_a_target_whose_output_ends_inside_a_program_tests_kept(self):
        # its tests kept, the program an error
        _, r = parse([ln for ln in ksft_log('futex', 'noopts-futex-cut.ktap',
                                            0)
                      if not ln.startswith('@@@ TEST-END')])
        self.assertEqual(39, n_status(r, 'pass'))
        self.assertEqual('error', field(r, 'id', 'kselftest/futex/run.sh',
                                        'status'))


class Retry(unittest.TestCase):
    """A retried flaky.conf failure that passes the second time is a pass
    marked flaky (tests/integration/kselftest.bats: through parse-console and
    summarize); any other first-run failure stays."""

    FAIL = ktap_text('futex-requeue-fail.ktap')
    PASS = ktap_text('futex-pass.ktap')

    def many_succeeds(self, r):
        return [t for t in r['tests']
                if t['name'] == 'run.sh/futex_requeue many succeeds']

    def test_a_glob_naming_every_result_marks_only_the_failures_place(self):
        # the flaky mark goes to the test in the failure's place only, not
        # to every pass of the second run
        status, r = parse(ksft_retry_log(
            self.FAIL, '@@@ RETRY kselftest/futex run.sh/*', self.PASS))
        self.assertEqual(0, status)
        self.assertEqual(1, r['counts']['flaky'])
        self.assertEqual([2], [len(t['flaky']) for t in self.many_succeeds(r)])

    def test_failing_the_second_time_as_well_is_a_failure(self):
        status, r = parse(ksft_retry_log(self.FAIL, RETRY_MANY, self.FAIL))
        self.assertEqual(1, status)
        self.assertEqual(2, n_status(r, 'fail'))
        self.assertEqual(0, r['counts']['flaky'])

    def test_a_failure_the_glob_does_not_name_stays_whatever_came_second(
            self):
        status, r = parse(ksft_retry_log(
            self.FAIL,
            '@@@ RETRY kselftest/futex run.sh/futex_requeue?simple*',
            self.PASS))
        self.assertEqual(1, status)
        self.assertEqual('fail', field(r, 'name', MANY, 'status'))
        self.assertEqual([], self.many_succeeds(r))

    def test_the_first_run_stands_without_a_result_in_the_failures_place(
            self):
        # a skip there, the result missing, the output ending after the
        # RETRY
        ok = '# ok 2 futex_requeue many succeeds'
        seconds = {
            'skip': (replace_line(
                self.PASS, ok, '# ok 2 futex_requeue many # SKIP not today'),
                False),
            'missing': (''.join(ln for ln in self.PASS.splitlines(
                keepends=True) if ln != ok + '\n'), False),
            'cut': (''.join(self.PASS.splitlines(keepends=True)[:20]), True),
        }
        self.assertNotIn(ok + '\n', seconds['missing'][0])
        self.assertEqual(len(self.PASS.splitlines()) - 1,
                         len(seconds['missing'][0].splitlines()))
        for name, (second, cut) in seconds.items():
            with self.subTest(second=name):
                status, r = parse(ksft_retry_log(self.FAIL, RETRY_MANY,
                                                 second, cut))
                self.assertGreaterEqual(status, 1)
                self.assertEqual('fail', field(r, 'name', MANY, 'status'))
                self.assertEqual(0, r['counts']['flaky'])

    def test_the_first_run_stands_when_the_test_timed_out(self):
        # results the hang took with it; and a glob never names the test's
        # own result
        top = 'ok 1 selftests: futex: run.sh'
        timeout = replace_line(
            self.FAIL, top,
            'not ok 1 selftests: futex: run.sh # TIMEOUT 120 seconds')
        status, r = parse(ksft_retry_log(timeout, RETRY_MANY, self.PASS))
        self.assertGreaterEqual(status, 1)
        self.assertEqual(0, r['counts']['flaky'])
        exit1 = replace_line(self.PASS, top,
                             'not ok 1 selftests: futex: run.sh # exit=1')
        status, r = parse(ksft_retry_log(
            exit1, '@@@ RETRY kselftest/futex run.sh/*', self.PASS))
        self.assertEqual(1, status)
        self.assertEqual('fail', field(r, 'name', 'run.sh', 'status'))

    def test_a_result_that_moved_into_the_failures_place_is_not_its_own(
            self):
        # the second run's futex_requeue printed nothing (its document
        # gone), futex_waitv's results now sit where futex_requeue's were
        lines = self.PASS.splitlines(keepends=True)
        gone = ''.join(lines[:182] + lines[189:])
        self.assertTrue(any(ln.startswith('# # futex_waitv')
                            for ln in gone.splitlines()))
        # (the bats original's `! grep -q futex_requeue` could not fail a
        # test, and futex_requeue_pi's documents stay: futex_requeue's own
        # document is what must be gone)
        self.assertNotIn('# # futex_requeue: ', gone)
        self.assertNotIn('futex_requeue many', gone)
        status, r = parse(ksft_retry_log(self.FAIL, RETRY_MANY, gone))
        self.assertGreaterEqual(status, 1)
        self.assertEqual(0, r['counts']['flaky'])

    def test_a_description_with_a_slash_is_matched_whole(self):
        # as the guest matches it; two documents' failures of one name are
        # two tests
        f1 = '\n'.join([
            'TAP version 13', '1..1', '# selftests: futex: run.sh',
            '# TAP version 13', '# 1..2', '# not ok 1 timeout waiting',
            '# not ok 2 open /dev/timeout_dev failed',
            '# TAP version 13', '# 1..1', '# not ok 1 timeout waiting',
            'ok 1 selftests: futex: run.sh']) + '\n'
        f2 = '\n'.join([
            'TAP version 13', '1..1', '# selftests: futex: run.sh',
            '# TAP version 13', '# 1..2', '# ok 1 timeout waiting',
            '# ok 2 open /dev/timeout_dev failed',
            '# TAP version 13', '# 1..1',
            '# ok 1 timeout waiting # SKIP not today',
            'ok 1 selftests: futex: run.sh']) + '\n'
        status, r = parse(ksft_retry_log(
            f1, '@@@ RETRY kselftest/futex run.sh/timeout*', f2))
        self.assertEqual(1, status)
        self.assertEqual(0, r['counts']['flaky'])
        self.assertEqual(3, n_status(r, 'fail'))

    def test_a_test_that_passed_the_first_time_keeps_that_run(self):
        # The guest runs every test flaky.conf names a second time, failed
        # or not (it reads no KTAP): a first run without a failure stands.
        # The second run's failures a glob names are that flake again ...
        status, r = parse(ksft_retry_log(self.PASS, RETRY_MANY, self.FAIL))
        self.assertEqual(0, status)
        self.assertEqual(0, n_status(r, 'fail'))
        self.assertEqual(0, r['counts']['flaky'])
        self.assertEqual(['pass'], [t['status']
                                    for t in self.many_succeeds(r)])
        # ... each test once, as after one run
        _, once = parse(ksft_log('futex', 'futex-pass.ktap', 0))
        self.assertEqual(once['counts']['pass'], r['counts']['pass'])
        status, r = parse(ksft_retry_log(self.PASS, RETRY_MANY, self.PASS))
        self.assertEqual(0, status)
        self.assertEqual(once['counts']['pass'], r['counts']['pass'])
        self.assertEqual(0, r['counts']['flaky'])
        # ... any other failure of the second run fails, named so
        status, r = parse(ksft_retry_log(
            self.PASS,
            '@@@ RETRY kselftest/futex run.sh/futex_requeue?simple*',
            self.FAIL))
        self.assertEqual(1, status)
        self.assertEqual('fail', field(r, 'name', MANY + ' (second run)',
                                       'status'))
        self.assertEqual(['pass'], [t['status']
                                    for t in self.many_succeeds(r)])

    def test_each_glob_of_the_test_has_its_retry_line(self):
        # flaky.conf's two futex:run.sh lines: two RETRY lines, one second
        # run
        retry = '\n'.join([RETRY_MANY,
                           '@@@ RETRY kselftest/futex run.sh/futex_wake?*'])
        status, r = parse(ksft_retry_log(self.FAIL, retry, self.PASS))
        self.assertEqual(0, status)
        self.assertEqual(1, r['counts']['flaky'])
        status, r = parse(ksft_retry_log(self.PASS, retry, self.FAIL))
        self.assertEqual(0, status)
        self.assertEqual(0, r['counts']['flaky'])

    def test_a_retry_line_of_another_suite_or_program_is_not_one(self):
        # a RETRY line from a program of another suite (sed: the first
        # four replacements once per line, the first everywhere)
        def other(ln):
            ln = ln.replace('kselftest/futex', 'other/futex')
            for a, b in (('SUITE-BEGIN kselftest', 'SUITE-BEGIN other'),
                         ('SUITE-END kselftest', 'SUITE-END other'),
                         ('run-suite kselftest', 'run-suite other'),
                         ('suite=kselftest', 'suite=other')):
                ln = ln.replace(a, b, 1)
            return ln
        status, r = parse([other(ln) for ln in ksft_retry_log(
            self.FAIL, RETRY_MANY, self.PASS)])
        self.assertEqual(1, status)
        self.assertEqual(0, r['counts']['flaky'])
        # and a RETRY for another program is not this one's
        status, r = parse(ksft_retry_log(
            self.FAIL, '@@@ RETRY kselftest/other run.sh/futex_requeue?many*',
            self.PASS))
        self.assertEqual(1, status)


if __name__ == '__main__':
    unittest.main()
