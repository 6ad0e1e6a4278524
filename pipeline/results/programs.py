"""A program that ran in a suite: its output through the one KTAP parser
(pipeline/ktap.py), and its results.

A program's output is fed line by line (and kernel text that came in
between is noted) to a KTAP parser; a kselftest program that runs a test
again (@@@ RETRY) gets a second parser for its second run. When the
program ends, its results are the tests of the tree: the top-level results
when nothing is nested (a kselftest_harness.h program's own KTAP), every
nested test when something is (kselftest's runner), and an error for each
result its plans announced that never came.

Python 3.11 standard library only (Debian 12).
"""

import dataclasses
import fnmatch
import re

from .. import ktap
from ..models import BAD, Layout, Status, TestResult
from .verdict import OK_RC, program_failed


class Run:
    """One run of a program's output through the KTAP parser."""

    def __init__(self):
        self.parser = ktap.Parser()
        self.lines = 0          # lines fed (the program's own output)
        self.tree = None

    def finish(self):
        if self.tree is None:
            self.tree = self.parser.finish()
        return self.tree


class Span:
    """A suite or a program on the console: from its BEGIN marker (at
    line LINENO, guest uptime UPTIME) to its END marker, if any."""

    def __init__(self, name, lineno, uptime):
        self.name = name
        self.lineno = lineno
        self.begin_uptime = uptime
        self.end_uptime = None
        self.rc = None
        self.ended = False

    def end(self, uptime, kv):
        """Its END marker, at UPTIME, with the marker's key=value pairs
        (rc=N)."""
        self.ended = True
        self.end_uptime = uptime
        self.rc = ktap.num(kv.get('rc'))


class Program(Span):
    def __init__(self, suite, name, lineno, uptime, implicit=False):
        super().__init__(name, lineno, uptime)
        self.suite = suite
        self.implicit = implicit
        self.version = False    # a KTAP version line at its top came
        self.ktap_lines = []    # user lines only: the program's own output
        self.runs = [Run()]     # a second one after @@@ RETRY
        self.retry = []         # (test, glob) the RETRY lines named
        self.splats = []        # kernel problems while it ran
        # what its results say, once it ended (results())
        self.results = []
        self.plan = None        # the plans of its top-level documents
        self.bail_out = None
        self.metrics = {}

    @property
    def id(self):
        return '%s/%s' % (self.suite, self.name)

    @property
    def run(self):
        return self.runs[-1]

    def feed(self, lineno, text):
        """A line of the program's own output."""
        if ktap.VERSION_RE.match(text):
            self.version = True
        self.ktap_lines.append(text)
        self.run.lines += 1
        self.run.parser.feed(lineno, text)

    def note(self, lineno, text, own=False):
        """A line in the excerpts only: kernel text, or (OWN) the cut-off
        last line of a log, which is the program's but no result."""
        if own:
            self.ktap_lines.append(text)
        self.run.parser.note(lineno, text)

    def running(self):
        """The test at the top of its output that is running now (its
        header came, its result not yet), or None."""
        return self.run.parser.header()

    def retry_line(self, test, glob):
        """@@@ RETRY: TEST runs again; what came so far is the first run.
        Only one second run: False for a RETRY line after its output
        began."""
        if len(self.runs) > 1 and self.run.lines:
            return False
        if len(self.runs) == 1:
            self.runs.append(Run())
        self.retry.append((test, glob))
        return True

    def finish(self):
        """The program ended (or the log did): its results."""
        first = self.runs[0].finish()
        self.plan = first.plan
        self.bail_out = first.bail_out
        for run in self.runs:
            for t in run.finish().subtests:
                self.metrics.update(t.metrics)
        self.results = self._results(first)
        if len(self.runs) > 1:
            second = self.runs[1].finish()
            # the first run's results, judged now that the program ended
            self.results = retried(self.results, self._results(second),
                                   self.retry, hard_tests(first))
            self.bail_out = self.bail_out or second.bail_out
        return self.results

    def _results(self, tree):
        failed = program_failed(tree.bail_out, self.ended, self.rc)
        if any(t.subtests or t.number is None for t in tree.subtests):
            return self._nested(tree, failed)
        out = self._flat(tree)
        return out + self._missing(tree, out, failed)

    def _flat(self, tree):
        """The results of a program whose output has no nested tests: its
        top-level results, named as printed (a name printed twice gets
        "#<number>")."""
        out = []
        names = set()
        for t in tree.subtests:
            name = t.description or t.name
            if name in names:
                name = '%s#%s' % (name, t.number)
            names.add(name)
            status = Status(t.status)
            out.append(TestResult(
                id='%s/%s' % (self.id, name), suite=self.suite,
                program=self.name, name=name, number=t.number,
                status=status, duration_ms=t.duration_ms,
                skip_reason=t.reason if status == Status.SKIP else None,
                note=t.reason if status != Status.SKIP else None,
                line=t.line, excerpt='\n'.join(t.log), metrics=t.metrics))
        return out

    def _missing(self, tree, results, failed):
        """Plan promised more than came: the missing ones are errors."""
        why = 'no result in the console log'
        if not self.ended:
            why += ' (program never finished: no TEST-END)'
        elif self.rc is not None:
            why += ' (program exited rc=%s)' % self.rc
        first = True
        missing = []
        out = []
        if tree.violations or (tree.plan == 0 and not results):
            # "1..0": without a SKIP reason an error; with one, the
            # program's skip (never a program that vanished)
            out.append(self._whole(tree, results))
        if tree.plan is not None:
            # (pipeline/ktap.py's one rule counted them, per document)
            missing = [n if d == 1 else (d, n)
                       for d, n in tree.missing_numbers]
        elif not results:
            # a program that printed no result did not test anything, even
            # when it exited 0 (kunit.py: "0 tests run!")
            missing = [None]
            if self.ended and self.rc in OK_RC:
                why = 'no result in the console log: the program exited ' \
                    'rc=%s without printing a KTAP result line' % self.rc
        for n in missing:
            if n is None:
                name = tree.header or self.name
            elif first and tree.header:
                name = tree.header
            elif isinstance(n, tuple):
                name = 'doc%d.test-%d' % n
                n = n[1]
            else:
                name = 'test-%d' % n
            lines = tree.log if first else []
            first = False
            out.append(TestResult(
                id='%s/%s' % (self.id, name), suite=self.suite,
                program=self.name, name=name, number=n,
                status=Status.ERROR, layout=Layout.MISSING, missing=True,
                note=why, excerpt='\n'.join(lines),
                program_ended=self.ended, program_failed=failed,
                reports=self.splats))
        # every result came and all passed, yet the program failed
        if not missing and self.ended and self.rc not in OK_RC and \
                self.rc is not None and \
                not any(t.status == Status.FAIL for t in results):
            out.append(TestResult(
                id='%s/exit-status' % self.id, suite=self.suite,
                program=self.name, name='exit-status', number=None,
                status=Status.FAIL, note='program exited rc=%s' % self.rc,
                excerpt='\n'.join(tree.log)))
        return out

    def _whole(self, tree, results):
        """The one result of a program whose KTAP plans none ("1..0"):
        a skip with the reason its plan gave, or, when a plan of none
        gives none, an error saying so."""
        if tree.violations:
            status, note, skip = Status.ERROR, '; '.join(tree.violations), None
        else:
            skip = '; '.join(r for r in tree.plan_skips.values() if r)
            status, note = Status.SKIP, None
        return TestResult(
            id=self.id, suite=self.suite, program=self.name, name=self.name,
            number=None, status=status, skip_reason=skip, note=note,
            excerpt='\n'.join(tree.log), reports=None)

    def _nested(self, tree, failed):
        """A program whose results have subtests (kselftest's runner nests
        each program's output under its result, "# " per depth): its
        results are every nested test, ids suite/program/<path>. Leaves
        are the tests; a parent is a result of its own only when it failed
        and none of its subtests did (a program that crashed or exited
        non-zero after passing tests), or when subtests its plan announced
        never came."""
        flat = ktap.flatten(tree, (self.suite, self.name))
        results = []
        for i, f in enumerate(flat):
            below = flat[i + 1:i + 1 + _descendants(flat, i)]
            lost = False
            if not f['leaf']:
                failing = any(x['status'] in BAD for x in below)
                if f['status'] in BAD and not failing:
                    pass
                elif f['missing'] and not failing and f['status'] == 'skip':
                    # ksft_exit_skip() after ksft_set_plan(): a skip
                    f = dict(f, reason='%s (%d planned subtests never '
                             'reported)' % (f['reason'] or 'skip',
                                            f['missing']))
                elif f['missing'] and not failing:
                    f = dict(f, status='error', reason='%d planned subtests '
                             'never reported' % f['missing'])
                    lost = True
                else:
                    continue
            elif f['missing'] and f['status'] == 'pass':
                # "ok" over a nested plan that was not kept: the subtests
                # that never printed are untested, not passed
                f = dict(f, status='error', reason='%d planned subtests '
                         'never reported' % f['missing'])
                lost = True
            status = Status(f['status'])
            reason = f['reason']
            results.append(TestResult(
                id=f['id'], key=f['key'], suite=self.suite,
                program=self.name, name='/'.join(f['path'][2:]),
                number=f['number'], status=status, layout=Layout.NESTED,
                duration_ms=f['duration_ms'], missing=lost,
                skip_reason=(reason or 'skip') if status == Status.SKIP
                else None,
                note=reason if status != Status.SKIP else None,
                line=f['line'], depth=f['depth'], junit_suite=self.id,
                excerpt=f['excerpt'], metrics=f['metrics'],
                program_ended=self.ended, program_failed=failed,
                # the runner's test and the result's own description
                # (names may hold a "/": not split out of 'name')
                head=f['path'][2], leaf=f['path'][-1]))
        if tree.violations:
            results.append(self._whole(tree, results))
        if tree.missing():
            why = '%d of %d results the runner announced never came' % (
                tree.missing(), tree.plan)
            if not self.ended:
                why += ' (program never finished: no TEST-END)'
            results.append(TestResult(
                id='%s/missing-results' % self.id, key=None,
                suite=self.suite, program=self.name,
                name='missing-results', number=None, status=Status.ERROR,
                layout=Layout.NESTED_MISSING, missing=True, note=why,
                junit_suite=self.id, excerpt='\n'.join(tree.log),
                program_ended=self.ended, program_failed=failed,
                reports=self.splats))
        for r in results:
            if r.status == Status.ERROR and r.reports is None:
                r.reports = self.splats
                r.note = r.note or 'no result'
        return results


def _descendants(flat, i):
    """How many entries after flat[i] are its descendants."""
    n = 0
    d = flat[i]['depth']
    for x in flat[i + 1:]:
        if x['depth'] <= d:
            break
        n += 1
    return n


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
    (TEST, GLOB; the guest runs each test kselftests/flaky.conf names a
    second time whatever its first run said): the first run's results of
    the tests not run again, and for a test run again the second run's, a
    result there marked flaky with the first-run failure in its place.
    The second run replaces the first for TEST only when TEST failed the
    first time, every first-run failure of TEST is a failure a GLOB names
    (by the result's own description, never TEST's own result), TEST did
    not time out or lose results (@hard), and each such failure has a
    result in its place in the second run that is not a skip (a pass:
    flaky; a failure: it failed twice). Otherwise the first run stands,
    and the second run adds only its failures and errors, named "...
    (second run)"; after a first run without a failure, not the failures
    a GLOB names (the same flake)."""
    tests = {t for t, _ in retry}

    def split(r):
        # (the runner's test, the result's own description; '' for the
        # runner's own result)
        if r.head is not None:
            return r.head, r.leaf if r.name != r.head else ''
        return r.name, ''

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
        if f.name == r.name:
            return True
        kf = (f.key or '').partition('/')[2]
        word = (split(f)[1].split() or [''])[0]
        return bool(kf) and kf == (r.key or '').partition('/')[2] \
            and word == (split(r)[1].split() or [''])[0]

    bad = [r for r in first if r.status in BAD]
    # a program that reports one test twice ("not ok 2 x", "not ok 3 x":
    # the second named "x#3") has one test there: matched by the first
    # of the same document
    def dup_key(f):
        return (re.sub(r'#\d+$', '', f.name),
                (f.key or '').rpartition('.')[0])
    base = {}
    for f in bad:
        base.setdefault(dup_key(f), f)

    def canon(f):
        return base.get(dup_key(f), f)

    stands = {split(r)[0] for r in bad
              if r.status == Status.ERROR or not named(r)}
    stands |= tests if '*' in hard else tests & set(hard)
    # the guest runs every test flaky.conf names again, failed or not
    # (it reads no KTAP): one whose first run had no failure keeps it
    passed = tests - {split(r)[0] for r in bad} - stands
    stands |= passed
    for f in bad:
        head = split(f)[0]
        if head in tests and head not in stands:
            there = [r for r in second if same(canon(f), r)]
            if not there or any(r.status == Status.SKIP for r in there):
                stands.add(head)
    out = []
    for r in first:
        head = split(r)[0]
        if head in stands and r.status in BAD:
            r = dataclasses.replace(
                r, note='%s (first run; the second run did not replace '
                'it: only failures flaky.conf names, each with a result in '
                'its place the second time, are run again)'
                % (r.note or 'failed'))
        if head not in tests or head in stands:
            out.append(r)
    for r in second:
        # (a result of no retried test: the runner's own, named otherwise
        # when the second run printed nothing nested)
        if split(r)[0] in stands or split(r)[0] not in tests:
            # (after a first run that passed, a failure a glob names is
            # that flake again, not a new failure)
            if r.status in BAD and not (
                    split(r)[0] in passed and r.status != Status.ERROR and
                    named(r)):
                out.append(dataclasses.replace(
                    r, id=r.id + ' (second run)',
                    name=r.name + ' (second run)'))
            continue
        before = [f for f in bad if same(canon(f), r)]
        if before:
            r = dataclasses.replace(r, flaky=[f.snapshot() for f in before])
            if r.status == Status.PASS:
                r.note = 'flaky: failed in the first run (line %s), ' \
                    'passed when run again' % before[0].line
        out.append(r)
    return out

