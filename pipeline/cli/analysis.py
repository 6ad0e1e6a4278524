"""The subcommands over results: summarize, compare, report, skips and
select-tests (make compare, make skips, make rerun-failed, the main job's
table), durations (the main job's ETA) and bench-table (make bench-build).
Each is a thin layer of arguments over the module that does the work.
"""

import json
import os

from pipeline import Fail, artifacts as art, config, testsel, top
from pipeline.analysis import (bench, compare, report, runs, selection,
                               skips, summary)
from pipeline.cli import Command

SUMMARIZE = """One table and one summary.json for a whole boot matrix.

Reads RESULTS_DIR/<variant>/results.json of each VARIANT asked for (written
by parse or record-failure), writes RESULTS_DIR/summary.json and
prints a table: variant, boot seconds, passed, failed, regressions,
errors, skipped, crashed, bench, duration, class; then the reason of every
variant that did not pass, and last one line "matrix: N passed, N failed,
N skipped" (tests; a variant that crashed, timed out, did not build or has
no result counts as one more failure). Benchmarks that ran (suite.conf's
`benchmarks`: status bench) are no passes: the line before it says
"benchmarks: N ran (not counted as passed)" when there were any.

Regressions are judged against the variant `pristine` (the kernel without
the series) when it is among the variants: a test that failed (or ended
in error) in a variant and passed (or, a benchmark, ran) on pristine is a
regression; one that failed on pristine too is a known failure. A test is
the same test in both runs by its id, else by its position in the same
place (pipeline/analysis/identity.py). A test that passed (ran) on
pristine and is skipped in a variant, or absent from a program the variant
ran, is LOST: a regression too, unless configs/accepted-skips.txt accepts
it with a reason. Without pristine in the run the column is "-".
summary.json counts each variant's skips per reason (skip_reasons; make
skips VARIANT=x lists them).

A variant asked for without a results.json is class 2 ("no result"), never
left out; results of variants not asked for are neither shown nor counted.
A LOST test counts as a failure in the matrix line and makes the exit
status at least 1. The exit status is the highest class of all (0 only if
every variant passed); 2 on a usage error or when the summary cannot be
written.
"""

COMPARE = """What changed between two sets of results.

A and B are results directories: results/ of a checkout (<variant>/
results.json), a downloaded CI result set (results-<variant>/results.json),
or one variant's directory. Variants are matched by the name in their
results.json. Per variant and test: new failures (failing in B, not in A),
fixed tests, other status changes and tests run in only one of them; the
exit class, kernel problems, boot time and every numeric metric the tests
printed ("# metric: name=value") side by side with their ratio. A metric
change is shown, never judged (one run is no benchmark). A test is the
same test in A and B by the rule the summary judges pristine by
(pipeline/analysis/identity.py).

A test that passed in A and is skipped or absent in B is LOST: it no
longer tests anything, which is a regression unless
configs/accepted-skips.txt accepts it with a reason (--accepted FILE for
another list). A benchmark that ran is bench, not pass: the two are one
good outcome here.

Exit 1 when B regressed: a new failure, a LOST test not accepted, a worse
exit class, a new kernel problem, or a variant of A missing in B; 0
otherwise; 2 on bad input.
"""

REPORT = """A run's results for people, one line per test.

One line per test: [PASS], [BENCH] (a benchmark that ran: it measured,
it is no pass), [FAIL], [SKIP], or [CRASH] (a test that died with the
kernel), with its duration, skip reason or metrics; under each
failure the end of its output; then one [CRASH] line per kernel report
with the report itself, decoded to file:line when scripts/pipeline symbolize could
("decoded" in results.json), and one [ERROR] line per infrastructure
problem (boot or suite timeout, silence, no result). Colours only on a
terminal, never with NO_COLOR set (https://no-color.org) or TERM=dumb,
unless --color always. Exit 0, or 2 when the results cannot be read.
"""

SKIPS = """What a run did not test: its skips by reason.

RESULTS: a variant's results directory (results/<variant>), or a results
directory with one per variant. Prints, per variant, every skip reason with
its count, most frequent first, and the tests behind each (`make skips
VARIANT=x`). summary.json carries the same counts (skip_reasons).

A test is LOST when it passed (a benchmark: ran) in the run it is compared
against (`make compare A=... B=...`) or on pristine (summarize), and now
skipped or did not run at all: a regression, unless
configs/accepted-skips.txt names it. Each line there is
    GLOB  why this test may stop running or skip
GLOB matches a test id (suite/program/test; fnmatch, '*' crosses '/'); the
reason is required. Exit 0, or 2 on bad input.
"""

SELECT = """TESTS selections for the scripts (pipeline/testsel.py).

  check GLOB...      exit 2 naming a glob that is not valid
  suites VARIANT     the suites of VARIANT (configs/) that the globs in
                     $TESTS select, space-separated
  failed RESULTS_DIR what to run again to repeat exactly what failed in
                     RESULTS_DIR/results.json: two lines, SUITES then
                     TESTS (both empty: nothing failed)

A failed test is selected by its own id, escaped so that it matches only
itself; a program whose result is missing (it crashed, hung or exited
early) or failed only by its exit status is selected whole, and so is the
program that was running when the kernel reported a problem. A run that
failed before any test (no boot, a timeout in the boot) is repeated as it
was: its suites, no TESTS. Exit 0, or 2 on bad input.
"""


def _summarize_args(ap):
    ap.add_argument('top', metavar='RESULTS_DIR')
    ap.add_argument('variants', nargs='+', metavar='VARIANT')


def _compare_args(ap):
    ap.add_argument('--variants', default='',
                    help='only these variants (space-separated)')
    ap.add_argument('--accepted', metavar='FILE', help='the tests that may '
                    'be LOST, with reasons (default: configs/'
                    'accepted-skips.txt)')
    ap.add_argument('a', metavar='A')
    ap.add_argument('b', metavar='B')


def _report_args(ap):
    ap.add_argument('--color', choices=('auto', 'always', 'never'),
                    default='auto')
    ap.add_argument('--failures', action='store_true',
                    help='only the [FAIL], [CRASH] and [ERROR] lines and '
                    'the output under them')
    ap.add_argument('results', metavar='RESULTS')


def _skips_args(ap):
    ap.add_argument('results', nargs='+', metavar='RESULTS')


def _select_args(ap):
    sub = ap.add_subparsers(dest='cmd', required=True, metavar='COMMAND')
    sub.add_parser('check').add_argument('globs', nargs='+', metavar='GLOB')
    sub.add_parser('suites').add_argument('variant', metavar='VARIANT')
    sub.add_parser('failed').add_argument('results', metavar='RESULTS_DIR')


def suites_for(name: str, globs: list[str]) -> list[str]:
    """The suites of variant NAME that GLOBS select."""
    v = config.Variant(name)
    return testsel.suites(v.params['suites'], v.initramfs_suites(), globs)


def _select(a) -> int:
    if a.cmd == 'check':
        testsel.parse(' '.join(a.globs))
    elif a.cmd == 'suites':
        globs = testsel.parse(os.environ.get('TESTS', ''))
        out = suites_for(a.variant, globs)
        if not out:
            raise Fail("TESTS='%s' selects none of the suites of %s"
                       % (' '.join(globs), a.variant))
        print(' '.join(out))
    else:
        res = runs.load(os.path.join(a.results, 'results.json'),
                        ' (run make test-variant first)')
        r = selection.failed(res)
        print(' '.join(r.suites))
        print(' '.join(r.tests))
    return 0


DURATIONS = """What the last run took, for an ETA before this one.

Prints "kernel NAME SECONDS" for each kernel from the previous build's
artifacts/manifest.json (its kernel.json durations, total), and "boot NAME
SECONDS" for each variant from results/NAME/results.json (duration_s);
"-" where the last run left no number. Read before a run replaces them.
ARTIFACTS and RESULTS name other directories. Exit 0, or 2 with a message.
"""


def _durations_args(ap):
    ap.add_argument('--kernel', action='append', default=[], metavar='NAME')
    ap.add_argument('--boot', action='append', default=[], metavar='NAME')


def _load(path):
    """The JSON at path, or None: a missing or broken record is no number."""
    try:
        with open(path, encoding='utf-8') as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _seconds(value):
    return '%.0f' % value if isinstance(value, (int, float)) else '-'


def _durations(a) -> int:
    # (not pipeline/artifacts.py's readers: this runs before a build, on
    # whatever an earlier one left, and a broken file is no error here)
    artifacts = art.artifacts_dir()
    results = os.environ.get('RESULTS') or os.path.join(top(), 'results')
    manifest = _load(os.path.join(artifacts, 'manifest.json')) or {}
    kernels = manifest.get('kernels') if isinstance(manifest, dict) else None
    for k in a.kernel:
        rec = (kernels or {}).get(k) or {}
        total = (rec.get('durations_s') or {}).get('total') \
            if isinstance(rec, dict) else None
        print('kernel %s %s' % (k, _seconds(total)))
    for v in a.boot:
        res = _load(os.path.join(results, v, 'results.json')) or {}
        print('boot %s %s' % (v, _seconds(res.get('duration_s')
                                          if isinstance(res, dict) else None)))
    return 0


COMMANDS = [
    Command('summarize', SUMMARIZE, _summarize_args,
            lambda a: summary.main(a.top, a.variants)),
    Command('compare', COMPARE, _compare_args,
            lambda a: compare.main(a.a, a.b, a.variants.split(), a.accepted)),
    Command('report', REPORT, _report_args,
            lambda a: report.main(a.results, a.color, a.failures)),
    Command('skips', SKIPS, _skips_args, lambda a: skips.main(a.results)),
    Command('select-tests', SELECT, _select_args, _select),
    Command('durations', DURATIONS, _durations_args, _durations),
    Command('bench-table', bench.DOC, bench.configure, bench.run),
]
