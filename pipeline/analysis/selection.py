"""What a run selects (TESTS, pipeline/testsel.py) and what to run again
to repeat exactly what failed (make rerun-failed).

A failed test is selected by its own id, escaped so that it matches only
itself; a program whose result is missing (it crashed, hung or exited
early) or failed only by its exit status is selected whole, and so is the
program that was running when the kernel reported a problem. A run that
failed before any test (no boot, a timeout in the boot) is repeated as it
was: its suites, no TESTS. What failed is the one list of bad outcomes,
pipeline.models.BAD.

Python 3.11 standard library only (Debian 12).
"""

import dataclasses
import re

from .. import classes, testsel
from ..models import BAD

# the parser's suffix for a name seen twice in one program
DUP_RE = re.compile(r'#\d+$')


@dataclasses.dataclass(frozen=True)
class Rerun:
    """SUITES and TESTS of a run again; both empty: nothing failed."""
    suites: list[str]
    tests: list[str]


def failed(res: dict) -> Rerun:
    """What to run again to repeat what failed in the run RES (its
    results.json)."""
    if classes.green(classes.recorded(res)):
        return Rerun([], [])
    globs = []
    for t in res.get('tests') or []:
        if t['status'] not in BAD:
            continue
        if t.get('missing') or t.get('number') is None:
            globs.append(testsel.id_glob(t['suite'], t['program']))
        else:
            # a nested result (kselftest: runner program/test...): the
            # kernel's runner runs the program it is in, whole
            name = DUP_RE.sub('', t['name'].split('/')[0])
            globs.append(testsel.id_glob(t['suite'], t['program'], name))
    for p in res.get('kernel_problems') or []:
        during = p.get('during') or ''
        parts = during.split('/', 2)
        if len(parts) >= 2:
            globs.append(testsel.id_glob(parts[0], parts[1]))
        elif during and during not in ('boot', 'shell'):
            globs.append(testsel.id_glob(during))
    globs = list(dict.fromkeys(globs))
    ran = list(dict.fromkeys(s['name'] for s in res.get('suites') or []
                             if s['name'] != 'ktap'))
    if not globs:
        # nothing to point at: the run as it was
        return Rerun(ran, [])
    suites = list(dict.fromkeys(testsel.split(g)[0] for g in globs))
    return Rerun(suites, globs)
