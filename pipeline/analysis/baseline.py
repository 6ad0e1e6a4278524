"""The baseline: what a green run of main did, so that a later run that
does less says so.

ci/baseline/<variant>.tests lists, one id a line, every test that passed
(or, a benchmark, ran) in a green `make check` of main; `scripts/pipeline
baseline write` makes it from that run's results. `make check` compares
its results with it (`baseline check`): a test of the baseline that is
now skipped, or absent from a suite the run planned, is LOST, and the
run fails naming it. Absence is judged per suite, not per program, so a
program that left the initramfs loses its tests too. A test that failed
is a failure already, and a test below a program that failed has lost
the rest to that failure (pipeline/analysis/skips.py's rule, the one
compare and the summary use).

A change that removes a test, or makes it skip on purpose, says so by
removing its line: the commit names the change, and configs/
accepted-skips.txt still accepts a test that may skip in one run and pass
in the next. A variant without a baseline file is not judged (it is
said); a test that is new since the baseline is no loss.

Python 3.11 standard library only (Debian 12).
"""

import dataclasses
import datetime
import os

from .. import Fail, classes, counts
from ..models import GOOD, Status
from . import runs, skips

SUFFIX = '.tests'


def path_of(directory: str, variant: str) -> str:
    return os.path.join(directory, variant + SUFFIX)


def is_test_id(text: str) -> bool:
    """suite/program[/test]: suite and program are words; a test's own
    name may have spaces (kselftest names subtests in words)."""
    parts = text.split('/', 2)
    return len(parts) >= 2 and all(p and not any(c.isspace() for c in p)
                                   for p in parts[:2])


def read(path: str) -> list[str]:
    """The test ids of a baseline file (comments and blank lines out)."""
    try:
        with open(path, encoding='utf-8') as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Fail('cannot read the baseline %s: %s' % (path, e)) from None
    ids = [ln.strip() for ln in lines
           if ln.strip() and not ln.lstrip().startswith('#')]
    bad = [i for i in ids if not is_test_id(i)]
    if bad:
        raise Fail('%s: %r is not a test id (suite/program[/test])' % (
            path, bad[0]))
    return ids


def good_ids(res: dict) -> list[str]:
    """The ids of a run's tests that passed or, benchmarks, ran."""
    return sorted({t['id'] for t in res.get('tests') or []
                   if t['status'] in GOOD})


def write(results: str, directory: str, source: str,
          want: list[str] = ()) -> list[str]:
    """Write DIRECTORY/<variant>.tests from the green runs of the set at
    RESULTS (those of WANT: none, all); SOURCE says where they come from
    (the header). Returns the lines to print. A run that was not green is
    refused: a baseline that holds a failure's tests would excuse what it
    lost."""
    sets = runs.load_set(results)
    missing = [v for v in want if v not in sets]
    if missing:
        raise Fail('%s: no results of %s' % (results, ', '.join(missing)))
    if want:
        sets = {v: r for v, r in sets.items() if v in want}
    not_green = sorted(v for v, r in sets.items()
                       if not classes.green(classes.recorded(r)))
    if not_green:
        raise Fail('%s: not green: %s; a baseline is made of a green run '
                   'only' % (results, ', '.join(not_green)))
    os.makedirs(directory, exist_ok=True)
    out = []
    day = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d')
    for v in sorted(sets):
        ids = good_ids(sets[v])
        with open(path_of(directory, v), 'w', encoding='utf-8') as f:
            f.write('# The tests of variant %s that passed (or ran: '
                    'benchmarks) in a green\n# run of main: %s, %s.\n'
                    '# Written by scripts/pipeline baseline write; a '
                    'change that removes\n# a test or makes it skip '
                    'removes its line (ci/baseline/README.md).\n' % (
                        v, source, day))
            f.writelines(i + '\n' for i in ids)
        out.append('baseline %s: %d tests' % (v, len(ids)))
    return out


@dataclasses.dataclass
class Check:
    """One variant's comparison with its baseline."""
    variant: str
    known: int = 0                  # tests in the baseline
    lost: list = dataclasses.field(default_factory=list)      # lines
    accepted: list = dataclasses.field(default_factory=list)  # lines
    judged: bool = True


def check_variant(variant: str, res: dict, ids: list[str],
                  rules: list) -> Check:
    c = Check(variant, known=len(ids))
    before = [{'id': i, 'status': Status.PASS} for i in ids]
    now = res.get('tests') or []
    by_id = {t['id']: t for t in now}
    # (absent from a suite the run planned counts, whichever program it
    # was in: the plan's own program list would hide a program gone)
    for x in skips.lost(before, now, skips.planned_in(res)):
        t = by_id.get(x.id)
        what = 'skip (%s)' % (t.get('skip_reason') or 'no reason') \
            if t is not None else 'did not run'
        why = skips.accepted(rules, x.id)
        line = '%s/%s: pass -> %s' % (variant, x.id, what)
        if why is not None:
            c.accepted.append('%s  (accepted: %s)' % (line, why))
        else:
            c.lost.append(line)
    return c


def check(results: str, directory: str, want: list[str] = (),
          rules: list = ()) -> list[Check]:
    """Each variant of the set at RESULTS (those of WANT: none, all)
    against its baseline file in DIRECTORY."""
    sets = runs.load_set(results)
    out = []
    for v in sorted(sets):
        if want and v not in want:
            continue
        p = path_of(directory, v)
        if not os.path.exists(p):
            out.append(Check(v, judged=False))
            continue
        out.append(check_variant(v, sets[v], read(p), rules))
    for v in want:
        p = path_of(directory, v)
        if v not in sets and os.path.exists(p):
            # (the main job counts it already; here its tests are lost)
            c = Check(v, known=len(read(p)))
            c.lost.append('%s: no results in %s: every test' % (v, results))
            out.append(c)
    return out


def main(results: str, directory: str, want: list[str],
         accepted: str | None = None, counts_path: str | None = None) -> int:
    """Print each variant's comparison and one closing line, and write
    its counts to COUNTS_PATH (make check's); 1 when a test of a baseline
    was lost."""
    checks = check(results, directory, want, skips.load_accepted(accepted))
    lost = 0
    for c in checks:
        if not c.judged:
            print('baseline %s: no %s, not judged' % (
                c.variant, path_of(directory, c.variant)))
            continue
        print('baseline %s: %d tests, %d lost%s' % (
            c.variant, c.known, len(c.lost),
            ', %d accepted' % len(c.accepted) if c.accepted else ''))
        for line in c.lost:
            # (the form of make check's recap: "name: ... (see FILE")
            print('baseline: LOST %s (see %s)' % (
                line, path_of(directory, c.variant)))
        for line in c.accepted:
            print('   lost, ok  %s' % line)
        lost += len(c.lost)
    judged = [c for c in checks if c.judged]
    failed = sum(1 for c in judged if c.lost)
    # (one check per variant: its tests are counted by the run itself)
    c = counts.Counts(len(judged) - failed, failed, len(checks) - len(judged))
    if counts_path:
        counts.write(counts_path, c)
    print('baseline: %d passed, %d failed, %d skipped' % (
        c.passed, c.failed, c.skipped))
    return classes.baseline_status(lost)
