"""How a variant boots, from its artifacts alone: the QEMU command line,
the accelerator's arguments and the timeouts it scales, the root
filesystem of a packages boot, and the plan of what one boot must run.

The boot side reads ARTIFACTS/VARIANT/variant.json and the files it names
(pipeline/artifacts.py checks them against the hashes the build
recorded), never configs/, guest-tests/ or build/: a downloaded artifact
set boots on a machine that has built nothing. The harness's own choices
live here: the console and panic arguments of the kernel command line,
the accelerator's QEMU arguments (ACCELS; scripts/accel-probe boots a tiny
guest with exactly these before it says that KVM works), suite timeouts
scaled by the variant's timeout_scale and the accelerator's factor,
silence as the largest of the variant's and the suites', and which suites
a TESTS selection needs (pipeline/testsel.py). scripts/pipeline boot plan is its
command line; accel-probe and test-variant run QEMU from what it prints.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from pipeline import Fail, artifacts, sha256, testsel, top
from pipeline.artifacts import boot_files
from pipeline.results import PATTERNS_FILE as PATTERNS
from pipeline.results.verdict import console_level_problem

Variant = dict[str, Any]     # a variant.json

# Serial console on QEMU's stdio; panic=-1 with -no-reboot makes a panic
# end QEMU at once, so the harness sees it within seconds.
HARNESS_CMDLINE = ['console=ttyS0', 'panic=-1']
# A root filesystem on the host (--rootfs): QEMU shares the directory over
# 9p on virtio-pci; initramfs-tools mounts it by its tag (a root that is
# not a /dev node is not waited for), with nothing to fsck.
ROOTFS_TAG = 'kproot'
ROOTFS_INIT = '/pipeline-init'
ROOTFS_CMDLINE = ['root=' + ROOTFS_TAG, 'rootfstype=9p',
                  'rootflags=trans=virtio,version=9p2000.L', 'rw',
                  'fsck.mode=skip', 'init=' + ROOTFS_INIT]
# The accelerators: QEMU arguments, and the factor on every timeout (the
# timeouts in variant and suite files are sized for TCG; under KVM a hang
# is found sooner). scripts/accel-probe boots a tiny guest with exactly
# these arguments before it says that KVM works.
ACCELS = {
    'tcg': {'args': ['-accel', 'tcg,thread=multi'], 'timeout_factor': 1.0},
    'kvm': {'args': ['-accel', 'kvm', '-cpu', 'host'],
            'timeout_factor': 0.5},
}


def accel_of(name: str) -> dict[str, Any]:
    if name not in ACCELS:
        raise Fail("unknown accelerator '%s' (known: %s)" % (
            name, ', '.join(ACCELS)))
    return ACCELS[name]


# Seconds the silence limit outlasts a guest-side per-test timeout: the
# runner's TIMEOUT line and the next test's first output.
SILENCE_MARGIN = 60


def scaled(seconds: float, accel: str) -> int:
    return max(1, math.ceil(seconds * accel_of(accel)['timeout_factor']))


def accel_plan(v: Variant, accel: str,
               reason: str = '') -> tuple[str, list[str], str]:
    """The accelerator a boot of @v uses, its QEMU arguments and why: a
    variant with `#@ icount` counts instructions, which only TCG can, and
    only single-threaded; one with `#@ tcg_threads = single` runs its vCPUs
    on one TCG thread (KVM has none: there it changes nothing); one with
    `#@ cpu = MODEL` gets that CPU model under TCG (KVM has the host's)."""
    p = v['params']
    opts = p.get('icount', '')
    if opts:
        why = ('the variant counts instructions (#@ icount = %s), which KVM '
               'cannot' % opts)
        accel, args, reason = 'tcg', ['-accel', 'tcg,thread=single',
                                      '-icount', opts], \
            '%s; %s' % (why, reason) if reason else why
    # variant.json files written before the parameter existed lack it
    elif accel == 'tcg' and p.get('tcg_threads', 'multi') == 'single':
        why = 'one TCG thread for every vCPU (#@ tcg_threads = single)'
        args, reason = ['-accel', 'tcg,thread=single'], \
            '%s; %s' % (reason, why) if reason else why
    else:
        args = list(accel_of(accel)['args'])
    cpu = p.get('cpu', '')
    if cpu and accel == 'tcg':
        why = cpu_reason(cpu)
        args += ['-cpu', cpu]
        reason = '%s; %s' % (reason, why) if reason else why
    elif cpu:
        why = ("the variant's CPU model (#@ cpu = %s) is not used: under KVM "
               "the guest has the host's CPU (-cpu host)" % cpu)
        reason = '%s; %s' % (reason, why) if reason else why
    return accel, args, reason


# What a CPU model of `#@ cpu` is for, in the ACCEL line.
CPU_WHY = {'max': 'every feature TCG emulates, AMD SVM with nested paging '
                  'among them: KVM inside the guest without shadow paging'}


def cpu_reason(cpu: str) -> str:
    why = 'CPU model %s (#@ cpu = %s)' % (cpu, cpu)
    return '%s: %s' % (why, CPU_WHY[cpu]) if cpu in CPU_WHY else why


def installed(rootfs: str,
              v: Variant) -> tuple[str, str, list[str], list[str]]:
    """The kernel and initrd installed in @rootfs, and the QEMU arguments
    that share it as the root filesystem. The installed kernel must be the
    bzImage the variant was built with (the packages' /boot/vmlinuz is)."""
    rel = v['kernel']['release']
    kernel = os.path.join(rootfs, 'boot', 'vmlinuz-' + rel)
    initrd = os.path.join(rootfs, 'boot', 'initrd.img-' + rel)
    for path, what in ((kernel, 'kernel'), (initrd, 'initrd'),
                       (rootfs + ROOTFS_INIT, 'init')):
        if not os.path.isfile(path):
            raise Fail('%s has no installed %s %s (make boot-packages '
                             'VARIANT=%s installs it)' % (
                                 rootfs, what, path, v['variant']))
    if sha256(kernel) != v['kernel']['bzImage_sha256']:
        raise Fail('%s is not the bzImage %s was built with: install '
                         'its packages again (make boot-packages)' % (
                             kernel, v['variant']))
    share = 'local,path=%s,mount_tag=%s,security_model=passthrough,id=%s' % (
        os.path.abspath(rootfs).replace(',', ',,'), ROOTFS_TAG, ROOTFS_TAG)
    return kernel, initrd, ROOTFS_CMDLINE, ['-virtfs', share]


def qemu(artifacts: str, v: Variant, accel: str = 'tcg',
         rootfs: str | None = None) -> list[str]:
    bz, initrd = boot_files(artifacts, v)
    root_args, extra = [], []
    if rootfs:
        bz, initrd, root_args, extra = installed(rootfs, v)
    p = v['params']
    cmdline = ' '.join(HARNESS_CMDLINE + p['cmdline'].split() + root_args)
    return ['qemu-system-x86_64'] + accel_plan(v, accel)[1] + [
            '-no-reboot', '-nographic',
            '-smp', str(p['smp']), '-m', str(p['mem']),
            '-kernel', bz, '-initrd', initrd,
            '-append', cmdline] + list(p['qemu_args']) + extra


def selected_suites(v: Variant, suites: list[str],
                    globs: list[str]) -> list[str]:
    """The suites to run: SUITES as given, else the variant's own; with
    TESTS globs only those they select (pipeline/testsel.py)."""
    have = v['suites']
    for s in suites:
        if s not in have:
            raise Fail(
                "suite '%s' is not in the initramfs of %s (it has: %s)" % (
                    s, v['variant'], ' '.join(sorted(have))))
    own = list(suites) or list(v['params']['suites'])
    out = testsel.suites(own, [] if suites else list(have), globs)
    if not out:
        raise Fail("TESTS='%s' selects none of the suites of %s "
                         "(%s): a glob is suite/program/test" % (
                             ' '.join(globs), v['variant'], ' '.join(own)))
    return out


# The debug checkers a kernel config promises: the option that builds it in.
# pipeline/results/verdict.py checks each; all but kasan through the @@@ CHECK
# lines of the guest's debug-checks (kasan has no runtime switch: its boot
# banner is enough).
CHECKERS = {'kasan': 'CONFIG_KASAN', 'kmemleak': 'CONFIG_DEBUG_KMEMLEAK',
            'lockdep': 'CONFIG_PROVE_LOCKING'}
CHECKS_COMMAND = 'debug-checks'


def checkers(artifacts: str, v: Variant) -> list[str]:
    """The debug checkers a boot of @v must keep on: from the kernel's
    config (ARTIFACTS/<kernel>/config, checked against variant.json) and
    the command line."""
    path = os.path.join(artifacts, v['kernel']['variant'], 'config')
    if not os.path.isfile(path):
        raise Fail('the kernel config of %s is missing: no %s (the '
                         'plan needs it to know which debug checkers must '
                         'stay on)' % (v['variant'], path))
    want = v['kernel'].get('config_sha256')
    if want and sha256(path) != want:
        raise Fail('%s is not the config %s was built with (sha256 '
                         'differs from its variant.json)' % (path,
                                                             v['variant']))
    with open(path, encoding='utf-8') as f:
        conf = set(line.strip() for line in f)
    p = v['params']
    cmdline = p['cmdline'].split()
    out = [n for n, opt in sorted(CHECKERS.items()) if opt + '=y' in conf]
    if 'kmemleak' in out and ('kmemleak=off' in cmdline or (
            'CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF=y' in conf and
            'kmemleak=on' not in cmdline)):
        out.remove('kmemleak')
    if 'panic_on_warn=1' in cmdline:
        out.append('panic_on_warn')
    guest = [n for n in out if n != 'kasan']
    if guest and p['final'] != CHECKS_COMMAND:
        raise Fail(
            "the kernel of %s has %s, which only the guest can see are "
            "still on: its final command must be %s (#@ final = %s), not "
            "'%s'" % (v['variant'], ', '.join(guest), CHECKS_COMMAND,
                      CHECKS_COMMAND, p['final']))
    return out


def plan(artifacts: str, v: Variant, suites: list[str],
         globs: list[str]) -> dict[str, Any]:
    """What one boot must run: per suite its programs, and the tests of
    those that list them (variant.json's suites.*.tests, from each
    program's "-l" or "--list" at build time). A program whose selection
    depends on its test names (a glob reaching inside it) must run when
    one of the tests it lists matches, or when it lists none (run-suite
    runs it whole); only one whose listed tests all miss is optional
    (run-suite leaves it out). A suite's
    benchmarks (suite.conf, as test-id globs in variant.json, where a
    suite has any) go along: parse-console gives a benchmark that ran its
    own status, never a pass."""
    out = []
    for s in suites:
        progs, optional, tests = [], [], {}
        lists = v['suites'][s].get('tests', {})
        for prog in v['suites'][s]['programs']:
            sel = testsel.selects(globs, s, prog)
            if sel is not False and prog in lists:
                # the program's own list of its tests (build time), as
                # far as the globs select them
                tests[prog] = [t for t in lists[prog]
                               if testsel.selects(globs, s, prog, t)]
            if sel is True or (sel is None and (
                    prog not in lists or tests[prog])):
                progs.append(prog)
            elif sel is None:
                optional.append(prog)
        out.append({'name': s, 'programs': progs, 'optional': optional,
                    'tests': tests})
        if v['suites'][s].get('benchmarks'):
            out[-1]['benchmarks'] = v['suites'][s]['benchmarks']
    return {'format': 'kernel-pipeline-plan/1', 'variant': v['variant'],
            'tests': list(globs), 'suites': out,
            'checkers': checkers(artifacts, v), 'final': v['params']['final'],
            # the knobs of a run variant (pipeline/knobs.py)
            **({'knobs': v['knobs']} if v.get('knobs') else {}),
            # KERNEL_TREE: the tree its kernel was built from
            **({'kernel_tree': {k: v['kernel']['tree'].get(k) for k in (
                'path', 'describe', 'series_options_off')}}
               if v['kernel'].get('tree') else {})}


def test_ids(p: dict[str, Any]) -> list[str]:
    """The test ids a plan @p runs, in its order (make list-tests): each
    test a program lists, as far as the globs select it; a program that
    lists none runs whole and is suite/program. The optional programs
    (every listed test missed) run nothing."""
    out = []
    for s in p['suites']:
        for prog in s['programs']:
            if prog in s['tests']:
                out += ['%s/%s/%s' % (s['name'], prog, t)
                        for t in s['tests'][prog]]
            else:
                out.append('%s/%s' % (s['name'], prog))
    return out


def profiler_args(artifacts: str, v: Variant, log: str,
                  accel: str) -> list[str]:
    """QEMU's -plugin for a variant with `#@ insn_profile = yes`: the
    profiler (scripts/insn-profile build makes it), the kernel's System.map
    for its symbols, and its table written beside LOG."""
    p = v['params']
    if not p.get('insn_profile'):
        return []
    if accel != 'tcg':
        raise Fail('%s loads the instruction profiler (#@ insn_profile = '
                   'yes), a TCG plugin: it cannot boot under %s' % (
                       v['variant'], accel))
    # its counters are plain memory, shared by the vCPUs: one TCG thread
    if not p.get('icount') and p.get('tcg_threads', 'multi') != 'single':
        raise Fail('%s loads the instruction profiler (#@ insn_profile = '
                   'yes), whose counters need one TCG thread: add #@ icount '
                   'or #@ tcg_threads = single' % v['variant'])
    so = os.path.join(os.environ.get('BUILD') or os.path.join(top(), 'build'),
                      'insn-profile', 'insn_profile.so')
    smap = os.path.join(artifacts, v['kernel']['variant'], 'System.map')
    for path, what in ((so, 'the profiler (scripts/insn-profile build)'),
                       (smap, "the kernel's System.map")):
        if not os.path.isfile(path):
            raise Fail('%s loads the instruction profiler (#@ insn_profile '
                       '= yes): no %s, %s' % (v['variant'], path, what))
    out = os.path.join(os.path.dirname(os.path.abspath(log)),
                       'insn-profile.tsv')
    # (a comma in a QEMU option's value is written twice)
    return ['-plugin', ','.join(
        [os.path.abspath(so).replace(',', ',,')] +
        ['%s=%s' % (k, os.path.abspath(f).replace(',', ',,'))
         for k, f in (('map', smap), ('out', out))])]


def harness(artifacts: str, v: Variant, log: str, suites: list[str],
            globs: list[str] | tuple[str, ...] = (), accel: str = 'tcg',
            reason: str = '', rootfs: str | None = None,
            plan_out: str | None = None) -> list[str]:
    p = v['params']
    # a verdict boot sees kernel reports on its console only
    why = console_level_problem(p['cmdline'])
    if why:
        raise Fail('%s refused: %s' % (v['variant'], why))
    accel, _, reason = accel_plan(v, accel, reason)
    suites = selected_suites(v, suites, globs)
    if plan_out:
        text = json.dumps(plan(artifacts, v, suites, globs), indent=1)
        try:
            with open(plan_out, 'w', encoding='utf-8') as f:
                f.write(text + '\n')
        except OSError as e:
            raise Fail('cannot write the plan: %s' % e) from None
    spec = []
    silence = p['silence']
    floor = 0
    for s in suites:
        conf = v['suites'][s]
        spec.append('%s:%d' % (s, scaled(conf['timeout'] * p['timeout_scale'],
                                         accel)))
        # A suite that is quiet for long stretches (a stress test) says so.
        silence = max(silence, conf['silence'])
        # A kselftest runner in the guest ends a hung test after its own
        # timeout (not scaled) and goes on: outlast it, or the whole run
        # is stopped as silent before the runner can say TIMEOUT.
        if conf.get('test_timeout'):
            floor = max(floor, conf['test_timeout'] + SILENCE_MARGIN)
    opts = ['--final', p['final'], '--accel', accel]
    if reason:
        opts += ['--accel-reason', reason]
    if globs:
        opts += ['--tests', ' '.join(globs)]
    return [os.path.join(top(), 'expect-scripts', 'boot-and-test.exp')] + \
        opts + [log, v['variant'], str(scaled(p['boot_timeout'], accel)),
                str(max(scaled(silence, accel), floor)), ' '.join(spec),
                PATTERNS,
                '--'] + qemu(artifacts, v, accel, rootfs) + \
        profiler_args(artifacts, v, log, accel)
