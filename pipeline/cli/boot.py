"""The boot plan subcommand (scripts/pipeline boot plan): what a boot runs,
one argument a line (accel-probe, people); the harness's or QEMU's
command as JSON (--argv-out) and `boot run`, which runs it, for
test-variant, boot-interactive and boot-packages (the plan itself:
pipeline/boot.py)."""

import argparse
import json
import os
import sys

from pipeline import Fail, artifacts, testsel
from pipeline.boot import (accel_of, accel_plan, harness, plan, qemu,
                           selected_suites, test_ids)
from pipeline.cli import Command

PLAN = """How to boot a variant, from its artifacts alone (pipeline/boot.py).

usage:
  [--accel NAME [--accel-reason TEXT]] [--rootfs DIR] [--argv-out FILE]
            qemu ARTIFACTS VARIANT
      the QEMU command line, one argument per line; with --argv-out
      FILE, as JSON in FILE for `boot run FILE` (as for harness below)
  [--accel NAME --accel-reason TEXT] [--tests GLOBS] [--rootfs DIR]
            [--plan-out FILE] harness ARTIFACTS VARIANT LOG [SUITE...]
      the command line of expect-scripts/boot-and-test.exp that boots
      VARIANT, runs SUITEs (default: the variant's suites, or with
      --tests the suites the globs name) and writes LOG, one argument
      per line; with --plan-out, FILE (JSON) says what that boot must
      run: each suite's programs the globs select, its benchmarks, and
      the debug checkers the kernel's config and command line promise
      (parse-console --plan holds the console log against it); with
      --argv-out FILE, the command goes to FILE as JSON instead
      ({"argv": [...], "accel": NAME, "accel_reason": TEXT}: an argument
      may hold any character), for `boot run FILE`
  [--tests GLOBS] tests ARTIFACTS VARIANT [SUITE...]
      the test ids the plan of that boot runs, one a line, without
      booting (make list-tests): each test a program lists (at build
      time), as far as the globs select it; a program that lists none
      runs whole and is SUITE/PROGRAM
  accel-args NAME
      the QEMU arguments of an accelerator (kvm, tcg)
  list ARTIFACTS
      the variants in ARTIFACTS (those with a variant.json)

With --rootfs DIR (qemu, harness) the kernel boots from a Debian root
filesystem its packages were installed into (scripts/boot-packages): DIR's
/boot/vmlinuz-RELEASE, which must be the variant's bzImage, and the
/boot/initrd.img-RELEASE initramfs-tools made, with DIR itself as the
root filesystem, shared over 9p (virtio); its init is DIR's
/pipeline-init, which runs the variant's initramfs unpacked in
DIR/pipeline/ (the guest tests) from that root.

The boot side reads ARTIFACTS/VARIANT/variant.json and the files it names
(the kernel's bzImage, checked against the hash the build recorded, and
the initramfs), never configs/, guest-tests/ or build/: a downloaded
artifact set boots on a machine that has built nothing. The harness's own
choices live here: the console and panic arguments of the kernel command
line, the accelerator's QEMU arguments (scripts/accel-probe decides which
one works here), suite timeouts scaled by the variant's timeout_scale and
the accelerator's factor, silence as the largest of the variant's and the
suites' (the power-off and final command timeouts are the expect
script's), and which suites a TESTS selection needs (pipeline/testsel.py).
Exit 0, or 2 naming what is missing or wrong.
"""


def _plan_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('--accel', default='tcg', help=argparse.SUPPRESS)
    ap.add_argument('--accel-reason', default='', help=argparse.SUPPRESS)
    ap.add_argument('--tests', default='', help=argparse.SUPPRESS)
    ap.add_argument('--rootfs', default='', help=argparse.SUPPRESS)
    ap.add_argument('--plan-out', default='', help=argparse.SUPPRESS)
    ap.add_argument('--argv-out', default='', help=argparse.SUPPRESS)
    sub = ap.add_subparsers(dest='cmd', required=True, metavar='COMMAND')
    sub.add_parser('accel-args').add_argument('name')
    p = sub.add_parser('qemu')
    p.add_argument('artifacts')
    p.add_argument('variant')
    p = sub.add_parser('harness')
    p.add_argument('artifacts')
    p.add_argument('variant')
    p.add_argument('log')
    p.add_argument('suites', nargs='*', metavar='SUITE')
    sub.add_parser('list').add_argument('artifacts')
    p = sub.add_parser('tests')
    p.add_argument('artifacts')
    p.add_argument('variant')
    p.add_argument('suites', nargs='*', metavar='SUITE')


def plan_args(a: argparse.Namespace) -> list[str]:
    """The list `boot plan` (scripts/pipeline boot plan) answers for
    arguments A."""
    accel_of(a.accel)
    if a.cmd == 'list':
        out = artifacts.variants_in(a.artifacts)
    elif a.cmd == 'accel-args':
        out = accel_of(a.name)['args']
    else:
        v = artifacts.load_variant(a.artifacts, a.variant)
        if a.cmd == 'qemu':
            out = qemu(a.artifacts, v, a.accel, a.rootfs)
        elif a.cmd == 'tests':
            # the boot's own plan (pipeline/boot.py), not a second reading
            globs = testsel.parse(a.tests)
            out = test_ids(plan(a.artifacts, v, selected_suites(
                v, a.suites, globs), globs))
        else:
            out = harness(a.artifacts, v, a.log, a.suites,
                          testsel.parse(a.tests), a.accel, a.accel_reason,
                          a.rootfs, a.plan_out)
    return out


def plan_lines(a: argparse.Namespace) -> list[str]:
    """What `boot plan` prints for arguments A, one argument a line."""
    out = plan_args(a)
    for arg in out:
        if '\n' in arg:
            raise Fail('an argument contains a newline: %r' % arg)
    return out


def _option(argv: list[str], name: str) -> str:
    """The value of the harness's option NAME in ARGV (before its `--`)."""
    head = argv[:argv.index('--')] if '--' in argv else argv
    return head[head.index(name) + 1] if name in head[:-1] else ''


def _plan(a: argparse.Namespace) -> int:
    if a.argv_out:
        if a.cmd not in ('harness', 'qemu'):
            raise Fail('--argv-out goes with harness or qemu')
        argv = plan_args(a)
        if a.cmd == 'harness':
            accel = _option(argv, '--accel')
            reason = _option(argv, '--accel-reason')
        else:
            # what the variant makes of the accelerator, as the harness
            # says it
            accel, _, reason = accel_plan(
                artifacts.load_variant(a.artifacts, a.variant), a.accel,
                a.accel_reason)
        cmd = {'argv': argv, 'accel': accel, 'accel_reason': reason}
        try:
            with open(a.argv_out, 'w', encoding='utf-8') as f:
                json.dump(cmd, f, indent=1)
                f.write('\n')
        except OSError as e:
            raise Fail('cannot write the command: %s' % e) from None
        return 0
    for arg in plan_lines(a):
        print(arg)
    return 0


RUN = """Run the command `boot plan --argv-out FILE` wrote (harness, qemu).

run FILE: says "accel: NAME (REASON)" on stderr (the accelerator and why,
with what the variant adds to it: its CPU model, one TCG thread, -icount),
then becomes the command FILE holds (exec: its exit status is the
harness's, a signal reaches it directly).
"""


def _run_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('file', metavar='FILE')


def _run(a: argparse.Namespace) -> int:
    try:
        with open(a.file, encoding='utf-8') as f:
            cmd = json.load(f)
        argv, accel = cmd['argv'], cmd['accel']
        reason = cmd['accel_reason']
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise Fail('no boot command in %s (%s)' % (a.file, e)) from None
    if not (isinstance(argv, list) and argv and
            all(isinstance(x, str) for x in argv)):
        raise Fail('no boot command in %s (argv is %r)' % (a.file, argv))
    print('accel: %s (%s)' % (accel, reason), file=sys.stderr, flush=True)
    sys.stdout.flush()
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        raise Fail('cannot run %s: %s' % (argv[0], e)) from None
    return 2  # (not reached)


BOOT = """A boot planned from variant.json (the shell steps run QEMU).
"""

COMMANDS = [Command('boot', BOOT, None, None, subcommands=(
    Command('plan', PLAN, _plan_args, _plan),
    Command('run', RUN, _run_args, _run),
))]
