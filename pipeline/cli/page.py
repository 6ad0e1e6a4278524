"""The report-html subcommand (make report-html; the end of make, make
matrix and make test-variant): the results page, pipeline/page/."""

import argparse
import os

from pipeline import page, top
from pipeline.cli import Command
from pipeline.page import history

REPORT_HTML = """Write the results page: one static HTML file of a run.

report-html [RESULTS_DIR] [--out FILE] [--record]: RESULTS_DIR is
results/ of a checkout (default), a CI download (results-<variant>/) or
one variant's directory; the page goes to RESULTS_DIR/index.html (--out
FILE elsewhere). It holds everything it shows (CSS, charts as SVG, the
console log excerpts): no server, no network, no other file. At its top
the run's verdict and what did not go as planned (variants that did not
run whole, kernel reports, failures, tests in error, LOST tests); then the
matrix of variants and suites, the regressions against pristine, the
tests lost against ci/baseline/, make compare's lines against the run
before on this machine, every failure with the end of its output and its
console log excerpt, the kernel reports (decoded to file:line where
symbolize could), and the benchmarks and boot times as charts with the
earlier runs on this machine (python3-matplotlib; without it the page
says so and lists the figures).

The history is per user beside the caches: $PIPELINE_CACHE/report-history
(~/.cache/kernel-pipeline/report-history), the last 30 runs. --record
adds this run to it (the pipeline's own runs do; a page of a download
does not). --history DIR reads and writes another, --baseline DIR
compares with other baseline files than ci/baseline/.
Exit 0 when the page is written (whatever the run's verdict), 2 when it
cannot be.
"""


def _args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('results', nargs='?', default='results',
                    metavar='RESULTS_DIR')
    ap.add_argument('--out', default=None, metavar='FILE')
    ap.add_argument('--record', action='store_true')
    ap.add_argument('--history', default=None, metavar='DIR')
    ap.add_argument('--baseline', default=None, metavar='DIR')


def _run(a: argparse.Namespace) -> int:
    base = a.baseline or os.environ.get('BASELINE') or os.path.join(
        top(), 'ci', 'baseline')
    out = page.write(a.results, a.out, baseline_dir=base,
                     history_dir=a.history or history.default_dir(),
                     record=a.record)
    print('results page: %s' % out)
    return 0


COMMANDS = [Command('report-html', REPORT_HTML, _args, _run)]
