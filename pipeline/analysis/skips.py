"""What a run did not test: its skips by reason, and LOST tests.

A test is LOST when it passed (a benchmark: ran, status bench) in the run
it is held against (`make compare A=... B=...`, or pristine in the
summary) and now skips or did not run at all: a test that stops testing
is a regression as much as one that fails, unless
configs/accepted-skips.txt names it. Each line there is
    GLOB  why this test may stop running or skip
GLOB matches a test id (suite/program/test; fnmatch, '*' crosses '/'); the
reason is required. An accepted test is still listed, with its reason.
Which test is which in the two runs is pipeline/analysis/identity.py's
one rule.

Python 3.11 standard library only (Debian 12).
"""

import dataclasses
import fnmatch
import os
from collections import Counter
from typing import Callable, NamedTuple

from .. import Fail, testsel
from ..config import configs_dir
from ..models import GOOD, Status
from . import runs
from .identity import Pairing, program_of


def accepted_file() -> str:
    """configs/accepted-skips.txt, or the one in $CONFIGS (a test's own
    configs/): read when asked, as the scripts did at their start."""
    return os.path.join(configs_dir(), 'accepted-skips.txt')


@dataclasses.dataclass(frozen=True)
class Rule:
    """A line of accepted-skips.txt."""
    glob: str
    reason: str


def load_accepted(path: str | None = None) -> list[Rule]:
    """The rules of an accepted-skips file; none if it is absent."""
    path = path or accepted_file()
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except FileNotFoundError:
        return []
    except OSError as e:
        raise Fail('cannot read %s: %s' % (path, e)) from None
    rules = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        parts = line.split(None, 1)
        if len(parts) < 2:
            raise Fail('%s:%d: "%s" has no reason: write GLOB and why '
                       'the test may stop running' % (path, n, line))
        rules.append(Rule(parts[0], parts[1]))
    return rules


def accepted(rules: list[Rule], test_id: str) -> str | None:
    """The reason a LOST test is accepted, or None."""
    for r in rules:
        if fnmatch.fnmatchcase(test_id, r.glob):
            return r.reason
    return None


def by_reason(tests: list) -> Counter:
    """Counter of skip reasons over result dicts."""
    return Counter(t.get('skip_reason') or 'skip' for t in tests
                   if t['status'] == Status.SKIP)


Scope = Callable[[str], bool]


def ran_in(now: list) -> Scope:
    """A scope for lost(): the programs NOW ran (runs of different suites,
    as a variant and pristine, share only some programs)."""
    progs = {program_of(t['id']) for t in now}
    return lambda tid: program_of(tid) in progs


def planned_in(res: dict) -> Scope:
    """A scope for lost(): what the run RES meant to run (its results.json
    plan: its suites, and the TESTS globs), else the programs it ran. A
    program of a planned suite that is not in the plan at all, and that
    TESTS would select, left the initramfs: its tests are in the scope
    (the plan's own programs alone once hid that)."""
    plan = res.get('plan')
    if not plan:
        return ran_in(res.get('tests') or [])
    suites = {sp['name'] for sp in plan.get('suites', [])}
    globs = plan.get('tests') or []

    def scope(tid):
        suite, prog, test = (tid.split('/', 2) + [None, None])[:3]
        if test is not None:
            test = testsel.test_part(test)
        return suite in suites and \
            testsel.selects(globs, suite, prog, test) is not False
    return scope


class Lost(NamedTuple):
    """A test that did its job before and does not now: 'skip' when it
    skips, None when it did not run."""
    id: str
    now: str | None


def lost(before: list, now: list, scope: Scope | None = None) -> list[Lost]:
    """The tests that passed (or, benchmarks, ran) in BEFORE (result
    dicts) and are skipped or absent in NOW. Absence counts only inside
    SCOPE (a function of the id; None: everywhere), and not below a bad
    result of NOW: a program or kselftest that failed has lost the rest
    to that failure, which is a failure already."""
    pairs = Pairing(before, now)
    out = []
    for t in before:
        if t['status'] not in GOOD:
            continue
        same = pairs.in_now(t)
        if same is not None:
            if same['status'] == Status.SKIP:
                out.append(Lost(t['id'], 'skip'))
            continue
        if pairs.lost_to_failure(t):
            continue
        if scope is not None and not scope(t['id']):
            continue
        out.append(Lost(t['id'], None))
    return out


def listing(variant: str, res: dict) -> list[str]:
    """`make skips`: every skip reason of a run with its count, most
    frequent first, and the first tests behind each."""
    tests = res.get('tests') or []
    reasons = by_reason(tests)
    out = ['== %s: %d skipped of %d, %d reasons' % (
        variant, sum(reasons.values()), len(tests), len(reasons))]
    for why, n in reasons.most_common():
        ids = [t['id'] for t in tests if t['status'] == Status.SKIP and
               (t.get('skip_reason') or 'skip') == why]
        more = ' ... (%d more)' % (len(ids) - 3) if len(ids) > 3 else ''
        out.append('%6d  %s\n        %s%s' % (n, why, ' '.join(ids[:3]),
                                              more))
    return out


def main(paths: list[str]) -> int:
    """The skips of every run under each of PATHS, printed."""
    for path in paths:
        if not os.path.isdir(path):
            # (as before: a path that is not there has no runs)
            raise Fail('no results.json in %s or its subdirectories%s'
                       % (path, runs.NO_RUNS))
        for variant, res in runs.load_set(path, runs.NO_RUNS).items():
            for line in listing(variant, res):
                print(line)
    return 0
