"""The page's data, typed: what one results set says, gathered from the
analysis' own functions (the summary and its regressions against
pristine, the baseline check, make compare against the previous run, the
LOST rule), never judged again here.

build() reads a results directory as a checkout has it (results/<variant>/,
with summary.json naming the variants asked for), a CI download
(results-<variant>/) or one variant's directory, and the console logs
beside the results, for the excerpts the page embeds.

Python 3.11 standard library only (Debian 12).
"""

import dataclasses
import datetime
import json
import os
import re

from .. import Fail, classes
from ..models import BAD, ExitClass, Status
from ..analysis import baseline as base_mod, compare, runs, skips, summary
from . import charts, figures, history

OUTPUT_LINES = 30       # the end of a failing test's output
BEFORE, AFTER = 25, 6   # console lines around a failing test's result
REPORT_AFTER = 45       # console lines of a kernel report
MAX_FAILURES = 200      # listed in full; the rest counted


@dataclasses.dataclass
class Variant:
    name: str
    dir: str | None
    cls: int
    label: str
    green: bool
    reason: str | None
    kernel_release: str | None
    boot_s: float | None
    passed: int
    failed: int
    errors: int
    skipped: int
    benchmarks: int
    lost: int


@dataclasses.dataclass
class Cell:
    """One variant's tests of one suite."""
    variant: str
    suite: str
    state: str          # fail, error, lost, skip, bench, pass: its colour
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    benchmarks: int = 0
    lost: int = 0
    link: str | None = None     # the anchor of its first problem


@dataclasses.dataclass
class Failure:
    variant: str
    test: str
    status: str
    reason: str
    output: str
    kinds: list
    line: int | None
    anchor: str
    log_anchor: str | None = None
    reports: list = dataclasses.field(default_factory=list)  # anchors


@dataclasses.dataclass
class KernelReport:
    variant: str
    kind: str
    first_line: str
    during: str | None
    line: int | None
    text: str
    decoded: bool
    anchor: str
    log_anchor: str | None = None


@dataclasses.dataclass
class Excerpt:
    """Console log lines embedded in the page: FIRST is the line number
    of LINES[0], MARK the line the failure or report is at."""
    variant: str
    anchor: str
    first: int
    mark: int
    lines: list


@dataclasses.dataclass
class Problem:
    """What the top of the page lists: a variant that did not run whole,
    a kernel report, a failure, a test in error, a LOST test."""
    kind: str
    variant: str
    test: str | None
    text: str
    link: str | None = None


@dataclasses.dataclass
class Page:
    results: str
    date: str
    verdict: str
    verdict_class: int
    green: bool
    counts: summary.Counts
    variants: list[Variant]
    suites: list[str]
    cells: dict                 # {(variant, suite): Cell}
    problems: list[Problem]
    failures: list[Failure]
    more_failures: int
    reports: list[KernelReport]
    excerpts: list[Excerpt]
    regressions: dict           # {variant: [test ids]} versus pristine
    accepted_lost: dict         # {variant: ['id (reason)']}
    baseline: list[str]         # the baseline check's lines
    previous: list[str]         # make compare's lines against the last run
    previous_what: str
    figures: dict               # this run's {chart|series: value}
    charts: list
    charts_note: str | None

    def cell(self, variant: str, suite: str) -> Cell | None:
        return self.cells.get((variant, suite))

    def excerpt(self, anchor: str) -> Excerpt | None:
        return next((e for e in self.excerpts if e.anchor == anchor), None)


def read_set(top: str) -> tuple[dict[str, str], dict[str, dict]]:
    """({variant: its directory under TOP}, {variant: results.json})."""
    if not os.path.isdir(top):
        raise Fail('%s is not a directory of results' % top)
    if os.path.isfile(os.path.join(top, 'results.json')):
        found = ['.']
    else:
        found = [d for d in sorted(os.listdir(top))
                 if os.path.isfile(os.path.join(top, d, 'results.json'))]
    dirs, sets = {}, {}
    for d in found:
        r = runs.load(os.path.join(top, d))
        v = r.get('variant') if isinstance(r, dict) else None
        if not v or v in sets:
            raise Fail('%s: no variant name, or a variant twice' % d)
        dirs[v], sets[v] = d, r
    return dirs, sets


def requested(top: str, dirs: dict[str, str]) -> list[str]:
    """The variants of the page: those the run asked for (summary.json's
    list: results of others are older runs', not counted), and, when
    results were written since that summary (make test-variant after
    make), every variant found."""
    found = list(dirs)
    path = os.path.join(top, 'summary.json')
    try:
        with open(path, encoding='utf-8') as f:
            want = json.load(f).get('requested')
        stamp = os.path.getmtime(path)
    except (OSError, ValueError, AttributeError):
        return found
    if not isinstance(want, list) or not want:
        return found
    want = [str(v) for v in want]
    newer = [v for v in found if os.path.getmtime(os.path.join(
        top, dirs[v], 'results.json')) > stamp]
    return want + [v for v in found if v not in want] if newer else want


def tail(text: str, n: int) -> str:
    lines = (text or '').rstrip('\n').split('\n')
    if len(lines) > n:
        lines = ['[... %d earlier lines]' % (len(lines) - n)] + lines[-n:]
    return '\n'.join(lines)


FRAME = re.compile(r'\b(\w+) \(([\w/.+-]+\.[chS]:\d+)\)')


def frame(text: str) -> str | None:
    """The first decoded frame of a report: 'function (file.c:line)'."""
    m = FRAME.search(text or '')
    return '%s (%s)' % (m.group(1), m.group(2)) if m else None


def last_words(excerpt: str | None) -> str:
    """What a failing test said last, before its own result line."""
    for ln in reversed((excerpt or '').split('\n')):
        ln = ln.strip().lstrip('#').strip()
        if ln and not ln.startswith(('not ok', 'ok ', '1..', 'Totals')) \
                and not ln.startswith('# Totals'):
            return ln[:200]
    return ''


class Logs:
    """The console logs, read once each, cut into excerpts."""

    def __init__(self, top: str, dirs: dict[str, str]):
        self.top, self.dirs = top, dirs
        self.cache: dict[str, list | None] = {}
        self.excerpts: list[Excerpt] = []

    def lines(self, v: str) -> list | None:
        if v not in self.cache:
            path = os.path.join(self.top, self.dirs[v], 'console.log')
            try:
                with open(path, encoding='utf-8', errors='replace',
                          newline='') as f:
                    # (a serial console ends its lines with \r\r\n)
                    self.cache[v] = [ln.rstrip('\r') for ln in
                                     f.read().split('\n')]
            except OSError:
                self.cache[v] = None
        return self.cache[v]

    def cut(self, v: str, line, before: int, after: int) -> str | None:
        """The anchor of the excerpt around LINE (1-based) of V's log."""
        log = self.lines(v)
        if not isinstance(line, int) or log is None or \
                not 1 <= line <= len(log):
            return None
        anchor = 'log-%s-%d' % (slug(v), line)
        if not any(e.anchor == anchor for e in self.excerpts):
            lo, hi = max(1, line - before), min(len(log), line + after)
            self.excerpts.append(Excerpt(v, anchor, lo, line,
                                         log[lo - 1:hi]))
        return anchor


def slug(text: str) -> str:
    return ''.join(c if c.isalnum() or c in '-_' else '_' for c in text)


def run_date(top: str, dirs: dict[str, str]) -> str:
    stamps = [os.path.getmtime(os.path.join(top, d, 'results.json'))
              for d in dirs.values()]
    when = datetime.datetime.fromtimestamp(max(stamps) if stamps else 0,
                                           datetime.timezone.utc)
    return when.strftime('%Y-%m-%d %H:%M UTC')


def _cells(names, sets, lost_ids, problem_link):
    suites: list[str] = []
    cells = {}
    for v in names:
        if v not in sets:
            continue
        lost = {tid for lv, tid in lost_ids if lv == v}
        tests = sets[v].get('tests') or []
        for s in sorted({t.get('suite') or t['id'].split('/')[0]
                         for t in tests}):
            if s not in suites:
                suites.append(s)
        by_suite: dict[str, Cell] = {}
        for t in tests:
            s = t.get('suite') or t['id'].split('/')[0]
            c = by_suite.setdefault(s, Cell(v, s, 'pass'))
            st = t['status']
            if st == Status.PASS:
                c.passed += 1
            elif st == Status.FAIL:
                c.failed += 1
            elif st == Status.ERROR:
                c.errors += 1
            elif st == Status.SKIP:
                c.skipped += 1
            elif st == Status.BENCH:
                c.benchmarks += 1
            if t['id'] in lost:
                c.lost += 1
            if c.link is None and (st in BAD or t['id'] in lost):
                c.link = problem_link.get((v, t['id']))
        for s, c in by_suite.items():
            c.state = ('fail' if c.failed else 'error' if c.errors else
                       'lost' if c.lost else 'pass' if c.passed else
                       'bench' if c.benchmarks else 'skip')
            cells[(v, s)] = c
    return suites, cells


def _failures(names, sets, logs):
    """([Failure], [KernelReport], failures not listed) of the run."""
    failures, reports, more = [], [], 0
    for v in names:
        for t in (sets.get(v) or {}).get('tests') or []:
            if t['status'] not in BAD:
                continue
            if len(failures) >= MAX_FAILURES:
                more += 1
                continue
            reason = t.get('note') or ''
            if t.get('explained_by'):
                reason = '%s%skernel %s while it ran' % (
                    reason, '; ' if reason else '',
                    ', '.join(t['explained_by']))
            f = Failure(
                v, t['id'], t['status'],
                reason or last_words(t.get('excerpt')) or t['status'],
                tail(t.get('decoded') or t.get('excerpt') or '',
                     OUTPUT_LINES),
                list(t.get('explained_by') or []), t.get('line'),
                'fail-%d' % (len(failures) + 1))
            f.log_anchor = logs.cut(v, f.line, BEFORE, AFTER)
            failures.append(f)
        for p in (sets.get(v) or {}).get('kernel_problems') or []:
            k = KernelReport(v, p.get('kind', '?'), p.get('first_line', ''),
                             p.get('during'), p.get('line'),
                             p.get('decoded') or p.get('excerpt') or '',
                             bool(p.get('decoded')),
                             'report-%d' % (len(reports) + 1))
            k.log_anchor = logs.cut(v, k.line, 3, REPORT_AFTER)
            reports.append(k)
    for f in failures:
        f.reports = [k.anchor for k in reports
                     if k.variant == f.variant and k.kind in f.kinds]
    return failures, reports, more


def _previous(hdir, rid, top, names, sets, rules):
    """make compare's lines against the run before RID in the history
    HDIR, and what that run was."""
    prev = history.previous(hdir, rid)
    prev_lines, prev_what = [], 'no earlier run recorded on this machine'
    if prev:
        prev_what = 'the run before this one on this machine'
        try:
            _, before = read_set(prev)
            want = [v for v in names if v in sets and v in before]
            if want:
                prev_lines = compare.compare(prev, top, want, rules)[0][1:]
        except Fail as e:
            # (the history is a convenience: a copy that cannot be read
            # is said, never a page not written)
            prev_lines = ['cannot compare: %s' % e]
        try:
            with open(os.path.join(prev, 'run.json'), encoding='utf-8') as f:
                info = json.load(f)
            prev_what += ' (%s, %s)' % (info.get('date'),
                                        info.get('results'))
        except (OSError, ValueError, AttributeError):
            pass
    return prev_lines, prev_what


def _problems(variants, rows, summary_rows, reports, failures, checks):
    """What did not go as planned, in the order the page's top lists it;
    {(variant, test): the anchor it links to}; the LOST (variant, test)s."""
    problems = []
    for vv in variants:
        r = rows[vv.name]
        # (a kernel report is listed as itself, below)
        if classes.counts_as_failure(classes.named(
                r.exit_class, r.exit_class_name)) and not r.kernel_problems:
            problems.append(Problem('no result' if r.tests is None
                                    else vv.label, vv.name, None,
                                    r.reason or vv.label,
                                    'variant-' + slug(vv.name)))
    for k in reports:
        at = frame(k.text) if k.decoded else None
        problems.append(Problem('kernel', k.variant, None, '%s%s: %s%s' % (
            k.kind, ' during %s' % k.during if k.during else '',
            k.first_line, ' at %s' % at if at else ''), k.anchor))
    link = {}
    for f in failures:
        problems.append(Problem(f.status, f.variant, f.test, f.reason,
                                f.anchor))
        link[(f.variant, f.test)] = f.anchor
    lost_seen = set()
    for r in summary_rows:
        for tid in r.lost_tests:
            lost_seen.add((r.variant, tid))
            problems.append(Problem('LOST', r.variant, tid,
                                    'passed on %s, skipped or not run here'
                                    % summary.BASELINE, 'regressions'))
            link[(r.variant, tid)] = 'regressions'
    for c in checks:
        for line in c.lost:
            tid = line.split(': pass -> ')[0][len(c.variant) + 1:]
            if (c.variant, tid) not in lost_seen:
                lost_seen.add((c.variant, tid))
                problems.append(Problem(
                    'LOST', c.variant, tid, 'pass -> %s against ci/baseline/'
                    % line.split(': pass -> ', 1)[-1], 'baseline'))
                link.setdefault((c.variant, tid), 'baseline')
    return problems, link, lost_seen


def build(top: str, baseline_dir: str | None = None,
          history_dir: str | None = None, accepted: str | None = None,
          record: bool = False, draw: bool = True) -> Page:
    """The page of the results set at TOP. BASELINE_DIR: ci/baseline/ (or
    none), HISTORY_DIR: the history (history.default_dir()), ACCEPTED:
    configs/accepted-skips.txt; RECORD: add this run to the history;
    DRAW: the charts' SVG too (when matplotlib is there)."""
    dirs, sets = read_set(top)
    names = requested(top, dirs)
    rules = skips.load_accepted(accepted)
    s = summary.summarize(top, names, rules, dirs)
    rows = {r.variant: r for r in s.rows}
    logs = Logs(top, dirs)

    variants = []
    for r in s.rows:
        c = classes.named(r.exit_class, r.exit_class_name)
        variants.append(Variant(
            r.variant, dirs.get(r.variant), int(c), c.label,
            classes.green(c), r.reason, r.kernel_release, r.boot_s,
            r.passed, r.failed, r.errors, r.skipped, r.benchmarks,
            len(r.lost_tests)))

    failures, reports, more = _failures(names, sets, logs)
    checks = base_mod.check(top, baseline_dir, names, rules) \
        if baseline_dir and os.path.isdir(baseline_dir) else []
    problems, link, lost_seen = _problems(variants, rows, s.rows, reports,
                                          failures, checks)
    suites, cells = _cells(names, sets, lost_seen, link)

    baseline_lines = []
    for c in checks:
        if not c.judged:
            baseline_lines.append('%s: no baseline file, not judged'
                                  % c.variant)
            continue
        baseline_lines.append('%s: %d tests in the baseline, %d lost' % (
            c.variant, c.known, len(c.lost)))
        baseline_lines += ['LOST ' + ln for ln in c.lost]
        baseline_lines += ['lost, ok ' + ln for ln in c.accepted]

    files = [os.path.join(top, dirs[v], 'results.json') for v in sets]
    rid, date = history.run_id(files), run_date(top, dirs)
    figs = figures.of_run(sets)
    hdir = history_dir or history.default_dir()
    prev_lines, prev_what = _previous(hdir, rid, top, names, sets, rules)
    if record:
        try:
            history.record(hdir, rid, date, figs, os.path.abspath(top),
                           date[5:16], sets)
        except OSError as e:
            prev_what += ' (the history could not be written: %s)' % e
    past = [r for r in history.load(hdir) if r.id != rid]
    cs = charts.build(past + [history.Run(rid, date, date[5:16], figs)])
    note = None
    if cs and charts.available():
        if draw:
            charts.draw(cs, os.path.join(hdir, 'matplotlib'))
    elif cs:
        note = ('charts not drawn: python3-matplotlib is not installed '
                'where this page was written (scripts/deps/build.txt and '
                'check.txt list it); the figures of this run are in the '
                'table below')
    verdict = ExitClass(s.exit_class)
    return Page(top, date, verdict.label, int(verdict),
                classes.green(verdict), s.counts, variants, suites, cells,
                problems, failures, more, reports, logs.excerpts,
                {r.variant: r.regressed_tests for r in s.rows
                 if r.regressed_tests},
                {r.variant: r.accepted_lost for r in s.rows
                 if r.accepted_lost},
                baseline_lines, prev_lines, prev_what, figs, cs, note)
