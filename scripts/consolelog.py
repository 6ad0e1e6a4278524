"""Classify a saved QEMU serial console log: a pure function of the log text.

`parse(text)` turns the text of one `results/<variant>/console.log` (see
expect-scripts/PROTOCOL.md) into one result dict: boot facts, kernel problems
with excerpts, per-test KTAP results and the boot's exit class. `write_*`
turn that dict into results.json, junit.xml and <suite>.ktap. Nothing here
reads the clock or the environment, so an old log re-analysed gives the same
answer and the classifier can be unit-tested on recorded logs.

The kernel failure patterns live in failure-patterns.txt next to this file,
so the expect script's live detection and this offline classifier agree.

Python 3.11 standard library only (Debian 12).
"""

import fnmatch
import json
import os
import re
import xml.etree.ElementTree as ET

import ktap
import testsel

PATTERNS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             'failure-patterns.txt')

CLASS_NAMES = {0: 'pass', 1: 'test-failure', 2: 'infrastructure',
               3: 'kernel-problem'}

# How much a kind says about a report that several trigger lines share (a
# page-fault "BUG:" header, then "Oops:"; a "cut here", then "kernel BUG
# at"): the report is named after its highest-ranked line.
KIND_RANK = {
    'panic': 100,
    'kasan': 90, 'kfence': 90, 'kcsan': 90, 'kmsan': 90, 'ubsan': 90,
    'lockdep': 85, 'atomic-sleep': 85,
    'soft-lockup': 80, 'hard-lockup': 80, 'hung-task': 80, 'rcu-stall': 80,
    'kmemleak': 80,
    'bug': 50, 'oops': 40, 'warning': 10,
}
# Reports that print no "end trace" line: they end with their stack dump.
STACK_ENDED = {'lockdep', 'atomic-sleep', 'soft-lockup', 'hard-lockup',
               'hung-task', 'rcu-stall'}
# Reports framed by "=====" lines (the closing line ends them).
FRAMED = {'kasan', 'kfence', 'kcsan', 'kmsan'}

EXCERPT_LINES = 120     # bound on one kernel problem excerpt
TEST_EXCERPT_LINES = 200
# A report is printed in one burst; a pause this long in printk time means
# it ended (some, like lockdep's "lock held when returning to user space",
# print no stack and no end line).
REPORT_PAUSE_S = 2.0
MAX_PROBLEMS = 50       # repeated stall reports would otherwise flood JSON

# printk timestamp with PRINTK_TIME: always 6 decimals, which user text
# rarely has; it is how kernel text is told apart from program output.
TS_RE = re.compile(r'\[\s*(\d+\.\d{6})\]')
ANSI_RE = re.compile(r'\x1b(\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>78])')
# control characters except tab, newline and carriage return
CTRL_RE = re.compile(r'[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]')
KV_RE = re.compile(r'([\w.-]+)=(\S*)')
MARKER_IN_LINE_RE = re.compile(
    r'@@@ (HARNESS|READY|SUITE-BEGIN|SUITE-END|TEST-BEGIN|TEST-END|CHECK|'
    r'RETRY|FINAL-DONE)\b')
SEPARATOR_RE = re.compile(r'^(=|-){8,}$')

KTAP_RESULT_RE = re.compile(
    r'^(not ok|ok)\s+(\d+)(?:\s+(?:-\s+)?([^#]*?))?\s*(?:#\s*(.*))?$')
KTAP_PLAN_RE = re.compile(r'^1\.\.(\d+)')
KTAP_VERSION_RE = re.compile(r'^(K?TAP) version (\d+)')
KTAP_SHAPED_RE = re.compile(
    r'^\s*(ok\s+\d+|not ok\s+\d+|#|K?TAP version|\d+\.\.\d+|Bail out!)')
RUN_RE = re.compile(r'^#\s+RUN\s+(\S+)')
DURATION_RE = re.compile(r'^#\s*duration_ms=(\d+(?:\.\d+)?)\s*$')
# `# metric: k=v` (ksft_print_msg) or TH_LOG's `# file:line:test:metric: k=v`
METRIC_RE = re.compile(r'^#\s*(?:\S+?:\d+:\S+?:)?\s*metric:\s*([^=\s]+)=(.*)$')
# PROTOCOL.md: any program exit status but 0 is a failure (class 1). Even
# kselftest's 4 (KSFT_SKIP): the guest's SUITE-END rc counts it as a
# failure too, and kselftest_harness.h programs exit 0 when tests skip.
OK_RC = {0}


# The harness lines (PROTOCOL.md) kept as events in results.json.
HARNESS_EVENTS = ('BOOT-TIMEOUT', 'SUITE-TIMEOUT', 'SILENCE', 'PANIC',
                  'FINAL-TIMEOUT', 'POWEROFF-TIMEOUT', 'INTERRUPTED',
                  'QEMU-EXIT', 'SUITE-DONE', 'END', 'READY-SEEN')
# Events after which the harness kills QEMU: they, not QEMU's status, say
# what went wrong.
HARNESS_STOPS = {'BOOT-TIMEOUT', 'SUITE-TIMEOUT', 'SILENCE', 'FINAL-TIMEOUT',
                 'POWEROFF-TIMEOUT', 'INTERRUPTED'}


class PatternError(ValueError):
    pass


def load_patterns(path=PATTERNS_FILE):
    """Read failure-patterns.txt: [(kind, compiled regex, source line)]."""
    pats = []
    with open(path, encoding='utf-8') as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip('\n')
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            m = re.match(r'^(\S+)\s+(.+?)\s*$', line)
            if not m:
                raise PatternError('%s:%d: expected "<kind> <regex>"' % (path, n))
            kind, rx = m.groups()
            if kind not in KIND_RANK and kind not in ('ignore', 'end'):
                raise PatternError('%s:%d: unknown kind %r' % (path, n, kind))
            try:
                pats.append((kind, re.compile(rx), rx))
            except re.error as e:
                raise PatternError('%s:%d: %s' % (path, n, e)) from e
    return pats


def classify_line(text, patterns):
    """Kind of one line of kernel text (first matching pattern) or None."""
    for kind, rx, _ in patterns:
        if rx.search(text):
            return kind
    return None


def strip_ts(text):
    """Line without its leading printk timestamp (and CPU/caller id)."""
    m = TS_RE.match(text)
    if not m:
        return text
    rest = text[m.end():]
    rest = re.sub(r'^\[\s*[TC]\d+\]', '', rest)
    return rest.lstrip(' ')


def split_records(text):
    """Physical console lines -> logical records (lineno, 'k'|'u', text).

    'k' is kernel text (starts with a printk timestamp), 'u' everything else
    (markers, KTAP, shell). The serial console is shared, so a kernel
    message can land in the middle of a user line: "ok 1 glo[  5.1] WARN..."
    followed later by "bal.foo". The user part before the timestamp is
    carried and joined with the next user line, which rebuilds "ok 1
    global.foo" and keeps the kernel line whole.
    """
    out = []
    carry = ''
    carry_no = 0

    def flush():
        nonlocal carry
        if carry:
            out.append((carry_no, 'u', carry))
        carry = ''

    for no, raw in enumerate(text.split('\n'), 1):
        # keep '\r' for now: a user prefix ending in '\r' was a whole line
        line = CTRL_RE.sub('', ANSI_RE.sub('', raw))
        m = TS_RE.search(line)
        kern = user = None
        if m and line[:m.start()].replace('\r', '').strip() == '':
            kern = line[m.start():]
        elif m:
            prefix = line[:m.start()]
            if not carry:
                carry_no = no
            carry += prefix.replace('\r', '')
            if prefix.rstrip(' ').endswith('\r'):
                # the user line was complete before the kernel cut in
                flush()
            kern = line[m.start():]
        else:
            user = line
        if kern is not None:
            kern = kern.replace('\r', '')
            # a user marker glued after a kernel line without its newline
            at = kern.find('@@@ ')
            if at > 0:
                kern, user = kern[:at], kern[at:]
            out.append((no, 'k', kern))
        if user is not None:
            user = user.replace('\r', '')
            # a marker glued after user output that had no newline
            # ("abc@@@ TEST-END ..."): the marker starts its own line
            m2 = MARKER_IN_LINE_RE.search(user)
            if m2 and m2.start() > 0:
                head, user = user[:m2.start()], user[m2.start():]
                out.append((no, 'u', carry + head))
                carry = ''
            if carry:
                if user.startswith('@@@ '):
                    # markers always start a line: never glue onto them
                    flush()
                else:
                    user = carry + user
                    no = carry_no
                    carry = ''
            out.append((no, 'u', user))
    flush()
    # a trailing newline leaves one empty record: drop it
    if out and out[-1][1] == 'u' and out[-1][2] == '':
        out.pop()
    return out


def _kv(s):
    return dict(KV_RE.findall(s))


def _num(s):
    try:
        return int(s)
    except (TypeError, ValueError):
        pass
    try:
        return float(s)
    except (TypeError, ValueError):
        return s


def _cap(lines, limit):
    if len(lines) <= limit:
        return '\n'.join(lines)
    keep = limit // 2
    return '\n'.join(lines[:keep] + ['[... %d lines omitted ...]'
                                     % (len(lines) - 2 * keep)]
                     + lines[-keep:])


class _Splat:
    """One kernel report being collected."""

    def __init__(self, kind, lineno, text, kidx, lead, during, cut_here):
        self.kinds = [kind]
        self.kind = kind
        self.first_line = strip_ts(text)
        self.lineno = lineno
        self.uptime = None
        m = TS_RE.match(text)
        if m:
            self.uptime = float(m.group(1))
        self.lines = ([lead[1]] if lead else []) + [text]
        if lead:
            self.lineno = lead[0]
        self.last_trigger = kidx
        self.only_cut_here = cut_here
        self.closed = False
        self.truncated = False
        self.during = during
        self.last_ts = self.uptime

    def add_trigger(self, kind, text, kidx, cut_here):
        if kind not in self.kinds:
            self.kinds.append(kind)
        if self.only_cut_here and not cut_here or \
                KIND_RANK[kind] > KIND_RANK[self.kind]:
            self.kind = kind
            self.first_line = strip_ts(text)
        self.only_cut_here = self.only_cut_here and cut_here
        self.last_trigger = kidx
        self.lines.append(text)
        m = TS_RE.match(text)
        if m:
            self.last_ts = float(m.group(1))

    def as_dict(self):
        return {
            'kind': self.kind,
            'kinds': self.kinds,
            'first_line': self.first_line,
            'line': self.lineno,
            'uptime': self.uptime,
            'during': self.during,
            'excerpt': '\n'.join(self.lines),
            'excerpt_truncated': self.truncated,
        }


class _Program:
    def __init__(self, suite, name, lineno, uptime, implicit=False):
        self.suite = suite
        self.name = name
        self.lineno = lineno
        self.begin_uptime = uptime
        self.end_uptime = None
        self.rc = None
        self.ended = False
        self.implicit = implicit
        # what the KTAP parse gathers (a second run starts it anew):
        # plan: the plans of all its KTAP documents, summed; docs: per
        # document its plan and the result numbers seen; results: test
        # dicts in KTAP order; pending: lines since the last result;
        # numbered: its output lines with their log line numbers; tree:
        # their nested parse (scripts/ktap.py), once made
        self.__dict__.update(self.fresh_run())
        self.ktap_lines = []    # user lines only: the program's own output
        self.metrics = {}
        self.splats = []        # kernel problems while it ran
        self.first_run = None   # the parse state before @@@ RETRY
        self.retry = []         # (test, glob) the RETRY lines named

    @staticmethod
    def fresh_run():
        return {'plan': None, 'docs': [], 'version': None, 'results': [],
                'pending': [], 'pending_duration': None,
                'pending_metrics': {}, 'run_name': None, 'numbered': [],
                'bail_out': None, 'tree': None}

    def new_run(self):
        """Keep what the KTAP parse gathered so far as the first run and
        start anew: the program runs a test again (@@@ RETRY)."""
        fresh = self.fresh_run()
        self.first_run = {k: getattr(self, k) for k in fresh}
        self.__dict__.update(fresh)

    @property
    def id(self):
        return '%s/%s' % (self.suite, self.name)


class _Suite:
    def __init__(self, name, lineno, uptime):
        self.name = name
        self.lineno = lineno
        self.begin_uptime = uptime
        self.end_uptime = None
        self.rc = None
        self.ended = False
        self.timed_out = False
        self.programs = []


class _Parser:
    def __init__(self, patterns):
        self.patterns = patterns
        self.harness = {'start': None, 'variant': None, 'date': None,
                        'accel': None,
                        'qemu_cmdline': None, 'qemu_exit_status': None,
                        'end_elapsed_s': None, 'events': [], 'sent': []}
        self.ready = None
        self.release = None
        self.linux_version_release = None
        self.cmdline = None
        self.suites = []
        self.suite = None
        self.program = None
        self.problems = []
        self.problems_total = 0
        self.splat = None
        self.kidx = 0
        self.prev_kernel = None     # (lineno, text) of the last kernel line
        self.recent_sends = []
        self.implicit_count = 0
        self.harness_panic = False
        self.timestamped = False
        self.last_line = None       # (lineno, text) the guest's last line
        self.checks = {}            # @@@ CHECK: name -> state, detail, line
        self.unplanned = []         # suite/program that ran, not planned
        self.final_done = None      # line of @@@ FINAL-DONE
        self.final_sent = None      # line of the SEND of the final command
        self.kasan_banner = None    # line of "KernelAddressSanitizer initialized"

    # ---- kernel problems ------------------------------------------------
    def _during(self):
        p = self.program
        if p is None:
            if self.suite is not None:
                return self.suite.name
            return 'boot' if self.ready is None else 'shell'
        if p.run_name:
            return '%s/%s' % (p.id, p.run_name)
        return p.id

    def _close_splat(self):
        if self.splat is not None:
            self.splat.closed = True
            self.splat = None

    def scan(self, lineno, text):
        """Feed one line of kernel text to the report collector."""
        self.kidx += 1
        body = strip_ts(text)
        if self.kasan_banner is None and \
                'KernelAddressSanitizer initialized' in body:
            self.kasan_banner = lineno
        if self.cmdline is None and body.startswith('Kernel command line:'):
            self.cmdline = body.split(':', 1)[1].strip()
        m = re.search(r'Linux version (\S+)', body)
        if m and self.linux_version_release is None:
            self.linux_version_release = m.group(1)
        kind = classify_line(body, self.patterns)
        sp = self.splat
        if kind == 'ignore':
            self.prev_kernel = (lineno, text)
            return
        if kind == 'end':
            if sp is not None:
                sp.lines.append(text)
                self._close_splat()
            self.prev_kernel = (lineno, text)
            return
        if kind is not None:
            cut_here = 'cut here' in body
            gap = self.kidx - sp.last_trigger if sp is not None else None
            if sp is not None and kind != 'panic' and not cut_here and (
                    (sp.only_cut_here and gap <= 3) or
                    (kind in ('oops', 'bug', 'warning') and gap <= 12)):
                sp.add_trigger(kind, text, self.kidx, cut_here)
            else:
                self._close_splat()
                lead = None
                if self.prev_kernel is not None and \
                        SEPARATOR_RE.match(strip_ts(self.prev_kernel[1])):
                    lead = self.prev_kernel
                self.problems_total += 1
                sp = _Splat(kind, lineno, text, self.kidx, lead,
                            self._during(), cut_here)
                if len(self.problems) < MAX_PROBLEMS:
                    self.problems.append(sp)
                self.splat = sp
                if self.program is not None:
                    self.program.splats.append(sp)
            self.prev_kernel = (lineno, text)
            return
        if sp is not None and sp.last_ts is not None:
            m = TS_RE.match(text)
            if m and float(m.group(1)) - sp.last_ts > REPORT_PAUSE_S:
                self._close_splat()
                sp = None
        if sp is not None:
            m = TS_RE.match(text)
            if m:
                sp.last_ts = float(m.group(1))
            if len(sp.lines) >= EXCERPT_LINES:
                sp.truncated = True
                self._close_splat()
            else:
                sp.lines.append(text)
                if sp.kind in FRAMED and SEPARATOR_RE.match(body) and \
                        body.startswith('=') and len(sp.lines) > 3:
                    self._close_splat()
                elif sp.kind in STACK_ENDED and body.strip() == '</TASK>':
                    self._close_splat()
        self.prev_kernel = (lineno, text)

    # ---- markers ----------------------------------------------------------
    def harness_line(self, lineno, text):
        m = re.match(r'^@@@ HARNESS (\S+)\s*(.*)$', text)
        if not m:
            return
        ev, rest = m.groups()
        h = self.harness
        if ev == 'START':
            kv = _kv(rest)
            h['start'] = lineno
            h['variant'] = kv.get('variant')
            h['date'] = kv.get('date')
        elif ev == 'QEMU':
            h['qemu_cmdline'] = rest
        elif ev == 'ACCEL':
            # "ACCEL kvm|tcg <why>": the accelerator and why it was chosen
            name, _, why = rest.partition(' ')
            h['accel'] = {'name': name, 'reason': why.strip() or None}
        elif ev == 'READY-SEEN':
            h['ready_elapsed_s'] = _num(_kv(rest).get('elapsed'))
        elif ev == 'SEND':
            h['sent'].append(rest)
            if rest.split()[:1] != ['run-suite'] and rest != 'poweroff -f':
                self.final_sent = lineno
            self.recent_sends = (self.recent_sends + [rest])[-3:]
        elif ev == 'QEMU-EXIT':
            h['qemu_exit_status'] = _num(_kv(rest).get('status'))
        elif ev == 'END':
            h['end_elapsed_s'] = _num(_kv(rest).get('elapsed'))
        elif ev == 'PANIC':
            self.harness_panic = True
        if ev in HARNESS_EVENTS:
            h['events'].append({'event': ev, 'line': lineno,
                                'args': _kv(rest)})
        if ev == 'SUITE-TIMEOUT':
            name = _kv(rest).get('suite')
            for s in self.suites:
                if s.name == name and not s.ended:
                    s.timed_out = True

    def _end_program(self):
        p = self.program
        if p is None:
            return
        if not self._nested(p):
            self._flush_missing(p)
        if p.first_run is not None:
            # the first run's results, judged now that the program ended
            second, bail = p.results, p.bail_out
            for k, v in p.first_run.items():
                setattr(p, k, v)
            if not self._nested(p):
                self._flush_missing(p)
            hard = hard_tests(p.tree)
            p.results = retried(p.results, second, p.retry, hard)
            p.bail_out = p.bail_out or bail
        self.program = None

    def _retry(self, rest):
        """'RETRY SUITE/PROGRAM TEST/GLOB' (scripts/kselftest-suite): a
        result of TEST matching GLOB failed and the program runs TEST once
        more. What came so far is the first run; the RETRY lines come
        together, before the second run's output. Only the running
        program's own, and only one second run."""
        p = self.program
        w = rest.split(None, 1)
        # only kselftest-suite's programs run a test again, and only once
        if p is None or p.suite != 'kselftest' or len(w) < 2 or \
                w[0] != p.id or '/' not in w[1] or \
                (p.first_run is not None and p.numbered):
            return
        if p.first_run is None:
            p.new_run()
        p.retry.append(tuple(w[1].split('/', 1)))

    def _nested(self, p):
        """A program whose results have subtests (kselftest's runner nests
        each program's output under its result, "# " per depth): its
        results become every nested test (scripts/ktap.py), ids
        suite/program/<path>. Leaves are the tests; a parent is a result
        of its own only when it failed and none of its subtests did (a
        program that crashed or exited non-zero after passing tests), or
        when subtests its plan announced never came. False when nothing
        is nested (the results stay as they were)."""
        tree = p.tree = ktap.parse(p.numbered)
        if not any(t.subtests for t in tree.subtests):
            return False
        flat = ktap.flatten(tree, (p.suite, p.name))
        bad = ('fail', 'error')
        results = []
        for i, f in enumerate(flat):
            below = [x for x in flat[i + 1:i + 1 + self._count(flat, i)]]
            lost = False
            if not f['leaf']:
                failing = any(x['status'] in bad for x in below)
                if f['status'] in bad and not failing:
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
            status = f['status']
            reason = f['reason']
            results.append({
                'id': f['id'], 'key': f['key'],
                'suite': p.suite, 'program': p.name,
                'name': '/'.join(f['path'][2:]), 'number': f['number'],
                # the runner's test and the result's own description
                # (names may hold a "/": not split out of 'name')
                '_head': f['path'][2], '_leaf': f['path'][-1],
                'status': status, 'duration_ms': f['duration_ms'],
                'missing': lost, '_ended': p.ended,
                '_failed': self._failed(p),
                'skip_reason': (reason or 'skip') if status == 'skip'
                else None,
                'note': reason if status != 'skip' else None,
                'line': f['line'], 'depth': f['depth'],
                'junit_suite': '%s/%s' % (p.suite, p.name),
                'excerpt': _cap(f['excerpt'].split('\n') if f['excerpt']
                                else [], TEST_EXCERPT_LINES),
                'metrics': {},
            })
        if tree.missing():
            why = '%d of %d results the runner announced never came' % (
                tree.missing(), tree.plan)
            if not p.ended:
                why += ' (program never finished: no TEST-END)'
            results.append({
                'id': '%s/missing-results' % p.id, 'key': None,
                'suite': p.suite, 'program': p.name,
                'name': 'missing-results', 'number': None,
                'status': 'error', 'missing': True, 'duration_ms': None,
                'skip_reason': None, 'note': why, 'line': None,
                '_ended': p.ended, '_failed': self._failed(p),
                'junit_suite': '%s/%s' % (p.suite, p.name),
                'excerpt': _cap(tree.log, TEST_EXCERPT_LINES),
                'metrics': {}, '_splats': p.splats,
            })
        for r in results:
            if r['status'] == 'error' and '_splats' not in r:
                r['_splats'] = p.splats
                r['note'] = r['note'] or 'no result'
        p.results = results
        return True

    @staticmethod
    def _count(flat, i):
        """How many entries after flat[i] are its descendants."""
        n = 0
        d = flat[i]['depth']
        for x in flat[i + 1:]:
            if x['depth'] <= d:
                break
            n += 1
        return n

    def _end_suite(self):
        self._end_program()
        self.suite = None

    def _get_suite(self, name, lineno, uptime):
        if self.suite is not None and self.suite.name == name:
            return self.suite
        self._end_suite()
        s = _Suite(name, lineno, uptime)
        self.suites.append(s)
        self.suite = s
        return s

    def guest_line(self, lineno, text):
        m = re.match(r'^@@@ (\S+)\s*(.*)$', text)
        if not m:
            return
        ev, rest = m.groups()
        kv = _kv(rest)
        up = _num(kv.get('uptime'))
        if ev == 'READY':
            if self.ready is None:
                self.ready = {'uptime': up, 'line': lineno}
                self.release = kv.get('release')
        elif ev == 'SUITE-BEGIN':
            name = rest.split()[0] if rest.split() else '?'
            self._end_suite()
            self._get_suite(name, lineno, up)
        elif ev in ('TEST-BEGIN', 'TEST-END'):
            ident = rest.split()[0] if rest.split() else '?/?'
            suite, _, prog = ident.partition('/')
            if ev == 'TEST-BEGIN':
                self._end_program()
                s = self._get_suite(suite, lineno, up)
                p = _Program(suite, prog or '?', lineno, up)
                s.programs.append(p)
                self.program = p
            else:
                p = self.program
                if p is None or p.id != ident:
                    return
                p.ended = True
                p.end_uptime = up
                p.rc = _num(kv.get('rc'))
                self._end_program()
        elif ev == 'RETRY':
            self._retry(rest)
        elif ev == 'FINAL-DONE':
            self.final_done = lineno
        elif ev == 'CHECK':
            # "CHECK <name> <on|off> <what was seen>" (runner/debug-checks),
            # only as the final command's output: a test cannot vouch
            if self.final_sent is None or self.final_done is not None:
                return
            w = rest.split(None, 2) + ['', '', '']
            self.checks[w[0]] = {'state': w[1], 'detail': w[2].strip(),
                                 'line': lineno}
        elif ev == 'SUITE-END':
            name = rest.split()[0] if rest.split() else '?'
            s = self.suite
            if s is None or s.name != name:
                return
            self._end_program()
            s.ended = True
            s.end_uptime = up
            s.rc = _num(kv.get('rc'))
            self.suite = None

    # ---- KTAP ---------------------------------------------------------------
    def ktap_line(self, lineno, text):
        p = self.program
        p.ktap_lines.append(text)
        p.numbered.append((lineno, text))
        if text.startswith((' ', '\t')):
            # nested subtest output: part of the current test's log
            p.pending.append(text)
            return
        m = KTAP_VERSION_RE.match(text)
        if m:
            if p.version is None:
                p.version = text
            # a program may print several documents (a kselftest target:
            # its own skips, then the kernel's runner): each has its plan
            p.docs.append({'plan': None, 'got': set()})
            return
        m = KTAP_PLAN_RE.match(text)
        if m:
            if not p.docs or p.docs[-1]['plan'] is not None:
                p.docs.append({'plan': None, 'got': set()})
            p.docs[-1]['plan'] = int(m.group(1))
            p.plan = (p.plan or 0) + int(m.group(1))
            return
        if text.startswith('Bail out!'):
            p.bail_out = text
            p.pending.append(text)
            return
        m = KTAP_RESULT_RE.match(text)
        if m:
            self._result(p, m, lineno, text)
            return
        m = RUN_RE.match(text)
        if m:
            p.run_name = m.group(1)
            p.pending = [text]
            p.pending_metrics = {}
            p.pending_duration = None
            return
        m = DURATION_RE.match(text)
        if m:
            p.pending_duration = _num(m.group(1))
            return
        m = METRIC_RE.match(text)
        if m:
            p.pending_metrics[m.group(1)] = _num(m.group(2).strip())
        p.pending.append(text)

    def _result(self, p, m, lineno, text):
        ok, num, desc, directive = m.groups()
        if not p.docs:
            p.docs.append({'plan': None, 'got': set()})
        p.docs[-1]['got'].add(int(num))
        desc = (desc or '').strip() or (p.run_name or 'test-%s' % num)
        status, _, reason = ktap.outcome(ok, directive)
        names = {t['name'] for t in p.results}
        name = desc
        if name in names:
            name = '%s#%s' % (desc, num)
        p.results.append({
            'id': '%s/%s' % (p.id, name),
            'suite': p.suite, 'program': p.name, 'name': name,
            'number': int(num), 'status': status,
            'duration_ms': p.pending_duration,
            'skip_reason': reason if status == 'skip' else None,
            'note': reason if status != 'skip' else None,
            'line': lineno,
            'excerpt': _cap(p.pending + [text], TEST_EXCERPT_LINES),
            'metrics': p.pending_metrics,
        })
        p.metrics.update(p.pending_metrics)
        p.pending = []
        p.pending_metrics = {}
        p.pending_duration = None
        p.run_name = None

    @staticmethod
    def _failed(p):
        return program_failed(p.bail_out, p.ended, p.rc)

    def _flush_missing(self, p):
        """Plan promised more than came: the missing ones are errors."""
        why = 'no result in the console log'
        if not p.ended:
            why += ' (program never finished: no TEST-END)'
        elif p.rc is not None:
            why += ' (program exited rc=%s)' % p.rc
        first = True
        missing = []
        if p.plan is not None:
            for i, d in enumerate(p.docs):
                for n in range(1, (d['plan'] or 0) + 1):
                    if n not in d['got']:
                        missing.append(n if i == 0 else (i + 1, n))
        elif not p.results:
            # a program that printed no result did not test anything, even
            # when it exited 0 (kunit.py: "0 tests run!")
            missing = [None]
            if p.ended and p.rc in OK_RC:
                why = 'no result in the console log: the program exited ' \
                    'rc=%s without printing a KTAP result line' % p.rc
        for n in missing:
            if n is None:
                name = p.run_name or p.name
            elif first and p.run_name:
                name = p.run_name
            elif isinstance(n, tuple):
                name = 'doc%d.test-%d' % n
                n = n[1]
            else:
                name = 'test-%d' % n
            lines = p.pending if first else []
            first = False
            p.results.append({
                'id': '%s/%s' % (p.id, name), 'suite': p.suite,
                'program': p.name, 'name': name, 'number': n,
                'status': 'error', 'missing': True, 'duration_ms': None,
                'skip_reason': None, 'note': why, 'line': None,
                '_ended': p.ended, '_failed': self._failed(p),
                'excerpt': _cap(lines, TEST_EXCERPT_LINES),
                'metrics': {},
                '_splats': p.splats,
            })
        # every result came and all passed, yet the program failed
        if not missing and p.ended and p.rc not in OK_RC and p.rc is not None \
                and not any(t['status'] == 'fail' for t in p.results):
            p.results.append({
                'id': '%s/exit-status' % p.id, 'suite': p.suite,
                'program': p.name, 'name': 'exit-status', 'number': None,
                'status': 'fail', 'duration_ms': None, 'skip_reason': None,
                'note': 'program exited rc=%s' % p.rc, 'line': None,
                'excerpt': _cap(p.pending, TEST_EXCERPT_LINES),
                'metrics': {},
            })

    def user_line(self, lineno, text):
        if text.startswith('@@@ HARNESS'):
            self.harness_line(lineno, text)
            return
        if text.startswith('@@@ '):
            self.guest_line(lineno, text)
            return
        if self.program is None and KTAP_VERSION_RE.match(text):
            # KTAP without markers around it: an implicit program
            self.implicit_count += 1
            s = self._get_suite('ktap', lineno, None)
            p = _Program('ktap', 'program%d' % self.implicit_count,
                         lineno, None, implicit=True)
            s.programs.append(p)
            self.program = p
        elif self.program is not None and self.program.implicit and \
                KTAP_VERSION_RE.match(text) and self.program.version:
            self._end_program()
            return self.user_line(lineno, text)
        if self.program is not None:
            if KTAP_SHAPED_RE.match(text):
                self.ktap_line(lineno, text)
                return
            self.program.ktap_lines.append(text)
            self.program.numbered.append((lineno, text))
            self.program.pending.append(text)
        if KTAP_SHAPED_RE.match(text) or self._is_echo(text):
            return
        # With PRINTK_TIME every kernel line carries a timestamp, so a line
        # without one is user space output (a program may print "Kernel
        # panic" itself). Only a log without any timestamps (PRINTK_TIME
        # off) has its bare lines scanned as kernel text.
        if not self.timestamped and text.strip():
            self.scan(lineno, text)

    def _is_echo(self, text):
        t = text.rstrip()
        return any(c and t.endswith(c.rstrip()) for c in self.recent_sends)

    def fragment_line(self, lineno, text):
        """The cut-off last line of a truncated log: excerpt only."""
        if self.program is not None:
            self.program.pending.append(text)
            self.program.ktap_lines.append(text)
            self.program.numbered.append((lineno, text))

    def kernel_line(self, lineno, text):
        if self.program is not None:
            self.program.pending.append(text)
        self.scan(lineno, text)

    def finish(self):
        self._close_splat()
        self._end_suite()


def parse(text, patterns=None, variant=None, log_path=None,
          harness_status=None, plan=None):
    """Classify one console log. Returns the results.json dict.
    harness_status: the harness's exit status, when known; a failure the
    log does not explain is still class 2, recorded with its reason.
    plan: what the boot was planned to run (scripts/boot-plan --plan-out):
    every planned program must have run and every planned debug checker
    must have stayed on, or the run is class 2."""
    if patterns is None:
        patterns = load_patterns()
    ps = _Parser(patterns)
    recs = split_records(text)
    # A log cut off mid-line ends without a newline: its last line is a
    # fragment ("ok 2 global.cpu") that must not count as a result/marker.
    partial = bool(text) and not text.endswith('\n') and bool(recs) and \
        recs[-1][1] == 'u'
    ps.timestamped = sum(1 for r in recs if r[1] == 'k') >= 3
    for i, (lineno, kind, t) in enumerate(recs):
        if not t.startswith('@@@ HARNESS') and t.strip():
            ps.last_line = (lineno, t)
        if kind == 'k':
            ps.kernel_line(lineno, t)
        elif partial and i == len(recs) - 1:
            ps.fragment_line(lineno, t)
        else:
            ps.user_line(lineno, t)
    ps.finish()
    res = _assemble(ps, variant, log_path, plan)
    if harness_status not in (None, 0) and res['exit_class'] < 2:
        res['reasons'].insert(0, {
            'class': 2, 'reason': 'the harness exited %d, and the console '
            'log does not say why' % harness_status})
        res['exit_class'] = 2
        res['exit_class_name'] = CLASS_NAMES[2]
    return res


def _assemble(ps, variant, log_path, plan=None):
    h = ps.harness
    problems = [p.as_dict() for p in ps.problems]
    if ps.harness_panic and not any(p['kind'] == 'panic' for p in problems):
        ev = next(e for e in h['events'] if e['event'] == 'PANIC')
        problems.append({'kind': 'panic', 'kinds': ['panic'],
                         'first_line': '@@@ HARNESS PANIC (panic text not '
                                       'in the log)',
                         'line': ev['line'], 'uptime': None, 'during': None,
                         'excerpt': '', 'excerpt_truncated': False})
        ps.problems_total += 1

    tests = []
    suites = []
    for s in ps.suites:
        progs = []
        for p in s.programs:
            for t in p.results:
                # kinds are final only now: a report can be renamed by a
                # later line (cut here -> kernel BUG at)
                sps = t.pop('_splats', None)
                if sps is not None:
                    kinds = list(dict.fromkeys(x.kind for x in sps))
                    t['explained_by'] = kinds
                    if kinds:
                        t['note'] += '; kernel problem while it ran: ' + \
                            ', '.join(kinds)
            tests.extend(p.results)
            dur = None
            if isinstance(p.begin_uptime, (int, float)) and \
                    isinstance(p.end_uptime, (int, float)):
                dur = round(p.end_uptime - p.begin_uptime, 3)
            progs.append({'name': p.name, 'rc': p.rc, 'complete': p.ended,
                          'plan': p.plan, 'duration_s': dur,
                          'results': len([t for t in p.results
                                          if not t.get('missing')]),
                          'bail_out': p.bail_out, 'metrics': p.metrics,
                          'line': p.lineno, 'ktap': p.ktap_lines})
        dur = None
        if isinstance(s.begin_uptime, (int, float)) and \
                isinstance(s.end_uptime, (int, float)):
            dur = round(s.end_uptime - s.begin_uptime, 3)
        suites.append({'name': s.name, 'rc': s.rc, 'complete': s.ended,
                       'timed_out': s.timed_out, 'duration_s': dur,
                       'line': s.lineno, 'programs': progs})

    if ps.last_line:
        where = 'the console stopped at line %d: %s' % (
            ps.last_line[0], ps.last_line[1].strip()[:120])
    else:
        where = 'the console printed nothing'
    reasons = []   # [class, text]
    if plan is not None:
        _check_plan(plan, ps, suites, tests, reasons, where)

    # the same suite run twice in one boot: keep ids unique
    seen = {}
    for t in tests:
        n = seen.get(t['id'], 0) + 1
        seen[t['id']] = n
        if n > 1:
            t['id'] = '%s#%d' % (t['id'], n)
    mark_benchmarks(tests, plan)

    counts = {k: 0 for k in ('pass', 'fail', 'skip', 'error', 'bench')}
    for t in tests:
        counts[t['status']] += 1
    counts['total'] = len(tests)
    # passed only when run again (a subset of pass)
    counts['flaky'] = sum(1 for t in tests
                          if t['status'] == 'pass' and t.get('flaky'))

    for p in problems:
        reasons.append([3, 'kernel %s: %s' % (p['kind'], p['first_line'])])
    events = [e['event'] for e in h['events']]
    for e in h['events']:
        if e['event'] == 'BOOT-TIMEOUT':
            reasons.append([2, 'boot timeout after %ss' %
                            e['args'].get('after', '?')])
        elif e['event'] == 'SUITE-TIMEOUT':
            reasons.append([2, 'suite %s timed out after %ss' % (
                e['args'].get('suite', '?'), e['args'].get('after', '?'))])
        elif e['event'] == 'SILENCE':
            reasons.append([2, 'console silent for %ss' %
                            e['args'].get('after', '?')])
        elif e['event'] == 'FINAL-TIMEOUT':
            reasons.append([2, 'the final command timed out after %ss' %
                            e['args'].get('after', '?')])
        elif e['event'] == 'POWEROFF-TIMEOUT':
            reasons.append([2, 'QEMU did not end within %ss of poweroff -f' %
                            e['args'].get('after', '?')])
        elif e['event'] == 'INTERRUPTED':
            reasons.append([2, 'the harness was interrupted (%s) and killed '
                               'QEMU' % e['args'].get('signal', 'signal')])
    if ps.ready is None:
        reasons.append([2, 'no READY marker: the boot did not complete'])
    st = h['qemu_exit_status']
    if st not in (None, 0) and \
            not any(p['kind'] == 'panic' for p in problems) and \
            not HARNESS_STOPS & set(events):
        reasons.append([2, 'QEMU exited with status %s without a kernel '
                           'panic' % st])
    if h['start'] is not None and 'END' not in events and \
            'QEMU-EXIT' not in events:
        reasons.append([2, 'log truncated: no @@@ HARNESS QEMU-EXIT/END'])
    # Everything the harness sent must have run: a guest that resets or
    # dies quietly (QEMU exits 0 under -no-reboot) ends the log early,
    # and what never began has no result to fail.
    # (a final command that never ended leaves no poweroff either: below)
    begun = {s['name'] for s in suites}
    for cmd in h['sent']:
        words = cmd.split()
        if len(words) > 1 and words[0] == 'run-suite' and \
                words[1] not in begun:
            reasons.append([2, 'suite %s was sent but never began; %s'
                            % (words[1], where)])
    stopped = HARNESS_STOPS & set(events) or \
        any(p['kind'] == 'panic' for p in problems)
    if h['start'] is not None and ps.ready is not None and not stopped \
            and 'poweroff -f' not in h['sent']:
        reasons.append([2, 'the run ended before its last step (the '
                           'harness never sent poweroff); %s' % where])
    for t in tests:
        t.pop('_head', None)
        t.pop('_leaf', None)
        ended = t.pop('_ended', False)
        failed = t.pop('_failed', False)
        if t['status'] == 'fail':
            reasons.append([1, 'test %s failed' % t['id']])
        elif t['status'] == 'error' and t.get('missing'):
            # planned, and no outcome. A program that said it failed
            # (crashed, killed, bailed out, exited non-zero) lost the rest
            # to that failure: class 1, as any failing test (bisect-run
            # must still see it as bad). Otherwise nothing explains it: a
            # program that never began or ended, that exited 0 short of
            # its plan, or could not run at all is class 2, with where
            # the console stopped unless its program ended.
            reasons.append([1 if failed else 2, 'test %s: %s%s' % (
                t['id'], t['note'],
                '' if ended else '; ' + where)])
        elif t['status'] == 'error':
            reasons.append([1, 'test %s: %s' % (t['id'], t['note'])])
    for s in suites:
        if not s['complete'] and not s['timed_out'] and s['name'] != 'ktap':
            reasons.append([2, 'suite %s incomplete: no SUITE-END' %
                            s['name']])
        elif s['complete'] and s['rc'] not in (0, None):
            reasons.append([1, 'suite %s ended rc=%s' % (s['name'], s['rc'])])
        for p in s['programs']:
            if p['complete'] and p['rc'] not in OK_RC and \
                    p['rc'] is not None:
                reasons.append([1, 'program %s/%s exited rc=%s' % (
                    s['name'], p['name'], p['rc'])])
    cls = max([r[0] for r in reasons], default=0)
    reasons.sort(key=lambda r: -r[0])

    ready_up = ps.ready['uptime'] if ps.ready else None
    return {
        'schema': 1,
        'log': log_path,
        'variant': variant or h['variant'] or 'unknown',
        'kernel_release': ps.release or ps.linux_version_release,
        'kernel_cmdline': ps.cmdline,
        'boot': {
            'ready': ps.ready is not None,
            'ready_uptime_s': ready_up,
            'ready_elapsed_s': h.get('ready_elapsed_s'),
            'ready_line': ps.ready['line'] if ps.ready else None,
        },
        'duration_s': h['end_elapsed_s'],
        'accel': h['accel'],
        'exit_class': cls,
        'exit_class_name': CLASS_NAMES[cls],
        'reasons': [{'class': c, 'reason': r} for c, r in reasons],
        'kernel_problems': problems,
        'kernel_problems_total': ps.problems_total,
        'counts': counts,
        'plan': None if plan is None else {
            'tests': plan.get('tests', []),
            'suites': plan.get('suites', []),
            'checkers': plan.get('checkers', []),
            'unplanned': ps.unplanned},
        'checks': ps.checks,
        'tests': tests,
        'suites': suites,
        'harness': {k: v for k, v in h.items() if k != 'start'},
    }


def mark_benchmarks(tests, plan):
    """A test the plan's suites declare a benchmark (suite.conf's
    `benchmarks`, test-id globs) that passed is 'bench': it ran to the
    end and measured, but checked nothing, so it is no pass. A benchmark
    that failed, skipped or has no result stays that, as any test. Without
    a plan nothing is declared."""
    globs = [g for sp in (plan or {}).get('suites', [])
             for g in sp.get('benchmarks', [])]
    for t in tests:
        if t['status'] == 'pass' and any(
                testsel.matches(g, t['suite'], t['program'],
                                testsel.test_part(t['name']))
                for g in globs):
            t['status'] = 'bench'


def _check_plan(plan, ps, suites, tests, reasons, where):
    """Hold the run against its plan: a planned program that never began
    becomes a missing result (an error, class 2, in tests[] like any
    other); a program that ran but was not planned, and a debug checker
    that is off or unreported, are class 2 reasons."""
    ps.unplanned = []
    ran = {s['name']: s for s in suites}
    for sp in plan.get('suites', []):
        s = ran.get(sp['name'])
        seen = [p['name'] for p in s['programs']] if s else []
        if s is None and not any(c.split()[:2] == ['run-suite', sp['name']]
                                 for c in ps.harness['sent']):
            reasons.append([2, 'suite %s was planned but never sent; %s'
                            % (sp['name'], where)])
        for name in sp['programs']:
            if name in seen:
                continue
            ident = '%s/%s' % (sp['name'], name)
            why = 'planned but never began' + (
                ' (its suite never began)' if s is None else
                '' if s['complete'] else ' (the suite did not end)')
            tests.append({
                'id': ident, 'suite': sp['name'], 'program': name,
                'name': name, 'number': None, 'status': 'error',
                'missing': True, 'duration_ms': None, 'skip_reason': None,
                'note': why, 'line': None, 'excerpt': '', 'metrics': {},
                'explained_by': []})
        for prog in (s['programs'] if s else []):
            want = sp.get('tests', {}).get(prog['name'])
            if want is not None:
                _check_tests(sp['name'], prog, want, tests, ps)
        for name in seen:
            if name not in sp['programs'] + sp.get('optional', []):
                ps.unplanned.append('%s/%s' % (sp['name'], name))
                reasons.append([2, 'program %s/%s ran but was not planned '
                                '(the initramfs and variant.json disagree)'
                                % (sp['name'], name)])
    # every TESTS glob must have reached something that ran: a glob into a
    # program (its tests by name) that matched none of them runs nothing
    # there, and a rerun of a test that was renamed must not pass
    # (a program that began and then failed - crashed, killed - reached
    # the glob: its missing results are that failure, class 1)
    def reached(g, t):
        if t.get('missing'):
            return t.get('_failed') and testsel.matches(
                g, t['suite'], t['program']) is not False
        return testsel.matches(g, t['suite'], t['program'],
                               testsel.test_part(t['name']))

    for g in plan.get('tests', []):
        if not any(reached(g, t) for t in tests):
            reasons.append([2, "TESTS glob '%s' matched no test that ran"
                            % g])
    for name in plan.get('checkers', []):
        c = ps.checks.get(name)
        if name == 'kasan':
            # no runtime switch: initialized at boot, or never. The
            # banner is an info line: on the console, or in debug-checks'
            # dmesg when the console's log level hid it
            if ps.kasan_banner is None and (c is None or c['state'] != 'on'):
                reasons.append([2, 'debug checker kasan is off: neither the '
                                'console nor debug-checks saw '
                                '"KernelAddressSanitizer initialized"'])
            continue
        finals = [x for x in ps.harness['sent'] if x.split()[:1] !=
                  ['run-suite'] and x != 'poweroff -f']
        if c is None and ps.final_done is not None:
            reasons.append([2, 'debug checker %s was not reported: the final '
                            "command '%s' ended (line %d) without a @@@ "
                            'CHECK %s line' % (name, ' '.join(finals[-1:]),
                                               ps.final_done, name)])
        elif c is None:
            reasons.append([2, 'debug checker %s was not reported (the final '
                            'command never ended); %s' % (name, where)])
        elif c['state'] != 'on':
            reasons.append([2, 'debug checker %s is off: %s (line %d)' % (
                name, c['detail'] or c['state'], c['line'])])


def hard_tests(tree):
    """The kselftest tests (runner-level names) of a first run's nested
    parse (scripts/ktap.py) whose outcome a second run must not replace:
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


def program_failed(bail_out, ended, rc):
    """The program said it failed: it ended with a failing exit status
    (not 126/127: it could not run at all), or bailed out. Its missing
    results are then part of that test failure (class 1); otherwise they
    are unaccounted for (class 2)."""
    return bail_out is not None or (
        ended and rc is not None and rc not in OK_RC and
        rc not in (126, 127))


def _check_tests(suite, prog, want, tests, ps):
    """Hold one program's results against the tests it listed at build
    time (WANT: harness ids, or a kselftest target's test names, whose
    results read <name>, <name>/<nested> or 'selftests: T: <name>'). A
    planned test without a result becomes a missing one, named, unless
    the program's KTAP plan already found results missing (those are
    counted once, as test-N); a result no planned test explains is listed
    as unplanned."""
    mine = [t for t in tests if t['suite'] == suite and
            t['program'] == prog['name']]
    names = [t['name'] for t in mine if not t.get('missing')]

    def covers(w, n):
        return n == w or n.startswith(w + '/') or \
            n == 'selftests: %s: %s' % (prog['name'], w)

    for n in names:
        if not any(covers(w, n) for w in want) and \
                n not in ('exit-status', 'missing-results'):
            ps.unplanned.append('%s/%s/%s' % (suite, prog['name'], n))
    if any(t.get('missing') for t in mine):
        return
    failed = program_failed(prog['bail_out'], prog['complete'], prog['rc'])
    for w in want:
        if any(covers(w, n) for n in names):
            continue
        tests.append({
            'id': '%s/%s/%s' % (suite, prog['name'], w), 'suite': suite,
            'program': prog['name'], 'name': w, 'number': None,
            'status': 'error', 'missing': True, 'duration_ms': None,
            'skip_reason': None, 'note': 'planned (the program lists it) '
            'but no result in the console log', 'line': None,
            'excerpt': '', 'metrics': {}, 'explained_by': [],
            '_ended': prog['complete'], '_failed': failed})


def failure_result(variant, reason, log_path=None):
    """The results.json dict of a run that never got to boot (its kernel
    or initramfs did not build, its artifacts are missing): class 2 with
    REASON, no tests, and LOG_PATH the log that explains it, if any."""
    res = parse('', patterns=[], variant=variant, log_path=log_path)
    res['exit_class'] = 2
    res['exit_class_name'] = CLASS_NAMES[2]
    res['reasons'] = [{'class': 2, 'reason': reason}]
    res['booted'] = False
    return res


def summary_line(res):
    """One line for people: variant, class, boot time, counts, first cause."""
    c = res['counts']
    boot = res['boot']['ready_uptime_s']
    parts = ['%s: class %d (%s)' % (res['variant'], res['exit_class'],
                                    res['exit_class_name']),
             'boot %ss' % boot if boot is not None else
             'not booted' if res.get('booted') is False else 'no READY',
             '%d passed%s, %d failed, %d skipped, %d errors%s' % (
                 c['pass'], ' (%d flaky)' % c['flaky'] if c.get('flaky')
                 else '', c['fail'], c['skip'], c['error'],
                 ', %d benchmark%s ran' % (c['bench'], '' if c['bench'] == 1
                                           else 's')
                 if c.get('bench') else '')]
    kinds = list(dict.fromkeys(p['kind'] for p in res['kernel_problems']))
    parts.append('kernel problems: %d%s' % (
        res['kernel_problems_total'],
        ' (%s)' % ', '.join(kinds) if kinds else ''))
    if res['reasons']:
        parts.append(res['reasons'][0]['reason'])
    return ' - '.join(parts)


# ---- writers ------------------------------------------------------------
_XML_BAD = re.compile('[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd'
                      '\U00010000-\U0010ffff]')


def _x(s):
    return _XML_BAD.sub('?', '' if s is None else str(s))


def _secs(ms):
    return '%.3f' % (ms / 1000.0) if isinstance(ms, (int, float)) else '0'


def junit_tree(res):
    """JUnit XML: one <testsuite> per suite, kernel problems and harness
    problems as failing testcases kernel/<kind> and harness/<what>."""
    root = ET.Element('testsuites', name=_x(res['variant']))
    tot = {'tests': 0, 'failures': 0, 'errors': 0, 'skipped': 0}

    def add_suite(name, cases, time=None):
        ts = ET.SubElement(root, 'testsuite', name=_x(name))
        n = {'tests': 0, 'failures': 0, 'errors': 0, 'skipped': 0}
        for case in cases:
            classname, cname, status, msg, text, t = case[:6]
            tc = ET.SubElement(ts, 'testcase', classname=_x(classname),
                               name=_x(cname), time=t)
            if status == 'bench':
                # JUnit has no outcome for a measurement: a testcase that
                # did not fail, named a benchmark (and not counted as
                # passed in our own counts); its output holds the metrics
                props = ET.SubElement(tc, 'properties')
                ET.SubElement(props, 'property', name='kind',
                              value='benchmark')
            # a first run's failure before a second run (Maven Surefire's
            # rerun elements: flakyFailure when the rerun passed)
            for f in (case[6] if len(case) > 6 else None) or []:
                e = ET.SubElement(tc, 'flakyFailure'
                                  if status in ('pass', 'bench')
                                  else 'rerunFailure',
                                  message=_x('%s: %s' % (f['name'],
                                                         f['note'] or
                                                         f['status'])))
                e.text = _x(f['excerpt'])
            n['tests'] += 1
            if status == 'fail':
                n['failures'] += 1
                e = ET.SubElement(tc, 'failure', message=_x(msg))
                e.text = _x(text)
            elif status == 'error':
                n['errors'] += 1
                e = ET.SubElement(tc, 'error', message=_x(msg))
                e.text = _x(text)
            elif status == 'skip':
                n['skipped'] += 1
                ET.SubElement(tc, 'skipped', message=_x(msg))
            if status in ('pass', 'bench') and text:
                so = ET.SubElement(tc, 'system-out')
                so.text = _x(text)
        for k, v in n.items():
            ts.set(k, str(v))
            tot[k] += v
        ts.set('time', '%.3f' % time if isinstance(time, (int, float))
               else '0')

    # kernel problems first: the most important news of a boot
    by_kind = {}
    for p in res['kernel_problems']:
        by_kind.setdefault(p['kind'], []).append(p)
    if by_kind:
        cases = []
        for kind, ps in by_kind.items():
            text = '\n\n'.join('log line %s, during %s:\n%s' % (
                p['line'], p['during'], p['excerpt']) for p in ps)
            cases.append(('kernel', kind, 'fail', ps[0]['first_line'], text,
                          '0'))
        add_suite('kernel', cases)

    cases = [('harness', 'boot', 'pass' if res['boot']['ready'] else 'error',
              'no READY marker', '' if res['boot']['ready'] else
              'the guest never printed @@@ READY',
              '%.3f' % res['boot']['ready_uptime_s']
              if res['boot']['ready_uptime_s'] is not None else '0')]
    for r in res['reasons']:
        # (a missing test is a testcase of its own suite already)
        if r['class'] == 2 and not r['reason'].startswith(('no READY',
                                                            'test ')):
            cases.append(('harness', r['reason'].split(':')[0], 'error',
                          r['reason'], r['reason'], '0'))
    add_suite('harness', cases)

    by_suite = {}
    for t in res['tests']:
        # nested kselftest results: a testsuite per target
        by_suite.setdefault(t.get('junit_suite') or t['suite'], []).append(t)
    durations = {s['name']: s['duration_s'] for s in res['suites']}
    for name, ts in by_suite.items():
        cases = []
        for t in ts:
            msg = t.get('skip_reason') or t.get('note') or \
                (t['excerpt'].splitlines() or [t['status']])[-1]
            cases.append(('%s.%s' % (t['suite'], t['program']), t['name'],
                          t['status'], msg, t['excerpt'],
                          _secs(t['duration_ms']), t.get('flaky')))
        add_suite(name, cases, durations.get(name, durations.get(
            name.split('/')[0])))
    for k, v in tot.items():
        root.set(k, str(v))
    if isinstance(res['duration_s'], (int, float)):
        root.set('time', '%.3f' % res['duration_s'])
    return ET.ElementTree(root)


def suite_ktap(suite, benchmarks=None):
    """A suite as one KTAP document: each program is a subtest holding its
    own output (markers and interleaved kernel lines stripped).
    BENCHMARKS: program name -> the names of its tests that ran as
    benchmarks, said on a diagnostic line (KTAP has no directive for a
    measurement: their own lines still read "ok")."""
    out = ['KTAP version 1', '# suite: %s' % suite['name'],
           '1..%d' % len(suite['programs'])]
    for i, p in enumerate(suite['programs'], 1):
        out.append('# program: %s/%s rc=%s' % (suite['name'], p['name'],
                                              p['rc']))
        out.extend('    ' + ln if ln else '' for ln in p['ktap'])
        names = (benchmarks or {}).get(p['name'])
        if names:
            out.append('# benchmarks (ran; not counted as passed): %s'
                       % ', '.join(names))
        if not p['complete']:
            res = 'not ok %d %s # program did not finish' % (i, p['name'])
        elif p['rc'] in (0,) and (p['plan'] is None
                                  or p['results'] >= p['plan']):
            res = 'ok %d %s' % (i, p['name'])
        else:
            res = 'not ok %d %s' % (i, p['name'])
        out.append(res)
    return '\n'.join(out) + '\n'


def safe_name(s):
    return re.sub(r'[^\w.-]', '_', s) or '_'


def write_results(res, outdir):
    """Write results.json, junit.xml and <suite>.ktap into outdir."""
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, 'results.json'), 'w',
              encoding='utf-8') as f:
        json.dump(res, f, indent=2, sort_keys=False)
        f.write('\n')
    tree = junit_tree(res)
    ET.indent(tree)
    tree.write(os.path.join(outdir, 'junit.xml'), encoding='utf-8',
               xml_declaration=True)
    # a suite run more than once in a boot: one file, all its programs
    merged = {}
    for s in res['suites']:
        m = merged.setdefault(s['name'], {'name': s['name'], 'programs': []})
        m['programs'].extend(s['programs'])
    bench = {}
    for t in res['tests']:
        if t['status'] == 'bench':
            bench.setdefault(t['suite'], {}).setdefault(
                t['program'], []).append(t['name'])
    for s in merged.values():
        with open(os.path.join(outdir, safe_name(s['name']) + '.ktap'), 'w',
                  encoding='utf-8') as f:
            f.write(suite_ktap(s, bench.get(s['name'])))


def read_plan(path):
    """A plan written by scripts/boot-plan --plan-out."""
    with open(path, encoding='utf-8') as f:
        try:
            plan = json.load(f)
        except ValueError as e:
            raise OSError('%s is not valid JSON: %s' % (path, e)) from None
    if not isinstance(plan, dict) or \
            plan.get('format') != 'kernel-pipeline-plan/1':
        raise OSError('%s is not a plan (kernel-pipeline-plan/1)' % path)
    return plan


def read_log(path):
    with open(path, 'rb') as f:
        return f.read().decode('utf-8', 'replace')
