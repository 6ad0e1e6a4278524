"""plan.json, what one boot must run (pipeline/boot.py's plan(), written
by scripts/pipeline boot plan --plan-out): its reader and its shape,
every key required with its type. The verdict holds a log against a
plan only when it is one (results/verdict.py: class 2 otherwise).

Python 3.11 standard library only (Debian 12).
"""

import json


# plan.json (pipeline/boot.py's plan()): every key, and its type
PLAN_KEYS = {'format': str, 'variant': str, 'tests': list, 'suites': list,
             'checkers': list, 'final': str}
SUITE_KEYS = {'name': str, 'programs': list, 'optional': list,
              'tests': dict}


def plan_errors(plan):
    """What makes PLAN no plan scripts/pipeline boot plan writes: a key
    missing or of another type, at the top or in a suite (benchmarks is
    the one optional key). [] when it is one."""
    if not isinstance(plan, dict):
        return ['it is a JSON %s, not an object' % type(plan).__name__]
    out = []

    def strings(x, where):
        if not isinstance(x, list) or \
                not all(isinstance(i, str) for i in x):
            out.append('%s is not a list of strings' % where)

    def keys(d, spec, where):
        for k, t in spec.items():
            if k not in d:
                out.append('%s has no %r' % (where, k))
            elif not isinstance(d[k], t):
                out.append('%s%r is a %s, not a %s' % (
                    where + ' ' if where != 'the plan' else '', k,
                    type(d[k]).__name__, t.__name__))
    keys(plan, PLAN_KEYS, 'the plan')
    if out:
        return out
    if plan['format'] != 'kernel-pipeline-plan/1':
        out.append("format is %r, not 'kernel-pipeline-plan/1'"
                   % plan['format'])
    for k in ('tests', 'checkers'):
        strings(plan[k], k)
    for i, sp in enumerate(plan['suites']):
        where = 'suite %d' % (i + 1)
        if not isinstance(sp, dict):
            out.append('%s is not an object' % where)
            continue
        keys(sp, SUITE_KEYS, where)
        if out:
            continue
        where = 'suite %s' % sp['name']
        strings(sp['programs'], where + "'s programs")
        strings(sp['optional'], where + "'s optional")
        if 'benchmarks' in sp:
            strings(sp['benchmarks'], where + "'s benchmarks")
        for prog, tests in sp['tests'].items():
            strings(tests, '%s\'s tests of %s' % (where, prog))
    return out


def read_plan(path):
    """A plan written by scripts/pipeline boot plan --plan-out."""
    with open(path, encoding='utf-8') as f:
        try:
            plan = json.load(f)
        except ValueError as e:
            raise OSError('%s is not valid JSON: %s' % (path, e)) from None
    if not isinstance(plan, dict) or \
            plan.get('format') != 'kernel-pipeline-plan/1':
        raise OSError('%s is not a plan (kernel-pipeline-plan/1)' % path)
    return plan
