"""The summary of a boot matrix: one row per variant asked for, the
regressions against pristine, the counts make check reads, summary.json
and the table.

Regressions are judged against the variant `pristine` (the kernel without
the series) when it is among the variants: a test that failed (or ended
in error, e.g. with the kernel) in a variant and passed (or, a benchmark,
ran) on pristine is a regression; one that failed on pristine too is a
known failure, listed as such and not as the series' fault. Which test is
which is pipeline/analysis/identity.py's one rule. A test that passed
(ran) on pristine and is skipped in a variant, or absent from a program
the variant ran, is LOST (pipeline/analysis/skips.py): a regression too,
unless configs/accepted-skips.txt accepts it with a reason. Without
pristine in the run the column is "-": nothing to judge against.

Python 3.11 standard library only (Debian 12).
"""

import dataclasses
import json
import os

from .. import Fail, classes
from ..counts import Counts
from ..models import BAD, GOOD, ExitClass
from . import skips
from .identity import Pairing

BASELINE = 'pristine'


@dataclasses.dataclass
class Row:
    """One variant of the matrix: summary.json's row, in its order."""
    variant: str
    dir: str
    kernel_release: str | None = None
    boot_s: float | None = None
    boot_elapsed_s: float | None = None
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    benchmarks: int = 0
    crashed: bool = False
    kernel_problems: int = 0
    kernel_problem_kinds: list = dataclasses.field(default_factory=list)
    duration_s: float | None = None
    exit_class: int = int(classes.not_booted())
    exit_class_name: str = classes.not_booted().label
    reason: str | None = None
    # None: no judgement (no pristine with tests in the matrix)
    regressions: int | None = None
    regressed_tests: list = dataclasses.field(default_factory=list)
    known_failures: int | None = None
    known_failed_tests: list = dataclasses.field(default_factory=list)
    lost_tests: list = dataclasses.field(default_factory=list)
    accepted_lost: list = dataclasses.field(default_factory=list)
    skip_reasons: dict = dataclasses.field(default_factory=dict)
    # passed when run again after failing (kselftests/flaky.conf)
    flaky_tests: list = dataclasses.field(default_factory=list)
    # the run's tests, for the judgement; never in summary.json. None:
    # the variant has no results.json to judge.
    tests: list | None = dataclasses.field(default=None, repr=False)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        del d['tests']
        return d


def row_of(top: str, variant: str, directory: str | None = None) -> Row:
    """One summary row from one results.json (class 2 if missing or
    unreadable); DIRECTORY its directory under TOP when that is not named
    after the variant (a CI download's results-<variant>/)."""
    directory = directory or variant
    path = os.path.join(top, directory, 'results.json')
    if not os.path.exists(path):
        return Row(variant, directory, reason='no result: %s does not exist '
                   '(the variant did not run, or its run died)' % path)
    try:
        with open(path, encoding='utf-8') as f:
            r = json.load(f)
        c = r['counts']
        tests = r.get('tests') or []
        return Row(
            variant=variant, dir=directory,
            kernel_release=r.get('kernel_release'),
            boot_s=r['boot'].get('ready_uptime_s'),
            boot_elapsed_s=r['boot'].get('ready_elapsed_s'),
            passed=c['pass'], failed=c['fail'], errors=c['error'],
            skipped=c['skip'],
            # (results.json files from before benchmarks have none)
            benchmarks=c.get('bench', 0),
            crashed=bool(r['kernel_problems_total']),
            kernel_problems=r['kernel_problems_total'],
            kernel_problem_kinds=list(dict.fromkeys(
                p['kind'] for p in r['kernel_problems'])),
            duration_s=r.get('duration_s'),
            exit_class=r['exit_class'],
            exit_class_name=classes.named(
                r['exit_class'], r.get('exit_class_name')).label,
            reason=r['reasons'][0]['reason'] if r['reasons'] else None,
            skip_reasons=dict(skips.by_reason(tests).most_common()),
            flaky_tests=[t['id'] for t in tests
                         if t.get('flaky') and t['status'] == 'pass'],
            tests=tests)
    except (OSError, ValueError, KeyError, TypeError) as e:
        return Row(variant, directory, reason='unreadable %s: %s' % (path,
                                                                     e))


def judge(rows: list[Row], rules: list[skips.Rule] = ()) -> None:
    """Fill in regressions, LOST tests and known failures against
    BASELINE's row."""
    base = next((r for r in rows if r.variant == BASELINE and
                 r.tests is not None), None)
    if base is None or not base.tests:
        # no baseline (pristine did not build, boot or run a test): no
        # judgement, rather than "0 regressions"
        return
    bad = sorted(t['id'] for t in base.tests if t['status'] in BAD)
    base.known_failures, base.known_failed_tests = len(bad), bad
    for r in rows:
        if r is base or r.tests is None:
            continue
        pairs = Pairing(base.tests, r.tests)
        reg, known = [], []
        for t in r.tests:
            if t['status'] not in BAD:
                continue
            was = pairs.was(t)
            if was in GOOD:
                reg.append(t['id'])
            elif was in BAD:
                known.append(t['id'])
        for tid, _ in skips.lost(base.tests, r.tests,
                                 skips.ran_in(r.tests)):
            why = skips.accepted(rules, tid)
            if why:
                r.accepted_lost.append('%s (%s)' % (tid, why))
            else:
                r.lost_tests.append(tid)
                reg.append('LOST:' + tid)
        r.regressions, r.regressed_tests = len(reg), sorted(reg)
        r.known_failures, r.known_failed_tests = len(known), sorted(known)


def counts(rows: list[Row]) -> Counts:
    return Counts(
        passed=sum(r.passed for r in rows),
        failed=sum(r.failed + r.errors + len(r.lost_tests) for r in rows) +
        sum(1 for r in rows if classes.counts_as_failure(r.exit_class)),
        skipped=sum(r.skipped for r in rows),
        benchmarks=sum(r.benchmarks for r in rows))


@dataclasses.dataclass
class Summary:
    """summary.json."""
    exit_class: ExitClass
    requested: list
    counts: Counts
    rows: list[Row]

    def to_dict(self) -> dict:
        return {'schema': 2, 'exit_class': int(self.exit_class),
                'exit_class_name': ExitClass(self.exit_class).label,
                'requested': self.requested,
                'counts': dataclasses.asdict(self.counts),
                'variants': [r.to_dict() for r in self.rows]}


def summarize(top: str, variants: list[str],
              rules: list[skips.Rule] = (),
              dirs: dict[str, str] | None = None) -> Summary:
    """The summary of the VARIANTS asked for, from TOP/<variant>/ (or
    TOP/DIRS[variant]/)."""
    names = list(dict.fromkeys(variants))
    rows = [row_of(top, v, (dirs or {}).get(v)) for v in names]
    judge(rows, rules)
    worst = classes.summary([classes.named(r.exit_class, r.exit_class_name)
                             for r in rows],
                            any(r.lost_tests for r in rows))
    return Summary(worst, names, counts(rows), rows)


def names(ids: list[str], limit: int = 20) -> str:
    more = len(ids) - limit
    return ' '.join(ids[:limit]) + (' ... (%d more)' % more if more > 0
                                    else '')


def fmt(v) -> str:
    if v is None:
        return '-'
    if isinstance(v, float):
        return '%.1f' % v
    return str(v)


def table(rows: list[Row]) -> str:
    head = ['variant', 'boot s', 'passed', 'failed', 'regressions',
            'errors', 'skipped', 'crashed', 'bench', 'duration s', 'class']
    body = []
    for r in rows:
        crashed = 'no'
        if r.crashed:
            crashed = '%d (%s)' % (r.kernel_problems,
                                   ','.join(r.kernel_problem_kinds))
        body.append([r.variant, fmt(r.boot_s), fmt(r.passed),
                     fmt(r.failed), fmt(r.regressions), fmt(r.errors),
                     fmt(r.skipped), crashed, fmt(r.benchmarks),
                     fmt(r.duration_s),
                     '%d %s' % (r.exit_class, r.exit_class_name)])
    w = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    out = ['  '.join(c.ljust(w[i]) for i, c in enumerate(x)).rstrip()
           for x in [head] + body]
    return '\n'.join(out)


def lines(s: Summary, top: str) -> list[str]:
    """The table, each bad variant's reason, the regressions, and last the
    matrix line (make check and CI read its format)."""
    out = [table(s.rows)]
    for r in s.rows:
        if not classes.green(r.exit_class) and r.reason:
            out.append('%s: %s (see %s)' % (r.variant, r.reason,
                                            os.path.join(top, r.dir)))
    for r in s.rows:
        if r.regressed_tests:
            out.append('%s: regressions versus %s: %s' % (
                r.variant, BASELINE, names(r.regressed_tests)))
        if r.accepted_lost:
            out.append('%s: passed on %s, not run or skipped here, accepted '
                       '(configs/accepted-skips.txt): %s' % (
                           r.variant, BASELINE, names(r.accepted_lost)))
        if r.flaky_tests:
            out.append('%s: flaky (failed, then passed when run again in '
                       'the same boot): %s' % (r.variant,
                                               names(r.flaky_tests)))
        if r.known_failed_tests and r.variant != BASELINE:
            out.append('%s: known failures (also on %s): %s' % (
                r.variant, BASELINE, names(r.known_failed_tests)))
    c = s.counts
    if c.benchmarks:
        out.append('benchmarks: %d ran (not counted as passed)'
                   % c.benchmarks)
    out.append('matrix: %d passed, %d failed, %d skipped' % (
        c.passed, c.failed, c.skipped))
    return out


def write(s: Summary, top: str) -> None:
    """TOP/summary.json."""
    try:
        os.makedirs(top, exist_ok=True)
        with open(os.path.join(top, 'summary.json'), 'w',
                  encoding='utf-8') as fh:
            json.dump(s.to_dict(), fh, indent=2)
            fh.write('\n')
    except OSError as e:
        raise Fail(str(e)) from None


def main(top: str, variants: list[str]) -> int:
    """Write TOP/summary.json, print the table and the lines after it;
    the exit status is the highest class."""
    s = summarize(top, variants, skips.load_accepted())
    write(s, top)
    for line in lines(s, top):
        print(line)
    return s.exit_class
