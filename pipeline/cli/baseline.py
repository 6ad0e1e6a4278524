"""The baseline subcommand (scripts/pipeline baseline check|write): a run's
results against ci/baseline/, the tests a green run of main passed
(pipeline/analysis/baseline.py)."""

import argparse
import os

from pipeline import top
from pipeline.analysis import baseline
from pipeline.cli import Command

CHECK = """Compare a run's results with the baseline: which test was lost.

check RESULTS_DIR [--variants "A B"] [--baseline DIR]: for each variant of
RESULTS_DIR with a file DIR/<variant>.tests (default ci/baseline/), every
test listed there that is now skipped, or absent from a suite the run
planned, is LOST and printed; configs/accepted-skips.txt accepts one with
its reason. A variant without a file is said and not judged. The last line
is "baseline: N passed, N failed, N skipped" over the variants; --counts
FILE (default $SECTION_COUNTS, set by make check) gets the same counts as
JSON, which make check adds up. Exit 1 when a test was lost, 2 on bad
input.
"""

WRITE = """Write the baseline from a green run: DIR/<variant>.tests.

write RESULTS_DIR [--variants "A B"] [--baseline DIR] [--source TEXT]: one
file a variant (of VARIANTS; default every variant of RESULTS_DIR),
every test that passed (or, a benchmark, ran), sorted, under a header that
says where they come from (--source, e.g. the commit). Refuses a set with a
variant that was not green (exit 2). Run it after a green `make check`;
commit the files: a later change that removes a test or makes it skip
removes its line, and so names the change.
"""

BASELINE = """The baseline of make check: the tests a green run of main passed.
"""


def default_dir() -> str:
    return os.environ.get('BASELINE') or os.path.join(top(), 'ci',
                                                      'baseline')


def _check_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('results', metavar='RESULTS_DIR')
    ap.add_argument('--variants', default='', metavar='"A B"')
    ap.add_argument('--baseline', default=None, metavar='DIR')
    ap.add_argument('--counts', metavar='FILE',
                    default=os.environ.get('SECTION_COUNTS') or None)


def _check(a: argparse.Namespace) -> int:
    return baseline.main(a.results, a.baseline or default_dir(),
                         a.variants.split(), counts_path=a.counts)


def _write_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('results', metavar='RESULTS_DIR')
    ap.add_argument('--baseline', default=None, metavar='DIR')
    ap.add_argument('--source', default='a local run', metavar='TEXT')
    ap.add_argument('--variants', default='', metavar='"A B"')


def _write(a: argparse.Namespace) -> int:
    for line in baseline.write(a.results, a.baseline or default_dir(),
                               a.source, a.variants.split()):
        print(line)
    return 0


COMMANDS = [Command('baseline', BASELINE, None, None, subcommands=(
    Command('check', CHECK, _check_args, _check),
    Command('write', WRITE, _write_args, _write),
))]
