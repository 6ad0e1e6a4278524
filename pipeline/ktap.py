"""KTAP / TAP 13 -> a tree of per-test results; a pure function.

The one KTAP parser of the pipeline: a program's own flat output (a
kselftest_harness.h program's results are the tree's top level) and
nested output are read by the same rules at every depth.

kselftest's runner (tools/testing/selftests/kselftest/runner.sh) prints one
TAP document per target and nests each program's own output under its
result by prefixing every line with "# " (a program that runs programs
nests again: "# # ok 1 ..."). KUnit and the KTAP v1 specification
(Documentation/dev-tools/ktap.rst) nest by indenting with four spaces (or
a tab). Both are read here:

    TAP version 13                        depth 0
    1..1
    # timeout set to 45
    # selftests: futex: run.sh            names the test that follows
    # TAP version 13                      depth 1 opens
    # 1..1
    # # futex_wait_timeout: Test ...      a diagnostic line of depth 1
    # ok 1 futex_wait_timeout ...         a result at depth 1
    ok 1 selftests: futex: run.sh         its parent, at depth 0

A depth opens with a version line, a plan or a result line behind one
more prefix than the depth above ("# ", or the indentation it has); its
lines then carry that prefix. A line belongs to the deepest open depth at
which, with the prefixes removed, it is KTAP (a version line, a plan, a
result, "Bail out!"); every other line is a diagnostic and goes into the
log excerpt of each test being collected.
Results of a depth are the subtests of the next result one depth up.
Several documents one after another at one depth (a script running
programs in turn) are siblings. Subtests whose parent never reported (the
output ended, a program crashed the kernel) get a parent with status
"error", named by the last "# selftests: DIR: NAME" or "# Subtest: NAME"
header seen at that depth.

What a result carries, by the same rules at every depth (a program's own
output at the top, and nested):
- its name: the result line's description, else the name the last header
  of its depth announced (runner.sh's "# selftests: DIR: NAME", KTAP's
  "# Subtest: NAME", kselftest_harness.h's "#  RUN NAME ..."), else
  "test-N";
- its duration: the pipeline's guest filter writes "# duration_ms=N"
  directly before a result line (expect-scripts/PROTOCOL.md; at depth d
  with the same d prefixes as the result), the number as written;
- its metrics: "# metric: K=V" lines (ksft_print_msg; TH_LOG's
  "# file:line:test:metric: K=V") since the previous result of its depth;
- its log excerpt: the lines since the previous result of its depth, or
  from its header on, up to its own result line, at that depth or deeper
  and the noted ones (kernel text, a cut-off last line), not its depth's
  own version, plan and duration lines (structure, not output).

One rule holds every document at every depth (check_document, as
kunit_parser's): results numbered 1, 2, ... in order, none twice, none
beyond the plan (else an error with the reason; a failure stays one);
missing ones counted; a plan of none ("1..0") only with a SKIP reason.

Why not tools/testing/kunit/kunit_parser.py of the kernel tree: it nests by
indentation only (kselftest's "# " nesting is read as diagnostics, so every
nested result is lost), prints while it parses, and it lives in build/linux,
which a machine holding only a downloaded console log does not have.

Python 3.11 standard library only.
"""

import re

from .ktaptree import counts, flatten  # noqa: F401 (ktap.flatten, ktap.counts)

# A result line: "ok 1 name # DIRECTIVE reason" (the "- " before the name
# is TAP 13 style, kept by some programs).
RESULT_RE = re.compile(
    r'^(not ok|ok)\s+(\d+)\b(?:\s*-)?\s*([^#]*?)\s*(?:#\s*(.*?))?\s*$')
PLAN_RE = re.compile(r'^1\.\.(\d+)\b')
# "1..0 # SKIP why": a document that has nothing to run, and says why
PLAN_SKIP_RE = re.compile(r'^1\.\.\d+\s*#\s*SKIP\b\s*(.*?)\s*$', re.I)
VERSION_RE = re.compile(r'^K?TAP version \d+\s*$')
BAIL_RE = re.compile(r'^Bail out!\s*(.*)$')
DURATION_RE = re.compile(r'^#\s*duration_ms=(\d+(?:\.\d+)?)\s*$')
# `# metric: k=v` (ksft_print_msg) or TH_LOG's `# file:line:test:metric: k=v`
METRIC_RE = re.compile(r'^#\s*(?:\S+?:\d+:\S+?:)?\s*metric:\s*([^=\s]+)=(.*)$')
# The name of the test whose output follows: runner.sh's header, KTAP's
# subtest header, kselftest_harness.h's "#  RUN           fixture.test ...".
HEADER_RE = re.compile(r'^#\s+(?:selftests:\s+\S+:\s+|Subtest:\s+)(\S.*?)\s*$')
RUN_RE = re.compile(r'^#\s+RUN\s+(\S+)')
# runner.sh names its results "selftests: <collection>: <program>".
KSFT_NAME_RE = re.compile(r'^selftests:\s+(\S+):\s+(.+)$')
DIRECTIVE_RE = re.compile(r'^(SKIP|TODO|XFAIL|XPASS|TIMEOUT)\b\s*(.*)$', re.I)
# runner.sh's result glued to the last line of a program that ended
# without a newline: "# (cs_prctl_test.c:287) - not ok 1 selftests: ...".
GLUED_RE = re.compile(r'^(.*?)((?:not )?ok \d+ selftests:\s+\S+:\s+\S.*)$')
# What opens one more depth: kselftest's "# " or KTAP's indentation (two
# spaces per level in the specification, four in KUnit's output); the
# depth's lines then all start with the same prefix.
NEW_PREFIX_RE = re.compile(r'^(# |[ \t]+)')

EXCERPT_LINES = 200     # bound on one test's log excerpt


def num(text):
    """A number as written: 7 is an int, 7.5 a float; other text stays."""
    try:
        return int(text)
    except (TypeError, ValueError):
        pass
    try:
        return float(text)
    except (TypeError, ValueError):
        return text


def outcome(ok, directive):
    """What a result line means: (status, directive word or None, reason)
    from its "ok"/"not ok" and the text after its "#". The one rule, for
    results at the top of a program's output and nested ones alike
    (pipeline/results uses it too). SKIP and TODO skip; XFAIL passes
    (an expected failure) and XPASS fails (an unexpected pass), whatever
    ok/not ok says; TIMEOUT fails; any other text (runner.sh's "exit=139")
    is the reason of the status ok/not ok gives."""
    status = 'pass' if ok == 'ok' else 'fail'
    if not directive:
        return status, None, None
    d = DIRECTIVE_RE.match(directive.strip())
    if not d:
        return status, None, directive.strip() or None
    word = d.group(1).upper()
    text = d.group(2).strip()
    if word in ('SKIP', 'TODO'):
        return 'skip', word, text or word.lower()
    if word == 'XFAIL':
        return 'pass', word, ('expected failure: ' + text).strip()
    if word == 'XPASS':
        return 'fail', word, ('unexpected pass: ' + text).strip()
    return 'fail', word, ('timeout ' + text).strip()


def check_document(plan, numbers, skip=None):
    """The one KTAP rule, as kunit_parser applies it, for one document:
    PLAN its plan (None: none), NUMBERS its results' numbers as printed
    (None: a parent whose result never came), SKIP a "1..0 # SKIP why"
    plan's reason. Returns ({index in NUMBERS, or 'doc' for the document:
    why it breaks the rule}, the numbers the plan announced that never
    came: the plan less the results printed, as kunit_parser counts)."""
    problems = {}
    for i, n in enumerate(numbers):
        if n is None:
            continue
        if plan is not None and n > plan:
            problems[i] = 'result %d is beyond the plan 1..%d' % (n, plan)
        elif n != i + 1:
            problems[i] = 'expected test number %d, found %d%s' % (
                i + 1, n, ' (a repeat)' if n in numbers[:i] else '')
    if plan == 0 and not skip:
        problems['doc'] = 'the plan 1..0 gives no SKIP reason ' \
            '("1..0 # SKIP why"): nothing ran, and nothing says why'
    missing = list(range(len(numbers) + 1, (plan or 0) + 1))
    return problems, missing


class Test:
    """One result line and what nested under it."""

    def __init__(self, name, number, status, depth, line):
        self.name = name
        self.description = None      # the result line's own, as printed
        self.number = number
        self.status = status          # pass fail skip error
        self.directive = None         # SKIP TODO XFAIL XPASS TIMEOUT
        self.reason = None            # text after the directive / "# "
        self.depth = depth
        self.line = line              # line number of the result line
        self.duration_ms = None
        self.metrics = {}
        self.plan = None              # the plan of its subtests' document(s)
        self.plans = {}               # per document of them (1, 2, ...)
        self.plan_skips = {}          # per document: "1..0 # SKIP why"
        self.missing_numbers = []     # (document, number): check_document
        self.violations = []          # its documents' own (1..0 unsaid)
        self.subtests = []
        self.log = []                 # lines since the previous sibling
        self.bail_out = None          # the "Bail out!" line below it
        self.collection = None        # runner.sh's "selftests: <dir>: ..."
        self.key = None               # "<document>.<number>" among siblings
        self.header = None            # the root's: a header whose result
                                      # never came

    def missing(self):
        """Subtests the plans announced that never reported (per
        document, check_document)."""
        return len(self.missing_numbers)


class _Level:
    def __init__(self, depth, prefix=''):
        self.depth = depth
        self.prefix = prefix            # what its lines start with, past
                                        # the prefixes of the depths above
        self.results = []
        self.plan = None
        self.plans = {}                 # document -> its plan
        self.plan_skips = {}            # document -> "1..0 # SKIP" reason
        self.docs = 0                   # documents so far at this depth
        self.doc_plan = False           # the current one had its plan
        self.log = []
        self.duration = None
        self.metrics = {}
        self.header = None
        self.bail_out = None


def _opener(text):
    """KTAP that can start a document (and so open a depth)."""
    return bool(VERSION_RE.match(text) or PLAN_RE.match(text) or
                RESULT_RE.match(text))


def structural(text):
    """KTAP structure: a version line, a plan, a result, a bail out."""
    return bool(VERSION_RE.match(text) or PLAN_RE.match(text) or
                RESULT_RE.match(text) or BAIL_RE.match(text))


class Parser:
    """The parse of one KTAP stream, line by line: feed() each line of the
    stream, note() each line that came in between and is no part of it,
    finish() for the tree. header() is the name the top depth's last
    header announced, while its result has not come."""

    def __init__(self):
        self.levels = [_Level(0)]
        self.lineno = 0

    def header(self):
        return self.levels[0].header

    def note(self, lineno, text):
        """A line in the excerpts of the tests being collected, never read
        as KTAP: kernel text that came in between, a cut-off last line."""
        self.lineno = lineno
        for lv in self.levels:
            lv.log.append(text.rstrip('\r\n'))

    def _close_below(self, depth):
        """Close the levels deeper than DEPTH; return what depth+1 held
        (the subtests of a result at DEPTH)."""
        while len(self.levels) > depth + 2:
            self._orphans()
        if len(self.levels) == depth + 2:
            return self.levels.pop()
        return None

    def _orphan_below(self, depth):
        """A new document at DEPTH: what is open deeper lost its parent."""
        while len(self.levels) > depth + 1:
            self._orphans()

    def _orphans(self):
        """The deepest level closes without a parent result."""
        lv = self.levels.pop()
        parent = self.levels[-1]
        if not lv.results and lv.bail_out is None:
            return
        t = Test(parent.header or '(no result)', None, 'error', parent.depth,
                 self.lineno)
        t.reason = 'no result line for this test (its output ended)'
        t.key = '%d.-' % max(parent.docs, 1)
        self._adopt(t, lv)
        t.log = _cap(parent.log)
        parent.results.append(t)
        parent.log = []
        parent.header = None

    @staticmethod
    def _adopt(t, lv):
        if lv is None:
            return
        t.subtests = lv.results
        t.plan = lv.plan
        t.plans = lv.plans
        t.plan_skips = lv.plan_skips
        t.bail_out = lv.bail_out

    def _split(self, text):
        """TEXT with the prefixes of the open depths removed one by one
        (as far as they match), and, if the deepest open depth's prefix
        matched, (prefix, rest) for a line that might open the next."""
        rems = [text]
        for lv in self.levels[1:]:
            r = rems[-1]
            if r.startswith(lv.prefix):
                rems.append(r[len(lv.prefix):])
            elif r == lv.prefix.rstrip():
                rems.append('')     # "#" alone: an empty nested line
            else:
                break
        new = None
        if len(rems) == len(self.levels):
            m = NEW_PREFIX_RE.match(rems[-1])
            if m and _opener(rems[-1][m.end():]):
                new = (m.group(1), rems[-1][m.end():])
        return rems, new

    def feed(self, lineno, text):
        text = text.rstrip('\r\n')
        rems, new = self._split(text)
        if new is None and not any(structural(r) for r in rems):
            m = GLUED_RE.match(text)
            if m and m.group(1).strip():
                self.feed(lineno, m.group(1))
                self.feed(lineno, m.group(2))
                return
        self.lineno = lineno
        for lv in self.levels:
            lv.log.append(text)
        if new is not None:
            depth = len(self.levels)
            self.levels.append(_Level(depth, new[0]))
            self.levels[-1].log.append(text)
            body = new[1]
        else:
            depth = None
            for k in range(len(rems) - 1, -1, -1):
                if structural(rems[k]):
                    depth = k
                    break
            if depth is None:
                self._diagnostic(rems)
                return
            body = rems[depth]
        lv = self.levels[depth]
        if VERSION_RE.match(body):
            self._orphan_below(depth)
            lv.log.pop()            # structure, not a test's output
            lv.docs += 1
            lv.doc_plan = False
            return
        m = PLAN_RE.match(body)
        if m:
            self._orphan_below(depth)
            lv.log.pop()
            if lv.doc_plan or lv.docs == 0:
                lv.docs += 1        # a document without a version line
            lv.doc_plan = True
            lv.plan = (lv.plan or 0) + int(m.group(1))
            lv.plans[lv.docs] = int(m.group(1))
            sk = PLAN_SKIP_RE.match(body)
            if sk:
                lv.plan_skips[lv.docs] = sk.group(1) or None
            return
        if BAIL_RE.match(body):
            lv.bail_out = body
            return
        m = RESULT_RE.match(body)
        sub = self._close_below(depth)
        self._result(lv, m, sub, lineno)

    def _diagnostic(self, rems):
        """A line that is no KTAP structure at any depth: what it says to
        the deepest depth it can be a diagnostic of."""
        for k in range(len(rems) - 1, -1, -1):
            lv = self.levels[k]
            m = DURATION_RE.match(rems[k])
            if m:
                lv.duration = num(m.group(1))
                lv.log.pop()        # the guest filter's, not the test's
                return
            m = HEADER_RE.match(rems[k]) or RUN_RE.match(rems[k])
            if m:
                # a test begins: what came before is not its output
                lv.header = m.group(1)
                lv.log = [lv.log[-1]]
                lv.duration = None
                lv.metrics = {}
                return
            m = METRIC_RE.match(rems[k])
            if m:
                lv.metrics[m.group(1)] = num(m.group(2).strip())
                return

    def _result(self, lv, m, sub, lineno):
        ok, number, name, directive = m.groups()
        t = Test(name or lv.header or 'test-%s' % number, int(number),
                 'pass' if ok == 'ok' else 'fail', lv.depth, lineno)
        t.description = name
        t.key = '%d.%s' % (max(lv.docs, 1), number)
        km = KSFT_NAME_RE.match(t.name)
        if km:
            t.collection, t.name = km.group(1), km.group(2)
        t.status, t.directive, t.reason = outcome(ok, directive)
        t.duration_ms = lv.duration
        t.metrics = lv.metrics
        self._adopt(t, sub)
        t.log = _cap(lv.log)
        lv.results.append(t)
        lv.log = []
        lv.duration = None
        lv.metrics = {}
        lv.header = None

    def finish(self):
        while len(self.levels) > 1:
            self._orphans()
        root = Test('', None, 'pass', -1, 0)
        lv = self.levels[0]
        self._adopt(root, lv)
        root.header = lv.header
        root.log = _cap(lv.log)
        _judge(root)
        return root


def _judge(t):
    """Every document below T, at every depth, held to check_document:
    results that break it get the reason (not a failure: an error)."""
    docs = {}
    for s in t.subtests:
        docs.setdefault(int(s.key.split('.')[0]), []).append(s)
    t.missing_numbers = []
    t.violations = []
    for d in sorted(set(docs) | set(t.plans)):
        subs = docs.get(d, [])
        problems, missing = check_document(
            t.plans.get(d), [s.number for s in subs], t.plan_skips.get(d))
        for i, why in problems.items():
            if i == 'doc':
                t.violations.append(why)
                continue
            # a failure stays one (the reason says more); a pass or a
            # skip that breaks the rule cannot be counted: an error
            s = subs[i]
            s.reason = why + ('; ' + s.reason if s.reason else '')
            if s.status != 'fail':
                s.status = 'error'
                s.directive = None
        t.missing_numbers += [(d, n) for n in missing]
    if t.violations and t.depth >= 0 and t.status not in ('fail', 'error'):
        t.status = 'error'
        t.reason = '; '.join(t.violations)
    for s in t.subtests:
        _judge(s)


def _cap(lines, limit=EXCERPT_LINES):
    if len(lines) <= limit:
        return list(lines)
    keep = limit // 2
    return lines[:keep] + ['[... %d lines omitted ...]'
                           % (len(lines) - 2 * keep)] + lines[-keep:]


def parse(lines):
    """Parse KTAP text: LINES is a string, or an iterable of strings or of
    (line number, text) pairs. Returns the root Test (name '', depth -1):
    its subtests are the top-level results, its plan the top-level plan,
    its log the lines after the last top-level result."""
    if isinstance(lines, str):
        lines = lines.split('\n')
        if lines and lines[-1] == '':
            lines.pop()
    p = Parser()
    for n, item in enumerate(lines, 1):
        if isinstance(item, tuple):
            p.feed(item[0], item[1])
        else:
            p.feed(n, item)
    return p.finish()


def main(argv=None):
    """python3 -m pipeline.ktap [--prefix A/B] [FILE]: print every test of
    a KTAP stream (FILE or stdin) as one JSON object per line, parents
    first."""
    import argparse
    import json
    import sys
    ap = argparse.ArgumentParser(prog='python3 -m pipeline.ktap',
                                 description=main.__doc__)
    ap.add_argument('--prefix', default='', help='path to put first')
    ap.add_argument('file', nargs='?', help='KTAP text (default: stdin)')
    a = ap.parse_args(argv)
    try:
        if a.file:
            with open(a.file, encoding='utf-8', errors='replace') as f:
                text = f.read()
        else:
            text = sys.stdin.read()
    except OSError as e:
        print('pipeline.ktap: %s' % e, file=sys.stderr)
        return 2
    prefix = tuple(p for p in a.prefix.split('/') if p)
    for t in flatten(parse(text), prefix):
        print(json.dumps(t, sort_keys=True))
    return 0


if __name__ == '__main__':
    import sys
    sys.exit(main())
