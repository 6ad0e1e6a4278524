#!/usr/bin/python3
"""skips.py: what a run did not test - its skips by reason, and LOST tests.

usage: skips.py RESULTS...

RESULTS: a variant's results directory (results/<variant>), or a results
directory with one per variant. Prints, per variant, every skip reason with
its count, most frequent first, and the tests behind each (`make skips
VARIANT=x`). summary.json carries the same counts (skip_reasons).

A test is LOST when it passed (a benchmark: ran, status bench) in the run
it is compared against (`make compare A=... B=...`) or on pristine
(summarize), and now skipped or did not run at all: a test that stops
testing is a regression as much as one that fails, unless
configs/accepted-skips.txt names it. Each line there is
    GLOB  why this test may stop running or skip
GLOB matches a test id (suite/program/test; fnmatch, '*' crosses '/'); the
reason is required. An accepted test is still listed, with its reason.
Exit 0, or 2 on bad input.
"""
import fnmatch
import json
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
sys.dont_write_bytecode = True
import entry  # noqa: E402
from pipeline import testsel  # noqa: E402
from pipeline.models import GOOD  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
ACCEPTED = os.path.join(os.environ.get('CONFIGS', os.path.join(TOP, 'configs')),
                        'accepted-skips.txt')


def load_accepted(path=None):
    """[(glob, reason)] from an accepted-skips file; none if it is absent."""
    path = path or ACCEPTED
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except FileNotFoundError:
        return []
    except OSError as e:
        raise entry.Fail('cannot read %s: %s' % (path, e)) from None
    rules = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        parts = line.split(None, 1)
        if len(parts) < 2:
            raise entry.Fail('%s:%d: "%s" has no reason: write GLOB and why '
                             'the test may stop running' % (path, n, line))
        rules.append((parts[0], parts[1]))
    return rules


def accepted(rules, test_id):
    """The reason a LOST test is accepted, or None."""
    for glob, why in rules:
        if fnmatch.fnmatchcase(test_id, glob):
            return why
    return None


def by_reason(tests):
    """Counter of skip reasons over result dicts."""
    return Counter(t.get('skip_reason') or 'skip' for t in tests
                   if t['status'] == 'skip')


def _prog(tid):
    return '/'.join(tid.split('/')[:2])


def _failed_below(t):
    """The id prefix whose tests a failed result stands for: a program-
    level result its program, a kselftest runner's result its test."""
    parts = t['id'].split('/')
    if len(parts) <= 2 or parts[-1] in testsel.PROGRAM_RESULTS or \
            t.get('missing'):
        # (a missing test-N of a program that crashed: the program)
        return '/'.join(parts[:2])
    m = testsel.RUNNER_NAME_RE.match(parts[-1])
    if m:
        parts[-1] = m.group(1)
    return '/'.join(parts)


def ran_in(now):
    """A scope for lost(): the programs NOW ran (runs of different suites,
    as a variant and pristine, share only some programs)."""
    progs = {_prog(t['id']) for t in now}
    return lambda tid: _prog(tid) in progs


def planned_in(res):
    """A scope for lost(): what the run RES planned (its results.json
    plan: programs, and the TESTS globs), else the programs it ran."""
    plan = res.get('plan')
    if not plan:
        return ran_in(res.get('tests') or [])
    progs = {'%s/%s' % (sp['name'], p) for sp in plan.get('suites', [])
             for p in sp.get('programs', []) + sp.get('optional', [])}
    globs = plan.get('tests') or []

    def scope(tid):
        suite, prog, test = (tid.split('/', 2) + [None, None])[:3]
        if test is not None:
            test = testsel.test_part(test)
        return '%s/%s' % (suite, prog) in progs and \
            testsel.selects(globs, suite, prog, test) is not False
    return scope


def lost(before, now, scope=None):
    """[(id, 'skip' or None)] for the tests that passed (or, benchmarks,
    ran) in BEFORE (result dicts) and are skipped or absent in NOW. A test
    is the same test by its id, else by its key (pipeline/ktap.py:
    kselftest names can carry a pid). Absence counts only inside SCOPE (a
    function of the id; None: everywhere), and not below a result of NOW
    that failed: a program or kselftest that failed has lost the rest to
    that failure, which is a failure already."""
    have = {t['id']: t['status'] for t in now}
    # by key (a position) only a test NOW has under a new name, in the
    # same place: positions shift when tests are skipped or selected
    old = {t['id'] for t in before}
    keys = {(t['id'].rsplit('/', 1)[0], t['key']): t['status'] for t in now
            if t.get('key') and t['id'] not in old}
    failed = [_failed_below(t) for t in now if t['status'] in ('fail',
                                                               'error')]
    out = []
    for t in before:
        if t['status'] not in GOOD:
            continue
        s = have.get(t['id'])
        if s is None and t.get('key'):
            s = keys.get((t['id'].rsplit('/', 1)[0], t['key']))
        if s == 'skip':
            out.append((t['id'], 'skip'))
        elif s is None:
            if any(t['id'] == f or t['id'].startswith(f + '/')
                   for f in failed):
                continue
            if scope is not None and not scope(t['id']):
                continue
            out.append((t['id'], None))
    return out


def results_in(path):
    """[(variant, results dict)] under PATH."""
    files = []
    if os.path.isfile(os.path.join(path, 'results.json')):
        files = [os.path.join(path, 'results.json')]
    elif os.path.isdir(path):
        files = [os.path.join(path, d, 'results.json')
                 for d in sorted(os.listdir(path))
                 if os.path.isfile(os.path.join(path, d, 'results.json'))]
    if not files:
        raise entry.Fail('no results.json in %s or its subdirectories (a '
                         'variant has results once make test-variant '
                         'VARIANT=<it> has run)' % path)
    out = []
    for f in files:
        try:
            with open(f, encoding='utf-8') as fh:
                r = json.load(fh)
            out.append((r['variant'], r))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise entry.Fail('cannot read %s: %s' % (f, e)) from None
    return out


def main(argv):
    if not argv or argv[0] in ('-h', '--help'):
        print(__doc__.strip())
        return 0 if argv else 2
    for path in argv:
        for variant, r in results_in(path):
            tests = r.get('tests') or []
            reasons = by_reason(tests)
            print('== %s: %d skipped of %d, %d reasons' % (
                variant, sum(reasons.values()), len(tests), len(reasons)))
            for why, n in reasons.most_common():
                ids = [t['id'] for t in tests if t['status'] == 'skip' and
                       (t.get('skip_reason') or 'skip') == why]
                more = ' ... (%d more)' % (len(ids) - 3) if len(ids) > 3 \
                    else ''
                print('%6d  %s\n        %s%s' % (n, why, ' '.join(ids[:3]),
                                                  more))
    return 0


if __name__ == '__main__':
    entry.run(main, 'skips')
