"""The marker state machine: a console log's records, in order, ->
the harness's events, the boot's facts, and the suites and programs that
ran (expect-scripts/PROTOCOL.md), each program with its KTAP output and
the kernel reports made while it ran. A program's output lines go to its
KTAP parser as they come (programs.py), so that a kernel report is
attributed to the test that was running.

Python 3.11 standard library only (Debian 12).
"""

import re

from .. import ktap, protocol
from . import programs, reports
from .console import split_records
from .verdict import MACHINE

KV_RE = re.compile(r'([\w.-]+)=(\S*)')
# User output that looks like KTAP: never scanned as kernel text in a log
# without printk timestamps.
KTAP_SHAPED_RE = re.compile(
    r'^\s*(ok\s+\d+|not ok\s+\d+|#|K?TAP version|\d+\.\.\d+|Bail out!)')


# The harness lines (PROTOCOL.md) kept as events in results.json.
HARNESS_EVENTS = protocol.EVENTS


def _kv(s):
    return dict(KV_RE.findall(s))


class _Suite(programs.Span):
    def __init__(self, name, lineno, uptime):
        super().__init__(name, lineno, uptime)
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
        self.stray = []             # (line, text): KTAP outside a program

    # ---- kernel problems ------------------------------------------------
    def _during(self):
        p = self.program
        if p is None:
            if self.suite is not None:
                return self.suite.name
            return 'boot' if self.ready is None else 'shell'
        if p.running():
            return '%s/%s' % (p.id, p.running())
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
            h['ready_elapsed_s'] = ktap.num(_kv(rest).get('elapsed'))
        elif ev == 'SEND':
            h['sent'].append(rest)
            if rest.split()[:1] != ['run-suite'] and rest != 'poweroff -f':
                self.final_sent = lineno
            self.recent_sends = (self.recent_sends + [rest])[-3:]
        elif ev == 'QEMU-EXIT':
            h['qemu_exit_status'] = ktap.num(_kv(rest).get('status'))
        elif ev == 'END':
            h['end_elapsed_s'] = ktap.num(_kv(rest).get('elapsed'))
        elif ev == 'PANIC':
            self.harness_panic = True
        elif ev == 'NO-KERNEL-LOG':
            h['no_kernel_log'] = rest.strip() or 'unknown'
        if ev in HARNESS_EVENTS:
            h['events'].append({'event': ev, 'line': lineno,
                                'args': _kv(rest)})
        if ev == 'SUITE-TIMEOUT':
            name = _kv(rest).get('suite')
            for s in self.suites:
                if s.name == name and not s.ended:
                    s.timed_out = True

    def _end_program(self):
        if self.program is not None:
            self.program.finish()
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
                w[0] != p.id or '/' not in w[1]:
            return
        p.retry_line(*w[1].split('/', 1))

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
        up = ktap.num(kv.get('uptime'))
        if ev == 'READY':
            if (self.harness['accel'] or {}).get('name') != MACHINE:
                # user space runs: what the kernel printed at boot is
                # over (on a machine the kernel log's reader copies the
                # boot's messages later: the kernel's own "Run ... as
                # init process" says it there)
                self.reports.user_space = True
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
                p = programs.Program(suite, prog or '?', lineno, up)
                s.programs.append(p)
                self.program = p
            else:
                p = self.program
                if p is None or p.id != ident:
                    return
                p.end(up, kv)
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
            s.end(up, kv)
            self.suite = None

    def user_line(self, lineno, text):
        if text.startswith('@@@ HARNESS'):
            self.harness_line(lineno, text)
            return
        if text.startswith('@@@ '):
            self.guest_line(lineno, text)
            return
        if self.program is None and (self.harness['start'] is not None or
                                     self.ready is not None) and \
                ktap.structural(text):
            # KTAP between the markers of a run, outside any program
            # (between suites, before READY): no program owns it, so
            # nothing counts it; the verdict names it
            self.stray.append((lineno, text))
            return
        if self.program is None and ktap.VERSION_RE.match(text):
            # KTAP without markers around it: an implicit program
            self.implicit_count += 1
            s = self._get_suite('ktap', lineno, None)
            p = programs.Program('ktap', 'program%d' % self.implicit_count,
                                 lineno, None, implicit=True)
            s.programs.append(p)
            self.program = p
        elif self.program is not None and self.program.implicit and \
                ktap.VERSION_RE.match(text) and self.program.version:
            self._end_program()
            return self.user_line(lineno, text)
        if self.program is not None:
            self.program.feed(lineno, text)
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
        """The cut-off last line of a truncated log: excerpt only, never a
        result or a marker."""
        if self.program is not None:
            self.program.note(lineno, text, own=True)

    def kernel_line(self, lineno, text):
        if self.program is not None:
            self.program.note(lineno, text)
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
