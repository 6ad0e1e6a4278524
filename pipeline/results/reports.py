"""Kernel reports: which console lines start, continue and end a report
(a panic, an oops, a KASAN or lockdep report, a WARNING, ...), collected
with their excerpts.

The patterns live in failure-patterns.txt next to this file, shared with
the harness (expect-scripts/boot-and-test.exp reads it for its live
detection), so that the live detection and this offline classifier agree.

Python 3.11 standard library only (Debian 12).
"""

import os
import re

from .console import TS_RE, strip_ts

PATTERNS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             'failure-patterns.txt')

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
# A report is printed in one burst; a pause this long in printk time means
# it ended (some, like lockdep's "lock held when returning to user space",
# print no stack and no end line).
REPORT_PAUSE_S = 2.0
MAX_PROBLEMS = 50       # repeated stall reports would otherwise flood JSON

SEPARATOR_RE = re.compile(r'^(=|-){8,}$')

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


class Report:
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


# the kernel's last line before it starts user space (init/main.c)
RUN_INIT_RE = re.compile(r'^Run \S+ as init process')


class Reports:
    """The report collector: every line of kernel text, in order, and the
    reports it makes; also the boot facts only kernel text gives (its
    command line, its release, the KASAN banner)."""

    def __init__(self, patterns):
        self.patterns = patterns
        self.problems = []
        self.total = 0
        self.splat = None
        self.kidx = 0
        self.prev_kernel = None     # (lineno, text) of the last kernel line
        self.linux_version_release = None
        self.cmdline = None
        # line of "KernelAddressSanitizer initialized", printed by the
        # kernel: before user space began (no /dev/kmsg write can come
        # earlier), the kernel's "Run /init as init process" or the guest's
        # READY (userspace())
        self.kasan_banner = None
        self.user_space = False

    def _close_splat(self):
        if self.splat is not None:
            self.splat.closed = True
            self.splat = None

    def close(self):
        """The log ended: so did the report being collected."""
        self._close_splat()

    def scan(self, lineno, text, during):
        """Feed one line of kernel text, DURING naming what ran; return the
        report it starts, if it starts one."""
        self.kidx += 1
        body = strip_ts(text)
        if self.kasan_banner is None and not self.user_space and \
                'KernelAddressSanitizer initialized' in body:
            self.kasan_banner = lineno
        if RUN_INIT_RE.match(body):
            self.user_space = True
        if self.cmdline is None and body.startswith('Kernel command line:'):
            self.cmdline = body.split(':', 1)[1].strip()
        m = re.search(r'Linux version (\S+)', body)
        if m and self.linux_version_release is None:
            self.linux_version_release = m.group(1)
        kind = classify_line(body, self.patterns)
        sp = self.splat
        if kind == 'ignore':
            self.prev_kernel = (lineno, text)
            return None
        if kind == 'end':
            if sp is not None:
                sp.lines.append(text)
                self._close_splat()
            self.prev_kernel = (lineno, text)
            return None
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
                self.total += 1
                sp = Report(kind, lineno, text, self.kidx, lead, during,
                            cut_here)
                if len(self.problems) < MAX_PROBLEMS:
                    self.problems.append(sp)
                self.splat = sp
                self.prev_kernel = (lineno, text)
                return sp
            self.prev_kernel = (lineno, text)
            return None
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
        return None
