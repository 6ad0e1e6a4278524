"""The marker state machine: a console log's records, in order, ->
the harness's events, the boot's facts, and the suites and programs that
ran (expect-scripts/PROTOCOL.md), each program with its KTAP output and
the kernel reports made while it ran.

Python 3.11 standard library only (Debian 12).
"""

import re

from .. import ktap
from . import programs, reports, verdict
from .console import split_records

KV_RE = re.compile(r'([\w.-]+)=(\S*)')

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


# The harness lines (PROTOCOL.md) kept as events in results.json.
HARNESS_EVENTS = ('BOOT-TIMEOUT', 'SUITE-TIMEOUT', 'SILENCE', 'PANIC',
                  'FINAL-TIMEOUT', 'POWEROFF-TIMEOUT', 'INTERRUPTED',
                  'QEMU-EXIT', 'SUITE-DONE', 'END', 'READY-SEEN')


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
        # their nested parse (pipeline/ktap.py), once made
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


class Boot:
    """What one console log says, fed record by record."""

    def __init__(self, patterns):
        self.reports = reports.Reports(patterns)
        self.harness = {'start': None, 'variant': None, 'date': None,
                        'accel': None,
                        'qemu_cmdline': None, 'qemu_exit_status': None,
                        'end_elapsed_s': None, 'events': [], 'sent': []}
        self.ready = None
        self.release = None
        self.suites = []
        self.suite = None
        self.program = None
        self.recent_sends = []
        self.implicit_count = 0
        self.harness_panic = False
        self.timestamped = False
        self.last_line = None       # (lineno, text) the guest's last line
        self.checks = {}            # @@@ CHECK: name -> state, detail, line
        self.unplanned = []         # suite/program that ran, not planned
        self.final_done = None      # line of @@@ FINAL-DONE
        self.final_sent = None      # line of the SEND of the final command

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

    def scan(self, lineno, text):
        """Feed one line of kernel text to the report collector."""
        sp = self.reports.scan(lineno, text, self._during())
        if sp is not None and self.program is not None:
            self.program.splats.append(sp)

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
            hard = programs.hard_tests(p.tree)
            p.results = programs.retried(p.results, second, p.retry, hard)
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
        results become every nested test (pipeline/ktap.py), ids
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
                'excerpt': programs.cap(f['excerpt'].split('\n')
                                        if f['excerpt'] else []),
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
                'excerpt': programs.cap(tree.log),
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
            'excerpt': programs.cap(p.pending + [text]),
            'metrics': p.pending_metrics,
        })
        p.metrics.update(p.pending_metrics)
        p.pending = []
        p.pending_metrics = {}
        p.pending_duration = None
        p.run_name = None

    @staticmethod
    def _failed(p):
        return verdict.program_failed(p.bail_out, p.ended, p.rc)

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
            if p.ended and p.rc in verdict.OK_RC:
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
                'excerpt': programs.cap(lines),
                'metrics': {},
                '_splats': p.splats,
            })
        # every result came and all passed, yet the program failed
        if not missing and p.ended and p.rc not in verdict.OK_RC and \
                p.rc is not None and \
                not any(t['status'] == 'fail' for t in p.results):
            p.results.append({
                'id': '%s/exit-status' % p.id, 'suite': p.suite,
                'program': p.name, 'name': 'exit-status', 'number': None,
                'status': 'fail', 'duration_ms': None, 'skip_reason': None,
                'note': 'program exited rc=%s' % p.rc, 'line': None,
                'excerpt': programs.cap(p.pending),
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
        self.reports.close()
        self._end_suite()


def read(text, patterns):
    """Feed the records of one console log's TEXT to the state machine;
    return it, finished."""
    ps = Boot(patterns)
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
    return ps
