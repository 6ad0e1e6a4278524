"""The verdict: a boot's exit class and its reasons, from what the
marker state machine gathered and the boot's plan; every class rule is
here (the classes: expect-scripts/PROTOCOL.md).

Python 3.11 standard library only (Debian 12).
"""

from .. import classes, testsel
from ..models import BootResult, ExitClass, Layout, Reason, Status, TestResult
from .plan import plan_errors

# PROTOCOL.md: any program exit status but 0 is a failure (class 1). Even
# kselftest's 4 (KSFT_SKIP): the guest's SUITE-END rc counts it as a
# failure too, and kselftest_harness.h programs exit 0 when tests skip.
OK_RC = {0}

# Events after which the harness kills QEMU: they, not QEMU's status, say
# what went wrong.
HARNESS_STOPS = {'BOOT-TIMEOUT', 'SUITE-TIMEOUT', 'SILENCE', 'FINAL-TIMEOUT',
                 'POWEROFF-TIMEOUT', 'INTERRUPTED'}
# The accelerator of a run on a real machine (pipeline/machine.py, the
# tests package's command): no QEMU, so no poweroff; its last step is the
# END line, which the truncation rule already asks for.
MACHINE = 'machine'
# Class 2 by its two names (models.ExitClass): a reason below that is
# INCOMPLETE says something planned has no outcome; a plain 2 is the
# machinery's failure (infrastructure).
INCOMPLETE = ExitClass.INCOMPLETE


def assemble(ps, variant=None, log_path=None, plan=None,
             harness_status=None):
    """The BootResult of the finished state machine PS.
    harness_status: the harness's exit status, when known; a failure the
    log does not explain is still class 2, recorded with its reason.
    plan: what the boot was planned to run (scripts/pipeline boot plan --plan-out):
    every planned program must have run and every planned debug checker
    must have stayed on, or the run is class 2."""
    bad = plan_errors(plan) if plan is not None else []
    res = _assemble(ps, variant, log_path, None if bad else plan)
    if bad:
        res.reasons.insert(0, Reason(2, 'the plan is not valid, so nothing '
                                     'was held against it: %s'
                                     % '; '.join(bad)))
        res.exit_class = classes.raised(res.exit_class,
                                        ExitClass.INFRASTRUCTURE)
    if classes.harness_unexplained(res.exit_class, harness_status):
        res.reasons.insert(0, Reason(2, 'the harness exited %d, and the '
                                     'console log does not say why'
                                     % harness_status))
        res.exit_class = classes.raised(res.exit_class,
                                        ExitClass.INFRASTRUCTURE)
    return res


def _assemble(ps, variant, log_path, plan=None):
    h = ps.harness
    problems = [p.as_dict() for p in ps.reports.problems]
    problems_total = ps.reports.total
    if ps.harness_panic and not any(p['kind'] == 'panic' for p in problems):
        ev = next(e for e in h['events'] if e['event'] == 'PANIC')
        problems.append({'kind': 'panic', 'kinds': ['panic'],
                         'first_line': '@@@ HARNESS PANIC (panic text not '
                                       'in the log)',
                         'line': ev['line'], 'uptime': None, 'during': None,
                         'excerpt': '', 'excerpt_truncated': False})
        problems_total += 1

    tests = []
    suites = []
    for s in ps.suites:
        progs = []
        for p in s.programs:
            for t in p.results:
                # kinds are final only now: a report can be renamed by a
                # later line (cut here -> kernel BUG at)
                if t.reports is not None:
                    kinds = list(dict.fromkeys(x.kind for x in t.reports))
                    t.explained_by = kinds
                    if kinds:
                        t.note += '; kernel problem while it ran: ' + \
                            ', '.join(kinds)
            tests.extend(p.results)
            progs.append({'name': p.name, 'rc': p.rc, 'complete': p.ended,
                          'plan': p.plan, 'duration_s': _duration(p),
                          'results': len([t for t in p.results
                                          if not t.missing]),
                          'bail_out': p.bail_out, 'metrics': p.metrics,
                          'line': p.lineno, 'ktap': p.ktap_lines})
        suites.append({'name': s.name, 'rc': s.rc, 'complete': s.ended,
                       'timed_out': s.timed_out, 'duration_s': _duration(s),
                       'line': s.lineno, 'programs': progs})

    if ps.last_line:
        where = 'the console stopped at line %d: %s' % (
            ps.last_line[0], ps.last_line[1].strip()[:120])
    else:
        where = 'the console printed nothing'
    reasons = []
    if plan is not None:
        _check_plan(plan, ps, suites, tests, reasons, where)

    # the same suite run twice in one boot: keep ids unique
    seen = {}
    for t in tests:
        n = seen.get(t.id, 0) + 1
        seen[t.id] = n
        if n > 1:
            t.id = '%s#%d' % (t.id, n)
    mark_benchmarks(tests, plan)

    counts = {s.value: 0 for s in Status}
    for t in tests:
        counts[t.status.value] += 1
    counts['total'] = len(tests)
    # passed only when run again (a subset of pass)
    counts['flaky'] = sum(1 for t in tests
                          if t.status == Status.PASS and t.flaky)

    for p in problems:
        reasons.append(Reason(3, 'kernel %s: %s' % (p['kind'],
                                                    p['first_line'])))
    events = [e['event'] for e in h['events']]
    for e in h['events']:
        after = e['args'].get('after', '?')
        if e['event'] == 'BOOT-TIMEOUT':
            reasons.append(Reason(2, 'boot timeout after %ss' % after))
        elif e['event'] == 'SUITE-TIMEOUT':
            reasons.append(Reason(2, 'suite %s timed out after %ss' % (
                e['args'].get('suite', '?'), after)))
        elif e['event'] == 'SILENCE':
            reasons.append(Reason(2, 'console silent for %ss' % after))
        elif e['event'] == 'FINAL-TIMEOUT':
            reasons.append(Reason(2, 'the final command timed out after '
                                  '%ss' % after))
        elif e['event'] == 'POWEROFF-TIMEOUT':
            reasons.append(Reason(2, 'QEMU did not end within %ss of '
                                  'poweroff -f' % after))
        elif e['event'] == 'INTERRUPTED':
            reasons.append(Reason(2, 'the harness was interrupted (%s) and '
                                  'killed QEMU' %
                                  e['args'].get('signal', 'signal')))
    if ps.ready is None:
        reasons.append(Reason(2, 'no READY marker: the boot did not '
                              'complete'))
    if h.get('no_kernel_log'):
        reasons.append(Reason(2, 'the kernel log cannot be read (%s): '
                              'kernel reports would go unseen'
                              % h['no_kernel_log']))
    if (h['accel'] or {}).get('name') != MACHINE:
        # (a machine's kernel log is read whole from /dev/kmsg)
        why = console_level_problem(ps.reports.cmdline or '') or \
            console_level_problem(_append(h['qemu_cmdline']))
        if why:
            reasons.append(Reason(2, why))
    st = h['qemu_exit_status']
    if st not in (None, 0) and \
            not any(p['kind'] == 'panic' for p in problems) and \
            not HARNESS_STOPS & set(events):
        reasons.append(Reason(2, 'QEMU exited with status %s without a '
                              'kernel panic' % st))
    if h['start'] is None and (ps.ready is not None or
                               any(s['name'] != 'ktap' for s in suites)):
        # the guest's markers without the harness's frame: not the log
        # of one whole run (its start, its end, what was sent are unknown)
        reasons.append(Reason(INCOMPLETE, 'no @@@ HARNESS START line: the log is '
                              'not that of one whole harness run'))
    if ps.stray:
        reasons.append(Reason(INCOMPLETE, '%d line(s) of KTAP outside any program, '
                              'not counted: line %d: %s' % (
                                  len(ps.stray), ps.stray[0][0],
                                  ps.stray[0][1].strip()[:120])))
    if h['start'] is not None and 'END' not in events and \
            'QEMU-EXIT' not in events:
        reasons.append(Reason(2, 'log truncated: no @@@ HARNESS '
                              'QEMU-EXIT/END'))
    # Everything the harness sent must have run: a guest that resets or
    # dies quietly (QEMU exits 0 under -no-reboot) ends the log early,
    # and what never began has no result to fail.
    # (a final command that never ended leaves no poweroff either: below)
    begun = {s['name'] for s in suites}
    for cmd in h['sent']:
        words = cmd.split()
        if len(words) > 1 and words[0] == 'run-suite' and \
                words[1] not in begun:
            reasons.append(Reason(INCOMPLETE, 'suite %s was sent but never began; '
                                  '%s' % (words[1], where)))
    stopped = HARNESS_STOPS & set(events) or \
        any(p['kind'] == 'panic' for p in problems)
    machine = (h['accel'] or {}).get('name') == MACHINE
    if h['start'] is not None and ps.ready is not None and not stopped \
            and not machine and 'poweroff -f' not in h['sent']:
        reasons.append(Reason(INCOMPLETE, 'the run ended before its last step (the '
                              'harness never sent poweroff); %s' % where))
    for t in tests:
        if t.status == Status.FAIL:
            reasons.append(Reason(1, 'test %s failed' % t.id))
        elif t.status == Status.ERROR and t.missing:
            # planned, and no outcome. A program that said it failed
            # (crashed, killed, bailed out, exited non-zero) lost the rest
            # to that failure: class 1, as any failing test (bisect-run
            # must still see it as bad). Otherwise nothing explains it: a
            # program that never began or ended, that exited 0 short of
            # its plan, or could not run at all is class 2, with where
            # the console stopped unless its program ended.
            reasons.append(Reason(
                1 if t.program_failed else INCOMPLETE, 'test %s: %s%s' % (
                    t.id, t.note, '' if t.program_ended else '; ' + where)))
        elif t.status == Status.ERROR:
            reasons.append(Reason(1, 'test %s: %s' % (t.id, t.note)))
    for s in suites:
        if not s['complete'] and not s['timed_out'] and s['name'] != 'ktap':
            reasons.append(Reason(INCOMPLETE, 'suite %s incomplete: no SUITE-END' %
                                  s['name']))
        elif s['complete'] and not s['programs']:
            reasons.append(Reason(INCOMPLETE, 'suite %s ran no program (SUITE-BEGIN, '
                                  'then SUITE-END rc=%s): it tested '
                                  'nothing' % (s['name'], s['rc'])))
        elif s['complete'] and s['rc'] not in (0, None):
            reasons.append(Reason(1, 'suite %s ended rc=%s' % (s['name'],
                                                               s['rc'])))
        for p in s['programs']:
            if p['complete'] and p['rc'] not in OK_RC and \
                    p['rc'] is not None:
                reasons.append(Reason(1, 'program %s/%s exited rc=%s' % (
                    s['name'], p['name'], p['rc'])))
    reasons.sort(key=lambda r: -r.cls)

    return BootResult(
        log=log_path,
        variant=variant or h['variant'] or 'unknown',
        kernel_release=ps.release or ps.reports.linux_version_release,
        kernel_cmdline=ps.reports.cmdline,
        boot={
            'ready': ps.ready is not None,
            'ready_uptime_s': ps.ready['uptime'] if ps.ready else None,
            'ready_elapsed_s': h.get('ready_elapsed_s'),
            'ready_line': ps.ready['line'] if ps.ready else None,
        },
        duration_s=h['end_elapsed_s'],
        accel=h['accel'],
        exit_class=classes.of_reasons(r.cls for r in reasons),
        reasons=reasons,
        kernel_problems=problems,
        kernel_problems_total=problems_total,
        counts=counts,
        plan=None if plan is None else {
            'tests': plan.get('tests', []),
            'suites': plan.get('suites', []),
            'checkers': plan.get('checkers', []),
            'unplanned': ps.unplanned,
            # what a run variant was run with (pipeline/knobs.py)
            **({'knobs': plan['knobs']} if plan.get('knobs') else {}),
            # and the tree its kernel was built from (KERNEL_TREE)
            **({'kernel_tree': plan['kernel_tree']}
               if plan.get('kernel_tree') else {})},
        checks=ps.checks,
        tests=tests,
        suites=suites,
        harness={k: v for k, v in h.items() if k != 'start'},
    )


def console_level_problem(cmdline):
    """Why the kernel command line CMDLINE (text) keeps warnings off the
    console, or None. WARNING, lockdep, kmemleak and the other reports
    are found on the console only; a message shows there when its level
    (warning: 4) is below the console's, which `quiet` sets to 4 and
    `loglevel=N` to N (the last one given wins; `ignore_loglevel` shows
    everything)."""
    level = why = None
    for w in cmdline.split():
        w = w.strip('\'"')
        if w == 'ignore_loglevel':
            return None
        if w == 'quiet':
            level, why = 4, w
        elif w == 'debug':
            level, why = 10, w
        elif w.startswith('loglevel='):
            try:
                level, why = int(w.split('=', 1)[1]), w
            except ValueError:
                pass
    if level is None or level > 4:
        return None
    return ("the kernel command line's '%s' keeps warnings off the console "
            "(console level %d; a warning is 4): WARNING, lockdep and "
            "kmemleak reports would go unseen, so a verdict boot needs "
            "neither quiet nor a loglevel below 5" % (why, level))


def _append(qemu):
    """The -append argument of the QEMU command line QEMU (the harness's
    line: its words joined by spaces), as far as it can be told."""
    words = (qemu or '').split()
    if '-append' not in words:
        return ''
    out = []
    for w in words[words.index('-append') + 1:]:
        if w.startswith('-') and w != '--':
            break
        out.append(w)
    return ' '.join(out)


def _duration(x):
    """Seconds from a suite's or program's BEGIN marker to its END, by the
    guest's uptime on both; None without both."""
    if isinstance(x.begin_uptime, (int, float)) and \
            isinstance(x.end_uptime, (int, float)):
        return round(x.end_uptime - x.begin_uptime, 3)
    return None


def mark_benchmarks(tests, plan):
    """A test the plan's suites declare a benchmark (suite.conf's
    `benchmarks`, test-id globs) that passed is 'bench': it ran to the
    end and measured, but checked nothing, so it is no pass. A benchmark
    that failed, skipped or has no result stays that, as any test. Without
    a plan nothing is declared."""
    globs = [g for sp in (plan or {}).get('suites', [])
             for g in sp.get('benchmarks', [])]
    for t in tests:
        if t.status == Status.PASS and any(
                testsel.matches(g, t.suite, t.program,
                                testsel.test_part(t.name))
                for g in globs):
            t.status = Status.BENCH


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
            reasons.append(Reason(INCOMPLETE, 'suite %s was planned but never '
                                  'sent; %s' % (sp['name'], where)))
        for name in sp['programs']:
            if name in seen:
                continue
            ident = '%s/%s' % (sp['name'], name)
            why = 'planned but never began' + (
                ' (its suite never began)' if s is None else
                '' if s['complete'] else ' (the suite did not end)')
            tests.append(TestResult(
                id=ident, suite=sp['name'], program=name, name=name,
                number=None, status=Status.ERROR, layout=Layout.MISSING,
                missing=True, note=why, explained_by=[]))
        for prog in (s['programs'] if s else []):
            want = sp.get('tests', {}).get(prog['name'])
            if want is not None:
                _check_tests(sp['name'], prog, want, tests, ps)
        for name in seen:
            if name not in sp['programs'] + sp.get('optional', []):
                ps.unplanned.append('%s/%s' % (sp['name'], name))
                reasons.append(Reason(
                    INCOMPLETE, 'program %s/%s ran but was not planned (the '
                    'initramfs and variant.json disagree)' % (sp['name'],
                                                              name)))
    # every TESTS glob must have reached something that ran: a glob into a
    # program (its tests by name) that matched none of them runs nothing
    # there, and a rerun of a test that was renamed must not pass
    # (a program that began and then failed - crashed, killed - reached
    # the glob: its missing results are that failure, class 1)
    def reached(g, t):
        if t.missing:
            return t.program_failed and testsel.matches(
                g, t.suite, t.program) is not False
        return testsel.matches(g, t.suite, t.program,
                               testsel.test_part(t.name))

    for g in plan.get('tests', []):
        if not any(reached(g, t) for t in tests):
            reasons.append(Reason(INCOMPLETE, "TESTS glob '%s' matched no test that "
                                  "ran" % g))
    for name in plan.get('checkers', []):
        c = ps.checks.get(name)
        if name == 'kasan':
            # no runtime switch: initialized at boot, or never. The
            # banner is an info line: on the console, or in debug-checks'
            # dmesg when the console's log level hid it
            if ps.reports.kasan_banner is None and \
                    (c is None or c['state'] != 'on'):
                reasons.append(Reason(
                    INCOMPLETE, 'debug checker kasan is off: neither the console nor '
                    'debug-checks saw "KernelAddressSanitizer '
                    'initialized"'))
            continue
        finals = [x for x in ps.harness['sent'] if x.split()[:1] !=
                  ['run-suite'] and x != 'poweroff -f']
        if c is None and ps.final_done is not None:
            reasons.append(Reason(
                INCOMPLETE, "debug checker %s was not reported: the final command "
                "'%s' ended (line %d) without a @@@ CHECK %s line" % (
                    name, ' '.join(finals[-1:]), ps.final_done, name)))
        elif c is None:
            reasons.append(Reason(
                INCOMPLETE, 'debug checker %s was not reported (the final command '
                'never ended); %s' % (name, where)))
        elif c['state'] != 'on':
            reasons.append(Reason(INCOMPLETE, 'debug checker %s is off: %s (line %d)'
                                  % (name, c['detail'] or c['state'],
                                     c['line'])))


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
    mine = [t for t in tests if t.suite == suite and
            t.program == prog['name']]
    names = [t.name for t in mine if not t.missing]

    def covers(w, n):
        return n == w or n.startswith(w + '/') or \
            n == 'selftests: %s: %s' % (prog['name'], w)

    for n in names:
        if not any(covers(w, n) for w in want) and \
                n not in ('exit-status', 'missing-results'):
            ps.unplanned.append('%s/%s/%s' % (suite, prog['name'], n))
    if any(t.missing for t in mine):
        return
    failed = program_failed(prog['bail_out'], prog['complete'], prog['rc'])
    for w in want:
        if any(covers(w, n) for n in names):
            continue
        tests.append(TestResult(
            id='%s/%s/%s' % (suite, prog['name'], w), suite=suite,
            program=prog['name'], name=w, number=None, status=Status.ERROR,
            layout=Layout.MISSING, missing=True,
            note='planned (the program lists it) but no result in the '
            'console log', explained_by=[],
            program_ended=prog['complete'], program_failed=failed))
