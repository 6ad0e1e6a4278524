"""The console logs of tests/fixtures/console-logs and the helpers the
results tests share (tests/unit/test_results*.py): parse a recorded or an
edited log in-process, and read what it wrote.

Every log under tests/fixtures/console-logs/ is genuine serial console
output of a real kernel booted in QEMU (its README.md says how each was
made), some edited by the tests the way a broken guest would have printed
them; the plans are what scripts/pipeline boot plan --plan-out wrote for
those runs.
"""
import json
import os
import re
import sys

sys.dont_write_bytecode = True
TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.path.insert(0, TOP)
from pipeline import results  # noqa: E402

LOGS = os.path.join(TOP, 'tests', 'fixtures', 'console-logs')
PATTERNS = results.load_patterns()


def log_lines(name):
    """The recorded log NAME as lines (a final '' when it ends with a
    newline), split as sed splits them: at newlines only."""
    return results.read_log(os.path.join(LOGS, name)).split('\n')


def parse_text(text, plan=None, **kw):
    return results.parse(text, PATTERNS, plan=plan, **kw)


def parse(name, plan=None, **kw):
    """NAME's BootResult, and its results.json as a dict."""
    res = parse_text(results.read_log(os.path.join(LOGS, name)), plan, **kw)
    return res, res.to_dict()


def parse_lines(lines, plan=None, **kw):
    res = parse_text('\n'.join(lines), plan, **kw)
    return res, res.to_dict()


def plan_of(name):
    return results.read_plan(os.path.join(LOGS, name))


def kinds(r):
    return ','.join(dict.fromkeys(p['kind'] for p in r['kernel_problems']))


def junit(res):
    return results.junit_tree(res).getroot()


def reasons(r, cls):
    return [x['reason'] for x in r['reasons'] if x['class'] == cls]


def insert(lines, pattern, new, after=False):
    """sed's /PATTERN/i (or a) NEW: the lines NEW before (after) every
    line matching PATTERN."""
    out = []
    for ln in lines:
        if re.search(pattern, ln):
            out.extend([ln] + new if after else new + [ln])
        else:
            out.append(ln)
    return out


def delete(lines, pattern, end=None, keep=None):
    """sed's /PATTERN/d, or /PATTERN/,/END/d; KEEP: the lines of the range
    that stay (sed's {/KEEP/!d})."""
    out = []
    inside = False
    for ln in lines:
        if inside:
            if re.search(end, ln):
                inside = False
            if keep and re.search(keep, ln):
                out.append(ln)
            continue
        if re.search(pattern, ln):
            inside = end is not None
            if keep and re.search(keep, ln):
                out.append(ln)
            continue
        out.append(ln)
    return out


def upto(lines, pattern):
    """sed -n '1,/PATTERN/p': the lines up to the first one after the
    first that matches PATTERN."""
    for i, ln in enumerate(lines[1:], 1):
        if re.search(pattern, ln):
            return lines[:i + 1]
    raise AssertionError('no line matches %r' % pattern)


def mini(rc, ktap):
    """A run of one suite k whose program p printed KTAP and exited RC,
    framed as run-suite and the harness frame it."""
    return ['@@@ HARNESS START variant=v date=x',
            '@@@ READY release=x uptime=1',
            '@@@ HARNESS SEND run-suite k', '@@@ SUITE-BEGIN k uptime=1',
            '@@@ TEST-BEGIN k/p uptime=1'] + ktap + [
        '@@@ TEST-END k/p rc=%s uptime=2' % rc,
        '@@@ SUITE-END k rc=%s uptime=2' % (0 if rc == 0 else 1),
        '@@@ HARNESS SEND poweroff -f', '@@@ HARNESS QEMU-EXIT status=0',
        '@@@ HARNESS END elapsed=3', '']


def checks(kmemleak, lockdep, panic_on_warn, kmemleak_detail=None):
    """The output of runner/debug-checks where the recorded run's final
    command (the older kmemleak-scan) printed its report."""
    return ['@@@ CHECK kmemleak %s %s' % (kmemleak,
                                          kmemleak_detail or
                                          'two scans done'),
            '@@@ CHECK lockdep %s debug_locks=%s' % (
                lockdep, 1 if lockdep == 'on' else 0),
            '@@@ CHECK panic_on_warn %s panic_on_warn=1' % panic_on_warn]
