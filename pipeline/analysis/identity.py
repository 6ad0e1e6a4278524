"""One rule for "the same test" in two runs of a variant, for every stage
that holds one run against another: the summary against pristine, make
compare, and the LOST tests of both.

A test is the same test in both runs by its id. A test under a new name
in the same place (the same parent, the same position: the key of
pipeline/ktap.py) is the same test too, because kselftest programs often
put the outcome or a pid in the name ("[41] Result matches", "[97]
Result matches"); a position only pairs two tests whose ids are each
missing from the other run, since positions shift when tests are skipped
or selected. A test without a place (a baseline file lists ids alone) is
the same test as the other run's when it is the only test under its
parent in both runs: mrelease_test has one, named by the size that
worked, 1MB or, after a retry, 2MB. A bad result that stands for more
than itself (a program that failed as a whole, a kselftest that failed
before its nested tests) is judged by the tests below it, and those
tests are lost to that failure, not counted again.

The tests are results.json's dicts (id, status, key, missing), as the
files of older runs have them. The one list of bad outcomes, and of good
ones, is pipeline.models' BAD and GOOD.

Python 3.11 standard library only (Debian 12).
"""

from ..models import BAD, GOOD, Status
from ..testsel import PROGRAM_RESULTS, RUNNER_NAME_RE


def program_of(test_id: str) -> str:
    """suite/program of a test id."""
    return '/'.join(test_id.split('/')[:2])


def is_below(test_id: str, prefix: str) -> bool:
    """Whether TEST_ID is PREFIX or a test under it."""
    return test_id == prefix or test_id.startswith(prefix + '/')


def stands_for(t: dict) -> str:
    """The id prefix whose tests a bad result T stands for: a program-level
    result (exit-status, missing-results, a missing test of a program that
    crashed) its program; a kselftest runner's result ("selftests: T:
    name") its test; any other result itself."""
    parts = t['id'].split('/')
    if len(parts) <= 2 or parts[-1] in PROGRAM_RESULTS or t.get('missing'):
        return '/'.join(parts[:2])
    m = RUNNER_NAME_RE.match(parts[-1])
    if m:
        parts[-1] = m.group(1)
    return '/'.join(parts)


def _parent(test_id: str) -> str:
    return test_id.rsplit('/', 1)[0]


def _alone(tests: list) -> dict[str, list]:
    """TESTS by parent."""
    out: dict[str, list] = {}
    for t in tests:
        out.setdefault(_parent(t['id']), []).append(t)
    return out


def _place(t: dict) -> tuple[str, str]:
    return t['id'].rsplit('/', 1)[0], t['key']


def verdict(statuses) -> Status | None:
    """One verdict over the outcomes of the tests below a result: a fail
    if one of them was bad, a pass if one was good (a benchmark that ran
    counts), else None (none of them ran)."""
    statuses = list(statuses)
    if any(s in BAD for s in statuses):
        return Status.FAIL
    if any(s in GOOD for s in statuses):
        return Status.PASS
    return None


class Pairing:
    """The tests of an earlier run (BEFORE) and a later one (NOW), paired
    by the one rule of this module."""

    def __init__(self, before: list, now: list):
        self.before = list(before)
        self.now = list(now)
        self._before_id = {t['id']: t for t in self.before}
        self._now_id = {t['id']: t for t in self.now}
        self._before_place = {_place(t): t for t in self.before
                              if t.get('key') and t['id'] not in self._now_id}
        self._now_place = {_place(t): t for t in self.now
                           if t.get('key') and t['id'] not in self._before_id}
        self._before_alone = _alone(self.before)
        self._now_alone = _alone(self.now)
        # BEFORE's outcomes under each id and its ancestors, and the
        # prefixes NOW's bad results stand for: asked once per test
        self._below: dict[str, list] = {}
        for t in self.before:
            parts = t['id'].split('/')
            for n in range(1, len(parts) + 1):
                self._below.setdefault('/'.join(parts[:n]), []).append(
                    t['status'])
        self._failed = [stands_for(f) for f in self.now if f['status'] in BAD]

    @staticmethod
    def _find(t: dict, by_id: dict, by_place: dict, mine: dict,
              theirs: dict) -> dict | None:
        if t['id'] in by_id:
            return by_id[t['id']]
        if t.get('key') and _place(t) in by_place:
            return by_place[_place(t)]
        # (two tests with places are paired by their places alone)
        parent = _parent(t['id'])
        if len(mine.get(parent, ())) == 1 and len(theirs.get(parent, ())) == 1:
            other = theirs[parent][0]
            if not (t.get('key') and other.get('key')):
                return other
        return None

    def in_before(self, t: dict) -> dict | None:
        """NOW's test T as BEFORE had it, or None."""
        return self._find(t, self._before_id, self._before_place,
                          self._now_alone, self._before_alone)

    def in_now(self, t: dict) -> dict | None:
        """BEFORE's test T as NOW has it, or None."""
        return self._find(t, self._now_id, self._now_place,
                          self._before_alone, self._now_alone)

    def was(self, t: dict) -> str | None:
        """What NOW's test T ended with in BEFORE: its own status, else,
        for a bad result, the verdict of BEFORE's tests below what it
        stands for (a program that timed out has one result where BEFORE
        has its tests), else None (BEFORE did not run it)."""
        old = self.in_before(t)
        if old is not None:
            return old['status']
        if t['status'] not in BAD:
            return None
        return verdict(self._below.get(stands_for(t), ()))

    def lost_to_failure(self, t: dict) -> bool:
        """Whether BEFORE's test T is below a bad result of NOW: lost to
        that failure, which is counted already."""
        return any(is_below(t['id'], f) for f in self._failed)
