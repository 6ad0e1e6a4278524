"""A KTAP tree (pipeline/ktap.py's parse()) as a flat list of its tests:
flatten() and counts(), apart from the parser so that neither module
grows past what one reads at once. pipeline.ktap exports both.

Python 3.11 standard library only.
"""


def _unique(names, name):
    if name not in names:
        names.add(name)
        return name
    i = 2
    while '%s#%d' % (name, i) in names:
        i += 1
    name = '%s#%d' % (name, i)
    names.add(name)
    return name


def flatten(root, prefix=()):
    """Every test of the tree, parents before their subtests, as dicts:
    path (list of names from the top; a name repeated among siblings gets
    "#2", "#3"), id ("/".join(path)), key (the same path by position:
    "<document>.<number>" at each depth, for matching one test across runs
    when a program puts its outcome in the name, as ksft_test_result_fail()
    callers often do: "futex_requeue many returned: 11" / "futex_requeue
    many succeeds"), status, directive, reason,
    duration_ms, depth, number, line, leaf, subtests/missing counts,
    collection, metrics, excerpt (the test's log, newline-joined)."""
    out = []

    def walk(t, path, keys):
        names = set()
        for s in t.subtests:
            p = path + (_unique(names, s.name),)
            k = keys + (s.key,)
            out.append({
                'path': list(p), 'id': '/'.join(p), 'name': s.name,
                'key': '/'.join(k),
                'status': s.status, 'directive': s.directive,
                'reason': s.reason, 'duration_ms': s.duration_ms,
                'depth': s.depth, 'number': s.number, 'line': s.line,
                'leaf': not s.subtests, 'subtests': len(s.subtests),
                'missing': s.missing(), 'bail_out': s.bail_out,
                'collection': s.collection, 'metrics': s.metrics,
                'excerpt': '\n'.join(s.log),
            })
            walk(s, p, k)

    walk(root, tuple(prefix), tuple(prefix))
    return out


def counts(tests, leaves_only=True):
    """{'pass': n, 'fail': n, 'skip': n, 'error': n} over flatten() output."""
    c = {'pass': 0, 'fail': 0, 'skip': 0, 'error': 0}
    for t in tests:
        if leaves_only and not t['leaf']:
            continue
        c[t['status']] += 1
    return c
