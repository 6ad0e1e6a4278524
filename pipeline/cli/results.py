"""The parse subcommand (scripts/pipeline parse, make parse): classify one
saved console.log and write its results; and record-failure, the results
of a run that never booted.

The work is pipeline.results.parse(), a pure function of the log text;
this module reads the files, writes the results and prints the summary
line.
"""

import argparse
import os
import sys
import traceback

from pipeline import Fail, steperror
from pipeline.analysis import report
from pipeline.cli import Command
from pipeline.results import (PATTERNS_FILE, PatternError, failure_result,
                              load_patterns, parse, read_log, read_plan,
                              summary_line, write_results)
from pipeline.results import symbolize

DOC = """Classify a saved QEMU serial console log (expect-scripts/PROTOCOL.md).

Exit status is the boot's exit class: 0 all passed, 1 a test failed,
2 infrastructure problem or timeout, 3 the kernel crashed or reported a bug.
Prints a one-line summary; with --out writes DIR/results.json, DIR/junit.xml
and DIR/<suite>.ktap. The log is held against the boot's plan
(scripts/pipeline boot plan --plan-out): --plan FILE, else plan.json next to LOG
when there is one.

With --symbolize and --report (and --out), the rest of the end of a boot
(scripts/test-variant) in the same process: the kernel reports decoded to
file:line (the symbolize subcommand) and the run for people on stderr
(the report subcommand). Neither changes the exit status: a failure of
either is said and the verdict stands.
"""


def configure(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('--variant', help='variant name (default: from the '
                    '@@@ HARNESS START line)')
    ap.add_argument('--out', metavar='DIR', help='write results.json, '
                    'junit.xml and <suite>.ktap here')
    ap.add_argument('--harness-status', type=int, metavar='N',
                    help="the harness's exit status: one the log does not "
                    'explain is class 2, in results.json too')
    ap.add_argument('--plan', metavar='FILE', help='what the boot was '
                    'planned to run (default: plan.json next to LOG, if '
                    'any); a planned program that did not run is class 2')
    ap.add_argument('--no-plan', action='store_true',
                    help='do not hold the log against a plan')
    ap.add_argument('--quiet', action='store_true',
                    help='no summary line on stdout')
    ap.add_argument('--symbolize', metavar='ARTIFACTS',
                    help='then decode the kernel reports against the '
                    'kernel booted from ARTIFACTS (needs --out)')
    ap.add_argument('--report', action='store_true',
                    help='then the run for people, on stderr (needs --out)')
    ap.add_argument('--patterns', default=PATTERNS_FILE,
                    help=argparse.SUPPRESS)
    ap.add_argument('log', metavar='LOG')


def _after(what: str, step) -> None:
    """STEP(), whose failure is said but never changes the verdict (as
    `symbolize || true` did in the shell)."""
    try:
        step()
    except Fail as e:
        print('%s: error: %s' % (what, e), file=sys.stderr)
    except Exception:  # noqa: BLE001 - the verdict is already written
        traceback.print_exc()
        print('%s: internal error (the verdict stands)' % what,
              file=sys.stderr)


def run(a: argparse.Namespace) -> int:
    if (a.symbolize or a.report) and not a.out:
        raise Fail('--symbolize and --report need --out (they read the '
                   'results it writes)')
    try:
        text = read_log(a.log)
        patterns = load_patterns(a.patterns)
        plan_path = a.plan
        if plan_path is None and not a.no_plan:
            near = os.path.join(os.path.dirname(a.log), 'plan.json')
            plan_path = near if os.path.isfile(near) else None
        plan = None if a.no_plan or not plan_path else read_plan(plan_path)
    except (OSError, PatternError) as e:
        # cannot even read the inputs: an infrastructure problem
        raise Fail(str(e)) from None
    res = parse(text, patterns, variant=a.variant,
                log_path=os.path.abspath(a.log),
                harness_status=a.harness_status, plan=plan)
    if a.out:
        try:
            write_results(res, a.out)
        except OSError as e:
            raise Fail(str(e)) from None
    if a.symbolize:
        _after('symbolize',
               lambda: symbolize.symbolize(a.out, a.symbolize))
    if a.report:
        _after('report', lambda: report.main(a.out, 'auto',
                                             stream=sys.stderr))
    if not a.quiet:
        print(summary_line(res))
    return int(res.exit_class)


RECORD_FAILURE = """The results of a variant that could not be booted.

Writes DIR/results.json and DIR/junit.xml for a run that ended before QEMU
started (the kernel or the guest tests did not build, the artifacts are
missing or do not match): exit class 2, REASON as its reason, PATH the log
that explains it. So every variant a run was asked for ends with a
results.json, and a summary never shows an old one instead. Prints the
summary line; exit 0 when written, 2 otherwise.
"""


def _record_failure_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('--variant', required=True, metavar='NAME')
    ap.add_argument('--out', required=True, metavar='DIR')
    ap.add_argument('--log', metavar='PATH')
    ap.add_argument('reason', nargs='+', metavar='REASON')


def _record_failure(a: argparse.Namespace) -> int:
    res = failure_result(a.variant, ' '.join(a.reason),
                         os.path.abspath(a.log) if a.log else None)
    try:
        write_results(res, a.out)
    except OSError as e:
        raise Fail(str(e)) from None
    print(summary_line(res))
    return 0


STEP_ERROR = """Print the error a failed step reported (pipeline/steperror.py).

step-error FILE: the message of the JSON a step wrote to FILE when it
failed ($STEP_ERROR: scripts/step-error.sh's die, the pipeline's own
errors), all its lines; nothing when there is none. scripts/test-variant
makes it the reason of a variant that was not booted.
"""


def _step_error_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('file', metavar='FILE')


def _step_error(a: argparse.Namespace) -> int:
    e = steperror.read(a.file)
    if e:
        print(e)
    return 0


COMMANDS = [Command('parse', DOC, configure, run),
            Command('record-failure', RECORD_FAILURE, _record_failure_args,
                    _record_failure),
            Command('symbolize', symbolize.DOC, symbolize.configure,
                    symbolize.run),
            Command('step-error', STEP_ERROR, _step_error_args, _step_error)]
