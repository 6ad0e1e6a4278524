"""The writers of a boot's result: results.json, junit.xml, one KTAP
file per suite, and the one-line summary for people.

Python 3.11 standard library only (Debian 12).
"""

import json
import os
import re
import xml.etree.ElementTree as ET

from ..models import GOOD, Status


def summary_line(res):
    """One line for people: variant, class, boot time, counts, first cause
    of the BootResult RES."""
    c = res.counts
    boot = res.boot['ready_uptime_s']
    parts = ['%s: class %d (%s)' % (res.variant, res.exit_class,
                                    res.exit_class_name),
             'boot %ss' % boot if boot is not None else
             'not booted' if res.booted is False else 'no READY',
             '%d passed%s, %d failed, %d skipped, %d errors%s' % (
                 c['pass'], ' (%d flaky)' % c['flaky'] if c.get('flaky')
                 else '', c['fail'], c['skip'], c['error'],
                 ', %d benchmark%s ran' % (c['bench'], '' if c['bench'] == 1
                                           else 's')
                 if c.get('bench') else '')]
    kinds = list(dict.fromkeys(p['kind'] for p in res.kernel_problems))
    parts.append('kernel problems: %d%s' % (
        res.kernel_problems_total,
        ' (%s)' % ', '.join(kinds) if kinds else ''))
    if res.reasons:
        parts.append(res.reasons[0].text)
    return ' - '.join(parts)


# ---- writers ------------------------------------------------------------
_XML_BAD = re.compile('[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd'
                      '\U00010000-\U0010ffff]')


def _x(s):
    return _XML_BAD.sub('?', '' if s is None else str(s))


def _secs(ms):
    return '%.3f' % (ms / 1000.0) if isinstance(ms, (int, float)) else '0'


def junit_tree(res):
    """JUnit XML of the BootResult RES: one <testsuite> per suite, kernel
    problems and harness problems as failing testcases kernel/<kind> and
    harness/<what>."""
    root = ET.Element('testsuites', name=_x(res.variant))
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
                                  if status in GOOD
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
            if status in GOOD and text:
                so = ET.SubElement(tc, 'system-out')
                so.text = _x(text)
        for k, v in n.items():
            ts.set(k, str(v))
            tot[k] += v
        ts.set('time', '%.3f' % time if isinstance(time, (int, float))
               else '0')

    # kernel problems first: the most important news of a boot
    by_kind = {}
    for p in res.kernel_problems:
        by_kind.setdefault(p['kind'], []).append(p)
    if by_kind:
        cases = []
        for kind, ps in by_kind.items():
            text = '\n\n'.join('log line %s, during %s:\n%s' % (
                p['line'], p['during'], p['excerpt']) for p in ps)
            cases.append(('kernel', kind, 'fail', ps[0]['first_line'], text,
                          '0'))
        add_suite('kernel', cases)

    boot = res.boot
    cases = [('harness', 'boot', 'pass' if boot['ready'] else 'error',
              'no READY marker', '' if boot['ready'] else
              'the guest never printed @@@ READY',
              '%.3f' % boot['ready_uptime_s']
              if boot['ready_uptime_s'] is not None else '0')]
    for r in res.reasons:
        # (a missing test is a testcase of its own suite already)
        if r.cls == 2 and not r.text.startswith(('no READY', 'test ')):
            cases.append(('harness', r.text.split(':')[0], 'error',
                          r.text, r.text, '0'))
    add_suite('harness', cases)

    by_suite = {}
    for t in res.tests:
        # nested kselftest results: a testsuite per target
        by_suite.setdefault(t.junit_suite or t.suite, []).append(t)
    durations = {s['name']: s['duration_s'] for s in res.suites}
    for name, ts in by_suite.items():
        cases = []
        for t in ts:
            msg = t.skip_reason or t.note or \
                (t.excerpt.splitlines() or [t.status.value])[-1]
            cases.append(('%s.%s' % (t.suite, t.program), t.name,
                          t.status.value, msg, t.excerpt,
                          _secs(t.duration_ms), t.flaky))
        add_suite(name, cases, durations.get(name, durations.get(
            name.split('/')[0])))
    for k, v in tot.items():
        root.set(k, str(v))
    if isinstance(res.duration_s, (int, float)):
        root.set('time', '%.3f' % res.duration_s)
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
    """Write the BootResult RES as results.json, junit.xml and
    <suite>.ktap into outdir."""
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, 'results.json'), 'w',
              encoding='utf-8') as f:
        json.dump(res.to_dict(), f, indent=2, sort_keys=False)
        f.write('\n')
    tree = junit_tree(res)
    ET.indent(tree)
    tree.write(os.path.join(outdir, 'junit.xml'), encoding='utf-8',
               xml_declaration=True)
    # a suite run more than once in a boot: one file, all its programs
    merged = {}
    for s in res.suites:
        m = merged.setdefault(s['name'], {'name': s['name'], 'programs': []})
        m['programs'].extend(s['programs'])
    bench = {}
    for t in res.tests:
        if t.status == Status.BENCH:
            bench.setdefault(t.suite, {}).setdefault(
                t.program, []).append(t.name)
    for s in merged.values():
        with open(os.path.join(outdir, safe_name(s['name']) + '.ktap'), 'w',
                  encoding='utf-8') as f:
            f.write(suite_ktap(s, bench.get(s['name'])))
