"""A program's results from its KTAP output: the retry merge of a
kselftest program that ran tests a second time (@@@ RETRY).

Python 3.11 standard library only (Debian 12).
"""

import fnmatch
import re

TEST_EXCERPT_LINES = 200    # bound on one test's log excerpt


def cap(lines, limit=TEST_EXCERPT_LINES):
    """LINES as one text of at most LIMIT lines and a line that says how
    many were left out between its head and its tail."""
    if len(lines) <= limit:
        return '\n'.join(lines)
    keep = limit // 2
    return '\n'.join(lines[:keep] + ['[... %d lines omitted ...]'
                                     % (len(lines) - 2 * keep)]
                     + lines[-keep:])


def hard_tests(tree):
    """The kselftest tests (runner-level names) of a first run's nested
    parse (pipeline/ktap.py) whose outcome a second run must not replace:
    one that timed out, or below which a result is missing or in error (a
    hang, a crash, a short plan). "*" when the runner's own plan was not
    kept."""
    hard = set()

    def bad(t):
        return t.directive == 'TIMEOUT' or t.missing() or \
            t.status == 'error' or any(bad(s) for s in t.subtests)
    for t in tree.subtests:
        if bad(t):
            hard.add(t.name)
    if tree.missing():
        hard.add('*')
    return hard


def retried(first, second, retry, hard=()):
    """A program's results when it ran tests again after @@@ RETRY lines
    (TEST, GLOB): the first run's results of the tests not run again, and
    for a test run again the second run's, a result there marked flaky
    with the first-run failure in its place. The second run replaces the
    first for TEST only when every first-run failure of TEST is a failure
    a GLOB names (by the result's own description, never TEST's own
    result), TEST did not time out or lose results (@hard), and each such
    failure has a result in its place in the second run that is not a
    skip (a pass: flaky; a failure: it failed twice). Otherwise the first
    run stands, and the second run adds only its failures and errors,
    named "... (second run)"."""
    tests = {t for t, _ in retry}
    bad_status = ('fail', 'error')

    def split(r):
        # (the runner's test, the result's own description; '' for the
        # runner's own result)
        if '_head' in r:
            return r['_head'], r['_leaf'] if r['name'] != r['_head'] else ''
        return r['name'], ''

    def named(r):
        head, leaf = split(r)
        return {g for t, g in retry
                if t == head and leaf and fnmatch.fnmatchcase(leaf, g)}

    def same(f, r):
        # the same test: its name, or (kselftest programs often print
        # the outcome in the name) its place below the retried test with
        # the same first word ("futex_requeue many returned: 11" and
        # "futex_requeue many succeeds"; not another program's result
        # that moved into the place of a program that printed nothing)
        if split(f)[0] != split(r)[0]:
            return False
        if f['name'] == r['name']:
            return True
        kf = (f.get('key') or '').partition('/')[2]
        word = (split(f)[1].split() or [''])[0]
        return bool(kf) and kf == (r.get('key') or '').partition('/')[2] \
            and word == (split(r)[1].split() or [''])[0]

    bad = [r for r in first if r['status'] in bad_status]
    # a program that reports one test twice ("not ok 2 x", "not ok 3 x":
    # the second named "x#3") has one test there: matched by the first
    # of the same document
    def dup_key(f):
        return (re.sub(r'#\d+$', '', f['name']),
                (f.get('key') or '').rpartition('.')[0])
    base = {}
    for f in bad:
        base.setdefault(dup_key(f), f)

    def canon(f):
        return base.get(dup_key(f), f)

    stands = {split(r)[0] for r in bad
              if r['status'] == 'error' or not named(r)}
    stands |= tests if '*' in hard else tests & set(hard)
    for f in bad:
        head = split(f)[0]
        if head in tests and head not in stands:
            there = [r for r in second if same(canon(f), r)]
            if not there or any(r['status'] == 'skip' for r in there):
                stands.add(head)
    out = []
    for r in first:
        head = split(r)[0]
        if head in stands and r['status'] in bad_status:
            r = dict(r, note='%s (first run; the second run did not '
                     'replace it: only failures flaky.conf names, each '
                     'with a result in its place the second time, are '
                     'run again)' % (r.get('note') or 'failed'))
        if head not in tests or head in stands:
            out.append(r)
    for r in second:
        # (a result of no retried test: the runner's own, named otherwise
        # when the second run printed nothing nested)
        if split(r)[0] in stands or split(r)[0] not in tests:
            if r['status'] in bad_status:
                out.append(dict(r, id=r['id'] + ' (second run)',
                                name=r['name'] + ' (second run)'))
            continue
        before = [f for f in bad if same(canon(f), r)]
        if before:
            r = dict(r, flaky=[{k: f.get(k) for k in
                                ('id', 'name', 'status', 'note', 'line',
                                 'excerpt')} for f in before])
            if r['status'] == 'pass':
                r['note'] = 'flaky: failed in the first run (line %s), ' \
                    'passed when run again' % before[0].get('line')
        out.append(r)
    return out

