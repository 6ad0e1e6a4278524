"""The class subcommand (scripts/pipeline class ...): the shell steps ask
pipeline/classes.py, the one place that decides a run's exit status, and
never compute one themselves. Each prints its answer on stdout and exits
0 (2 on a usage error, as every subcommand), so a caller under `set -e`
stops on an error instead of taking it for an answer."""

import argparse
import sys

from pipeline import Fail, classes, counts
from pipeline.cli import Command

MATRIX = """The main job's exit status from its summary's and its build's.

matrix SUMMARY_STATUS [--build-failed]: prints the status scripts/
build-and-boot exits with: summarize's (the highest class), at least 2
when anything failed to build.
"""

JOB = """A CI variant job's exit status from its build's and its boot's.

job BUILD_STATUS BOOT_CLASS: prints the worse of the two (ci/variant-job).
"""

MAIN_JOB = """What make check counts as failures of the main job beyond its summary.

main-job --rc N [--failed N] [--build-failed]: one word a line: 'build'
when something failed to build, 'main-job' when the main job exited N != 0
and its summary.json counts no failure (--failed 0); nothing otherwise.
Without --failed (no summary) the missing summary is counted already.
"""

BISECT = """git bisect run's answer for a boot's class.

bisect CLASS: prints 'good 0', 'bad 1' or 'skip 125' (scripts/bisect-step
exits with the number): a pass is good, a test failure or a kernel
problem bad, a run that tells nothing (class 2, not built) a skip.
"""

HARNESS = """The harness's exit status for how it ended.

harness OUTCOME: prints expect-scripts/boot-and-test.exp's exit status for
OUTCOME (ended, panic, timeout, eof, qemu-failed, interrupted): 0, 3 for
a panic, 2 otherwise. The boot's class is parse's, from the log.
"""

CLASS = """How exit classes combine into a run's exit status (pipeline/classes.py).
"""


def _status(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError('not an exit status: %r' % text) \
            from None
    if not 0 <= n <= 255:
        raise argparse.ArgumentTypeError('not an exit status: %r' % text)
    return n


def _matrix_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('summary', type=_status, metavar='SUMMARY_STATUS')
    ap.add_argument('--build-failed', action='store_true')


def _matrix(a: argparse.Namespace) -> int:
    print(classes.matrix(a.summary, a.build_failed))
    return 0


def _job_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('build', type=_status, metavar='BUILD_STATUS')
    ap.add_argument('boot', type=_status, metavar='BOOT_CLASS')


def _job(a: argparse.Namespace) -> int:
    print(classes.job(a.build, a.boot))
    return 0


def _main_job_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('--rc', type=_status, required=True)
    ap.add_argument('--failed', type=_status, default=None)
    ap.add_argument('--build-failed', action='store_true')


def _main_job(a: argparse.Namespace) -> int:
    for word in classes.main_job_failures(a.rc, a.failed, a.build_failed):
        print(word)
    return 0


def _bisect_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('cls', type=_status, metavar='CLASS')


def _bisect(a: argparse.Namespace) -> int:
    print('%s %d' % classes.bisect(a.cls))
    return 0


def _harness_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('outcome', choices=classes.HARNESS_OUTCOMES,
                    metavar='OUTCOME')


def _harness(a: argparse.Namespace) -> int:
    print(classes.harness_status(a.outcome))
    return 0


# (counts: what make check adds up beside the class rules; here, in a
# module of few imports, because make check runs it for every section)
COUNTS = """Print the counts of sections of make check: "P F S B" a file.

counts FILE...: each FILE's "counts" object (summary.json, or the JSON file
scripts/run-tests and `baseline check` write for a section of make check):
tests passed, failed and skipped, and benchmarks that ran, on one line a
FILE, in their order (scripts/check adds them up, every section's in one
process). A FILE with no counts is an empty line in its place, named on
stderr, and the exit status is 2.
"""


def _counts_args(ap) -> None:
    ap.add_argument('files', metavar='FILE', nargs='+')


def _counts(a) -> int:
    rc = 0
    for path in a.files:
        try:
            c = counts.read(path)
        except Fail as e:
            print('pipeline counts: error: %s' % e, file=sys.stderr)
            print()
            rc = 2
            continue
        print(c.passed, c.failed, c.skipped, c.benchmarks)
    return rc


COMMANDS = [Command('class', CLASS, None, None, subcommands=(
    Command('matrix', MATRIX, _matrix_args, _matrix),
    Command('job', JOB, _job_args, _job),
    Command('main-job', MAIN_JOB, _main_job_args, _main_job),
    Command('bisect', BISECT, _bisect_args, _bisect),
    Command('harness', HARNESS, _harness_args, _harness),
)), Command('counts', COUNTS, _counts_args, _counts)]
