"""In-process unit tests of pipeline/classes.py, the one place that turns
classes into a run's exit status, and of `scripts/pipeline class`, the
shell steps' way to ask it.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import os
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True
TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.path.insert(0, TOP)
from pipeline import classes  # noqa: E402
from pipeline.models import ExitClass  # noqa: E402


def pipeline(*args):
    return subprocess.run([os.path.join(TOP, 'scripts', 'pipeline')] +
                          list(args), capture_output=True, text=True,
                          check=False)


class Rules(unittest.TestCase):
    def test_a_boot_is_its_highest_reason(self):
        self.assertEqual(ExitClass.PASS, classes.of_reasons([]))
        self.assertEqual(ExitClass.KERNEL_PROBLEM,
                         classes.of_reasons([1, 3, 2]))

    def test_an_unexplained_harness_failure_raises_only_a_lower_class(self):
        self.assertTrue(classes.harness_unexplained(ExitClass.PASS, 2))
        self.assertTrue(classes.harness_unexplained(1, 3))
        self.assertFalse(classes.harness_unexplained(3, 2))
        self.assertFalse(classes.harness_unexplained(0, None))
        self.assertFalse(classes.harness_unexplained(0, 0))

    def test_a_lost_test_makes_a_green_summary_a_failure_only(self):
        self.assertEqual(0, classes.summary([0, 0], lost=False))
        self.assertEqual(1, classes.summary([0, 0], lost=True))
        self.assertEqual(3, classes.summary([0, 3], lost=True))
        self.assertEqual(2, classes.summary([2, 1], lost=False))

    def test_a_variant_that_did_not_run_whole_is_one_more_failure(self):
        self.assertEqual([False, False, True, True],
                         [classes.counts_as_failure(c) for c in range(4)])

    def test_regressed(self):
        self.assertFalse(classes.regressed(1, 1, 0, 0, 0))
        self.assertFalse(classes.regressed(2, 0, 0, 0, 0))
        self.assertTrue(classes.regressed(0, 1, 0, 0, 0))
        self.assertTrue(classes.regressed(0, 0, 1, 0, 0))
        self.assertTrue(classes.regressed(0, 0, 0, 1, 0))
        self.assertTrue(classes.regressed(3, 3, 0, 0, 1))

    def test_the_main_job_is_at_least_2_when_a_build_failed(self):
        self.assertEqual(1, classes.matrix(1, False))
        self.assertEqual(2, classes.matrix(0, True))
        self.assertEqual(2, classes.matrix(1, True))
        self.assertEqual(3, classes.matrix(3, True))

    def test_a_ci_job_whose_build_failed_is_class_2_whatever_its_status(self):
        # container-build can end 1 (a tool's own status under set -e):
        # a build failure is no test failure
        self.assertEqual(2, classes.job(1, 0))
        self.assertEqual(2, classes.job(2, 0))
        self.assertEqual(3, classes.job(1, 3))
        self.assertEqual(1, classes.job(0, 1))
        self.assertEqual(0, classes.job(0, 0))

    def test_make_checks_failures_beyond_the_summary(self):
        self.assertEqual(['build'], classes.main_job_failures(2, 0, True))
        self.assertEqual(['main-job'],
                         classes.main_job_failures(1, 0, False))
        self.assertEqual([], classes.main_job_failures(1, 2, False))
        self.assertEqual([], classes.main_job_failures(2, None, False))
        self.assertEqual([], classes.main_job_failures(0, 0, False))

    def test_class_2_by_its_two_names(self):
        self.assertIs(ExitClass.INCOMPLETE, classes.of_reasons([
            ExitClass.INCOMPLETE, 1]))
        self.assertIs(ExitClass.INFRASTRUCTURE, classes.of_reasons([
            ExitClass.INCOMPLETE, 2]))
        self.assertIs(ExitClass.INCOMPLETE, classes.named(2, 'incomplete'))
        self.assertIs(ExitClass.INFRASTRUCTURE, classes.named(2, 'pass'))
        self.assertIs(ExitClass.INCOMPLETE, classes.summary(
            [ExitClass.INCOMPLETE, 0], lost=True))
        self.assertIs(ExitClass.INFRASTRUCTURE, classes.summary(
            [ExitClass.INCOMPLETE, ExitClass.INFRASTRUCTURE], lost=False))

    def test_the_harness_exit_status(self):
        self.assertEqual([0, 3, 2, 2, 2, 2],
                         [classes.harness_status(o)
                          for o in classes.HARNESS_OUTCOMES])
        with self.assertRaises(ValueError):
            classes.harness_status('fine')

    def test_bisect(self):
        self.assertEqual([('good', 0), ('bad', 1), ('skip', 125),
                          ('bad', 1), ('skip', 125)],
                         [classes.bisect(c) for c in range(5)])


class Command(unittest.TestCase):
    def test_the_shell_asks_through_scripts_pipeline_class(self):
        self.assertEqual('bad 1\n', pipeline('class', 'bisect', '3').stdout)
        self.assertEqual('3\n', pipeline('class', 'harness', 'panic').stdout)
        self.assertEqual('2\n', pipeline('class', 'matrix', '1',
                                         '--build-failed').stdout)
        self.assertEqual('2\n', pipeline('class', 'job', '1', '0').stdout)
        self.assertEqual('main-job\n', pipeline(
            'class', 'main-job', '--rc', '1', '--failed', '0').stdout)

    def test_a_bad_argument_is_a_usage_error_not_an_answer(self):
        r = pipeline('class', 'bisect', 'x')
        self.assertEqual(2, r.returncode)
        self.assertEqual('', r.stdout)


if __name__ == '__main__':
    unittest.main()
