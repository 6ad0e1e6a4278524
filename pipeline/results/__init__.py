"""Classify a saved QEMU serial console log: a pure function of the log text.

`parse(text)` turns the text of one `results/<variant>/console.log` (see
expect-scripts/PROTOCOL.md) into one BootResult (pipeline/models.py): boot
facts, kernel problems with excerpts, per-test results and the boot's exit
class. `write_results()` writes it as results.json, junit.xml and
<suite>.ktap. Nothing here
reads the clock or the environment, so an old log re-analysed gives the same
answer and the classifier can be unit-tested on recorded logs.

    console.py    the console's text -> kernel and user records
    reports.py    kernel reports, by failure-patterns.txt (shared with the
                  harness's live detection)
    markers.py    the marker state machine: harness events, suites,
                  programs and each program's KTAP output
    programs.py   a program's results from its KTAP output
    verdict.py    the exit class and its reasons: every class rule
    plan.py       plan.json: its reader and its shape (plan_errors)
    writers.py    results.json, junit.xml, <suite>.ktap, the summary line

Python 3.11 standard library only (Debian 12).
"""

from .. import classes
from ..models import CLASS_NAMES, Reason
from . import markers, verdict
from .console import read_log, split_records
from .reports import PATTERNS_FILE, PatternError, load_patterns
from .plan import read_plan
from .writers import junit_tree, suite_ktap, summary_line, write_results

__all__ = ['CLASS_NAMES', 'PATTERNS_FILE', 'PatternError', 'failure_result',
           'junit_tree', 'load_patterns', 'parse', 'read_log', 'read_plan',
           'split_records', 'suite_ktap', 'summary_line', 'write_results']


def parse(text, patterns=None, variant=None, log_path=None,
          harness_status=None, plan=None):
    """Classify one console log. Returns its BootResult.
    harness_status: the harness's exit status, when known; a failure the
    log does not explain is still class 2, recorded with its reason.
    plan: what the boot was planned to run (scripts/pipeline boot plan --plan-out):
    every planned program must have run and every planned debug checker
    must have stayed on, or the run is class 2."""
    if patterns is None:
        patterns = load_patterns()
    return verdict.assemble(markers.read(text, patterns), variant, log_path,
                            plan, harness_status)


def failure_result(variant, reason, log_path=None):
    """The BootResult of a run that never got to boot (its kernel or
    initramfs did not build, its artifacts are missing): class 2 with
    REASON, no tests, and LOG_PATH the log that explains it, if any."""
    res = parse('', patterns=[], variant=variant, log_path=log_path)
    res.exit_class = classes.not_booted()
    res.reasons = [Reason(res.exit_class, reason)]
    res.booted = False
    return res
