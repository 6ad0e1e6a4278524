"""The guest tests on a real machine: `kernel-pipeline-tests`, the one
command of the tests package (scripts/build-tests-package, docs/packages.md).

On a machine running a kernel installed from the pipeline's packages this
runs the variant's suites with the guest's own runner (run-suite, ktap-run,
debug-checks, as the initramfs has them) and writes what the QEMU harness
(expect-scripts/boot-and-test.exp) writes: a console log with the markers
of expect-scripts/PROTOCOL.md, the kernel's own messages among them as on a
serial console (read from /dev/kmsg), and the boot's plan. The one parser
(pipeline/results) then decides the verdict from that log and the plan,
exactly as for a QEMU boot: OUT/<variant>/results.json, junit.xml and
<suite>.ktap, which `make report`, `make compare` and `make parse` read.

What differs from a QEMU boot, and how the log says it: the harness's
ACCEL line names the accelerator `machine` (there is no QEMU to exit or
power off; the verdict's rule for the last step is the END line), the
READY line comes from this command, and a suite that outlives its timeout
(the suite.conf timeout, sized for TCG: generous on hardware) is stopped
with SUITE-TIMEOUT, after which the run ends, as the harness's does.

The package's tree (ROOT, /usr/lib/kernel-pipeline-tests):
    bin/        run-suite, ktap-run, debug-checks, ready, machine-setup
    tests/      <suite>/<program> (the initramfs's /tests)
    artifacts/  <variant>/variant.json and config: what the plan is made of
    pipeline/   this package
    package.json  variant, version, release

Python 3.11 standard library only (Debian 12).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import errno
import json
import os
import platform
import re
import select
import signal
import socket
import stat
import subprocess
import threading
import time
from typing import IO

from . import Fail, boot, protocol
from .results import load_patterns, parse, summary_line, write_results
from .results.verdict import MACHINE

ROOT = '/usr/lib/kernel-pipeline-tests'
# the final command's limit, as the harness's default (--final-timeout)
FINAL_TIMEOUT = 120
# a kmsg record: "prio,seq,usec,flags[,...];text" (Documentation/ABI/
# testing/dev-kmsg); lines that begin with a space are its dictionary
KMSG_RECORD = re.compile(r'^(\d+),(\d+),(\d+),[^;]*;(.*)$', re.S)


@dataclasses.dataclass(frozen=True)
class Package:
    """The installed tests package: where it is and what it was built
    for."""
    root: str
    variant: dict
    version: str
    release: str

    @property
    def name(self) -> str:
        return self.variant['variant']

    @property
    def artifacts(self) -> str:
        return os.path.join(self.root, 'artifacts')

    def env(self) -> dict[str, str]:
        """The guest's environment: its runner first in PATH, its tests
        where run-suite looks (TESTS_DIR), messages in plain ASCII."""
        env = dict(os.environ)
        env['PATH'] = os.path.join(self.root, 'bin') + ':' + env.get(
            'PATH', '/usr/sbin:/usr/bin:/sbin:/bin')
        env['TESTS_DIR'] = os.path.join(self.root, 'tests')
        env['LC_ALL'] = 'C'
        return env


def load_package(root: str) -> Package:
    try:
        with open(os.path.join(root, 'package.json'), encoding='utf-8') as f:
            meta = json.load(f)
        with open(os.path.join(root, 'artifacts', meta['variant'],
                               'variant.json'), encoding='utf-8') as f:
            v = json.load(f)
    except (OSError, ValueError, KeyError) as e:
        raise Fail('%s is not a whole tests package: %s' % (root, e)) from None
    return Package(root, v, meta.get('version', '?'), meta.get('release', '?'))


def kmsg_line(record: str) -> str | None:
    """One /dev/kmsg record as the serial console prints it (printk time
    in front, PRINTK_TIME as in base.config), so that the parser's kernel
    reports (failure-patterns.txt) find it; None for a dictionary line or
    anything that is not a record."""
    m = KMSG_RECORD.match(record.rstrip('\n'))
    if not m:
        return None
    usec = int(m.group(3))
    return '[%5d.%06d] %s' % (usec // 1000000, usec % 1000000, m.group(4))


class Console:
    """The console log: every line to the log file and to the terminal,
    whole lines only (the kernel log's reader writes from its thread)."""

    def __init__(self, log: IO[str], echo: IO[str]):
        self.log, self.echo = log, echo
        self.lock = threading.Lock()
        self.start = time.monotonic()

    def line(self, text: str) -> None:
        with self.lock:
            for f in (self.log, self.echo):
                f.write(text + '\n')
                f.flush()

    def note(self, name: str, free: str = '', **fields) -> None:
        """The harness line NAME (pipeline/protocol.py, the definition
        the QEMU harness's lines are held to as well)."""
        self.line(protocol.PREFIX + protocol.text(name, free, **fields))

    def elapsed(self) -> str:
        return '%.1f' % (time.monotonic() - self.start)


class KernelLog(threading.Thread):
    """The kernel's messages onto the console, as a serial console shows
    them: /dev/kmsg from the start of its buffer (the boot's messages,
    as far as the buffer still holds them), then each new record as it
    comes. A regular file instead (the tests) is read whole at once."""

    def __init__(self, path: str, console: Console):
        super().__init__(daemon=True)
        self.path, self.console = path, console
        self.stopping = threading.Event()
        self.fd = -1

    def open(self) -> str | None:
        """None, or why the kernel's messages cannot be read."""
        try:
            self.fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as e:
            return '%s: %s' % (self.path, e.strerror)
        if not stat.S_ISCHR(os.fstat(self.fd).st_mode):
            with os.fdopen(self.fd, encoding='utf-8',
                           errors='replace') as f:
                for rec in f:
                    line = kmsg_line(rec)
                    if line is not None:
                        self.console.line(line)
            self.fd = -1
        return None

    def drain(self) -> bool:
        """Every record there is now onto the console; False at an end
        of file (/dev/kmsg has none: another device was given)."""
        while True:
            try:
                rec = os.read(self.fd, 8192)
            except OSError as e:
                if e.errno == errno.EPIPE:
                    # records overwritten before they were read: go on
                    # with the next one
                    continue
                return True
            if not rec:
                return False
            line = kmsg_line(rec.decode('utf-8', 'replace'))
            if line is not None:
                self.console.line(line)

    def run(self) -> None:
        if self.fd < 0:
            return
        while not self.stopping.is_set():
            select.select([self.fd], [], [], 0.2)
            if not self.drain():
                return

    def stop(self) -> None:
        """After a last look: what the kernel said up to now is in."""
        if self.fd < 0:
            return
        time.sleep(0.3)
        self.stopping.set()
        self.join()
        self.drain()
        os.close(self.fd)


def run_command(console: Console, argv: list[str], env: dict[str, str],
                limit: float) -> int | None:
    """ARGV's output line by line onto the console; its status, or None
    when it ran past LIMIT seconds (then its whole process group is
    killed: the tests it started with it)."""
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         env=env, start_new_session=True)

    def copy():
        assert p.stdout is not None
        for raw in p.stdout:
            console.line(raw.decode('utf-8', 'replace').rstrip('\r\n'))
    reader = threading.Thread(target=copy, daemon=True)
    reader.start()
    try:
        rc = p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        rc = None
    finally:
        if p.poll() is None or rc is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
    # a program still running in the background keeps the pipe open
    reader.join(timeout=5)
    if not reader.is_alive():
        # (closed here, not by the garbage collector, whose
        # ResourceWarning would land in the middle of a test's line)
        assert p.stdout is not None
        p.stdout.close()
    return rc


def configure(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('--suites', default='', metavar="'A B'",
                    help="the suites to run (default: the variant's "
                    'package_suites and its benchmark suites)')
    ap.add_argument('--tests', action='append', default=[], metavar='GLOB',
                    help='suite/program/test globs, as TESTS (repeatable, '
                    'or space separated)')
    ap.add_argument('--out', default='kernel-pipeline-results', metavar='DIR',
                    help='write DIR/<variant>/: console.log, plan.json, '
                    'results.json, junit.xml, <suite>.ktap (default: '
                    '%(default)s)')
    ap.add_argument('--timeout-scale', type=float, default=1.0,
                    metavar='X', help="the suites' timeouts times X")
    ap.add_argument('--no-setup', action='store_true',
                    help='do not mount debugfs and tracefs where absent')
    ap.add_argument('--kmsg', default='/dev/kmsg', help=argparse.SUPPRESS)
    ap.add_argument('--list', action='store_true',
                    help='list the suites and their programs, run nothing')


def default_suites(v: dict) -> list[str]:
    """The series' suites (package_suites) and the variant's suites that
    are benchmarks as a whole (suite.conf `benchmarks = *`)."""
    out = list(v['params'].get('package_suites') or [])
    for s in v['params']['suites']:
        if s not in out and v['suites'].get(s, {}).get('benchmarks') == ['*']:
            out.append(s)
    return out


def run(a: argparse.Namespace, root: str, stdout: IO[str]) -> int:
    pkg = load_package(root)
    v = pkg.variant
    if a.list:
        for s in sorted(v['suites']):
            print('%s: %s' % (s, ' '.join(v['suites'][s]['programs'])),
                  file=stdout)
        return 0
    globs = [g for arg in a.tests for g in arg.split()]
    asked = a.suites.split()
    suites = boot.selected_suites(v, asked or default_suites(v), globs)
    plan = boot.plan(pkg.artifacts, v, suites, globs)
    out = os.path.join(a.out, pkg.name)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if os.path.isfile(os.path.join(out, f)):
            os.remove(os.path.join(out, f))
    with open(os.path.join(out, 'plan.json'), 'w', encoding='utf-8') as f:
        f.write(json.dumps(plan, indent=1) + '\n')
    log_path = os.path.join(out, 'console.log')
    env = pkg.env()
    with open(log_path, 'w', encoding='utf-8') as log:
        con = Console(log, stdout)
        date = datetime.datetime.now(datetime.timezone.utc)
        con.note('START', variant=pkg.name,
                 date=date.strftime('%Y-%m-%dT%H:%M:%SZ'))
        con.note('ACCEL', '%s no QEMU: kernel-pipeline-tests %s on %s (%s)' % (
            MACHINE, pkg.version, socket.gethostname(), platform.machine()))
        klog = KernelLog(a.kmsg, con)
        why = klog.open()
        if why:
            # kernel reports are seen only there: no verdict without it
            # (results/verdict.py: class 2)
            con.note('NO-KERNEL-LOG', why)
        klog.start()
        if os.geteuid() != 0:
            # the tests run as root in the guest: many need it
            con.line('# kernel-pipeline-tests: not run as root: tests '
                     'that need it fail or skip, and nothing is mounted')
        rel = platform.release()
        if rel != pkg.release:
            con.line('# kernel-pipeline-tests: the running kernel is %s, '
                     'not the package\'s %s' % (rel, pkg.release))
        if not a.no_setup:
            run_command(con, ['sh', os.path.join(root, 'bin',
                                                 'machine-setup')], env, 60)
        # (the guest's own ready marker: one definition, bin/ready)
        run_command(con, ['sh', os.path.join(root, 'bin', 'ready')], env, 10)
        con.note('READY-SEEN', elapsed=con.elapsed())
        stopped = False
        try:
            for s in suites:
                limit = max(1, round(v['suites'][s]['timeout'] *
                                     v['params'].get('timeout_scale', 1) *
                                     a.timeout_scale))
                con.note('SEND', 'run-suite %s%s' % (
                    s, ''.join(" '%s'" % g for g in globs)))
                rc = run_command(con, ['sh', os.path.join(
                    root, 'bin', 'run-suite'), s] + globs, env, limit)
                if rc is None:
                    con.note('SUITE-TIMEOUT', suite=s, after=limit)
                    stopped = True
                    break
                con.note('SUITE-DONE', suite=s, elapsed=con.elapsed())
            final = v['params'].get('final', '')
            if final and not stopped:
                con.note('SEND', final)
                rc = run_command(con, ['sh', '-c', final], env,
                                 FINAL_TIMEOUT)
                if rc is None:
                    con.note('FINAL-TIMEOUT', after=FINAL_TIMEOUT)
                else:
                    con.line('@@@ FINAL-DONE')
        except KeyboardInterrupt:
            con.note('INTERRUPTED', signal='SIGINT')
        klog.stop()
        con.note('END', elapsed=con.elapsed())
    # (this package's own failure-patterns.txt: the one the package ships)
    patterns = load_patterns()
    with open(log_path, encoding='utf-8', errors='replace') as f:
        text = f.read()
    res = parse(text, patterns, log_path=os.path.abspath(log_path),
                plan=plan)
    write_results(res, out)
    print(summary_line(res), file=stdout)
    print('results: %s (make report/compare read it: python3 -m pipeline '
          'compare QEMU-RESULTS %s)' % (out, a.out), file=stdout)
    return int(res.exit_class)


DOC = """Run the guest tests of the pipeline on this machine.

Runs the variant's suites (default: its package_suites and benchmark
suites) with the guest's runner and writes what a QEMU run writes:
OUT/<variant>/console.log, plan.json, results.json, junit.xml and
<suite>.ktap, its verdict decided by the pipeline's one parser. Exit
status: the run's class (0 passed, 1 a test failed, 2 something planned
did not run or timed out, 3 the kernel reported a bug). Run as root.
"""
