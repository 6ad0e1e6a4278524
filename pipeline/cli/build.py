"""The build subcommand (scripts/pipeline build ...): the build stages'
decisions, for the shell steps that run the tools: the config check and
localmodconfig's diff (pipeline/build.py), the donor (pipeline/donor.py),
the artifact metadata (pipeline/artifacts.py), a function's instructions
and no-work path (pipeline/fastpath.py, for scripts/fastpath-insns).
"""

import argparse
import sys

from pipeline import (Fail, build, config, describe, donor, fastpath,
                      kerneltree)
from pipeline.cli import Command

CHECK_CONFIG = """Check that the config fragments' options survived olddefconfig.

check-config CONFIG FRAGMENT...: every option the fragments set (the last
fragment that mentions an option wins) must have that value in CONFIG.
Prints each dropped option, where it was asked for and what it became, and
exits 2 if there is any.
check-config --list FRAGMENT...: print the options the fragments ask for,
with their final values, in .config syntax.
check-config --list --variant NAME: the same of the variant's fragments
(one call where `variant fragments | xargs check-config --list` took two).
"""


def _check_config_args(ap: argparse.ArgumentParser) -> None:
    ap.usage = ('%(prog)s [-h] CONFIG FRAGMENT...\n'
                '       %(prog)s --list FRAGMENT...\n'
                '       %(prog)s --list --variant NAME')
    ap.add_argument('--list', action='store_true',
                    help='print the options the fragments ask for')
    ap.add_argument('--variant', metavar='NAME',
                    help='with --list: the fragments of variant NAME')
    ap.add_argument('files', nargs='*', metavar='FILE',
                    help='CONFIG, then the fragments in order')


def _check_config(a: argparse.Namespace) -> int:
    files = list(a.files)
    if a.variant is not None:
        if not a.list or files:
            raise Fail('usage: --variant NAME goes with --list and no '
                       'files')
        for line in build.fragment_options(config.Variant(a.variant)):
            print(line)
        return 0
    if len(files) < (1 if a.list else 2):
        raise Fail('usage: give CONFIG and its fragments (CONFIG '
                   'FRAGMENT... | --list FRAGMENT...)')
    dot_config = None
    if not a.list:
        dot_config = files.pop(0)
        have = build.config_values(build._read(dot_config, ''))
    wanted = build.wanted_options([(f, build._read(f, 'config fragment '))
                             for f in files])
    if dot_config is None:
        for line in build.option_lines(wanted):
            print(line)
        return 0
    report = build.dropped_report(build.dropped_options(wanted, have))
    for line in report:
        print(line, file=sys.stderr)
    return 2 if report else 0


DESCRIBE = """The metadata files of artifacts/<variant>/ (pipeline/artifacts.py).

The variant's parameters come from the resolver (pipeline/config.py); the
kernel's facts from KERNEL_DIR/kernel.json. Exit 0, or 2 with a message.
"""

KERNEL_JSON = """OUT/kernel.json: what the kernel in OUT was built from.

Fragments and their hashes, the Kconfig lines' hash, .config and bzImage
hashes, release, build durations; with --series-sha256 H, the hash of the
series the tree holds, its patches when patches/ still is that series.
"""

EXPECTED = """The initramfs's /etc/pipeline/expected.

What the guest's smoke suite checks the running kernel and its boot
against, from KERNEL_DIR/kernel.json and the variant.
"""

VARIANT_JSON = """OUT/variant.json: everything a boot of VARIANT needs.

The only file of the build the boot side reads (docs/architecture.md: the
artifact contract).
"""


def _kernel_json_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('variant', metavar='VARIANT')
    ap.add_argument('obj', metavar='OBJ')
    ap.add_argument('out', metavar='OUT')
    ap.add_argument('--ccache', choices=('on', 'off'), default='on')
    ap.add_argument('--duration', action='append', default=[],
                    metavar='NAME=S')
    ap.add_argument('--series-sha256', default=None, metavar='H')
    ap.add_argument('--tree', default=None, metavar='DIR')
    ap.add_argument('--tree-describe', default=None, metavar='TEXT')
    ap.add_argument('--tree-state', default=None, metavar='H')


def _kernel_json(a: argparse.Namespace) -> int:
    tree = None
    if a.tree:
        tree = {'path': a.tree, 'describe': a.tree_describe,
                'state': a.tree_state,
                # what the kernel lacks of the series (its suites skip)
                'series_options_off': kerneltree.series_options_absent(
                    a.tree)}
    describe.write_kernel_json(a.variant, a.obj, a.out, a.ccache,
                                a.duration, a.series_sha256, tree)
    return 0


TREE_CHECK = """Check TREE as KERNEL_TREE (pipeline/kerneltree.py).

An absolute path, a directory, a kernel tree, the top of a git tree, no
in-tree build. Exit 0, or 2 naming the problem.
"""

TREE_STATE = """Print TREE's git describe --always --dirty, then its state hash.

The state: HEAD, the changes against it and the untracked files, hashed
(pipeline/kerneltree.py): equal states, the same source.
"""


def _tree_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('tree', metavar='TREE')


def _tree_check(a: argparse.Namespace) -> int:
    kerneltree.check(a.tree)
    return 0


def _tree_state(a: argparse.Namespace) -> int:
    for line in kerneltree.state(kerneltree.check(a.tree)):
        print(line)
    return 0


def _expected_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('variant', metavar='VARIANT')
    ap.add_argument('kernel_dir', metavar='KERNEL_DIR')


def _expected(a: argparse.Namespace) -> int:
    for line in describe.expected_lines(a.variant, a.kernel_dir):
        print(line)
    return 0


ETC = """DIR/expected and DIR/options: the initramfs's /etc/pipeline.

expected is what `expected` prints; options the options the variant's
fragments ask for (check-config --list): one call of build-initramfs.
"""


def _etc_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('variant', metavar='VARIANT')
    ap.add_argument('kernel_dir', metavar='KERNEL_DIR')
    ap.add_argument('dir', metavar='DIR')


def _etc(a: argparse.Namespace) -> int:
    build.write_guest_facts(a.variant, a.kernel_dir, a.dir)
    return 0


def _variant_json_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('variant', metavar='VARIANT')
    ap.add_argument('out', metavar='OUT')
    ap.add_argument('kernel_dir', metavar='KERNEL_DIR')


def _variant_json(a: argparse.Namespace) -> int:
    describe.write_variant_json(a.variant, a.out, a.kernel_dir)
    return 0


LOCALMOD_DIFF = """What localmodconfig changed from Debian's config.

Prints the count and every change that is not a module dropped; writes
every change to CHANGES, one a line. Exit 2 when an option flipped between
built-in and module (only modules may go).
"""


def _localmod_diff_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('debian', metavar='DEBIAN', help="Debian's .config")
    ap.add_argument('now', metavar='NOW', help='the .config after it')
    ap.add_argument('changes', metavar='CHANGES', help='file to write')


def _localmod_diff(a: argparse.Namespace) -> int:
    before = build.config_values(build._read(a.debian, ''))
    after = build.config_values(build._read(a.now, ''))
    lines, bad = build.localmod_report(before, after)
    with open(a.changes, 'w', encoding='utf-8') as f:
        f.writelines(str(c) + '\n' for c in build.config_changes(before, after))
    print('\n'.join(lines))
    if bad:
        print("error: localmodconfig changed what Debian builds in or as a "
              'module: %s' % ', '.join(str(c) for c in bad), file=sys.stderr)
        return 2
    return 0


DONOR = """Pick the object directory a new kernel build starts from.

A kernel variant that has not been built in this tree yet (SRC/.obj-VARIANT
holds only its fresh .config) can start from a copy of another variant's
finished object directory, SRC/.obj-OTHER: Kbuild records for every object
the command line and the CONFIG_ symbols it depends on (fixdep,
include/config/), so after the copy it rebuilds exactly the objects whose
symbols or flags differ, and the rest is reused.

A candidate must have finished a build (its .pipeline-built record) from
the same commit of SRC with the same toolchain, must not differ in any
symbol the kernel's own Makefiles use to set compiler flags (Makefile,
arch/x86/Makefile*, scripts/Makefile.*: then every object is rebuilt
anyway), and must let at least donor.MIN_SHARE (a tenth) of its objects be reused. Among
those, the one with the most reusable objects wins (then the fewest
differing symbols). Anything unexpected in a candidate rules it out: the
build is then a clean one, never a doubtful one. `make repro-check`
compares the result with a clean, cache-less build.

Prints "DONOR REUSED TOTAL DIFFERING" for the chosen donor, or nothing;
one line per candidate on stderr says why it was or was not taken.
Exit 0, or 2 with a message.
"""


def _donor_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('src', metavar='SRC')
    ap.add_argument('variant', metavar='VARIANT')
    ap.add_argument('--commit', required=True, metavar='SHA')
    ap.add_argument('--toolchain', required=True, metavar='TEXT')


def _donor(a: argparse.Namespace) -> int:
    best = donor.pick(a.src, a.variant, a.commit, a.toolchain)
    if best:
        print('%s %d %d %d' % best)
    return 0


FASTPATH = """FUNCTIONs' instructions in ELF: static count and no-work path.

One line per function (pipeline/fastpath.py has the rules):
  FUNCTION INSNS PATH [NOTE]
INSNS is the body's instruction count (objdump -d), PATH the instructions
of the no-work path (every flag and word the function tests zero). INSNS
is - when ELF has no such function (NOTE "missing"); PATH is ? when the
walk failed (NOTE "error: ..." says where: a loop, a trap, an indirect
jump). NOTE "assumed: ..." lists the conditional jumps decided after a
flag setter that is not a test of a word against itself or an immediate
(nor cmp $0x0): decided as if its result were zero, which that
instruction does not prove. With --trace, each function's path follows
its line, an instruction a line. Exit 0, or 2 when objdump fails.
"""


def _fastpath_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('--trace', action='store_true',
                    help='print each no-work path, an instruction a line')
    ap.add_argument('elf', metavar='ELF')
    ap.add_argument('functions', nargs='+', metavar='FUNCTION')


def _fastpath(a: argparse.Namespace) -> int:
    for name in a.functions:
        count, path, error = fastpath.measure(a.elf, name)
        note = error if count is None else ''
        if path is None and count is not None:
            note = 'error: ' + error
        elif path is not None and path.error:
            note = 'error: ' + path.error
        elif path is not None and path.assumed:
            note = 'assumed: ' + '; '.join(path.assumed)
        print(' '.join(x for x in (
            name, '-' if count is None else str(count),
            '?' if path is None or path.count is None else str(path.count),
            note) if x))
        if a.trace and path is not None:
            start = path.steps[0][0].addr if path.steps else 0
            for insn, what in path.steps:
                print(('  +0x%-4x %-40s %s' % (
                    insn.addr - start, insn.text(), what)).rstrip())
            if path.ended:
                print('  (%s)' % path.ended)
    return 0


BUILD = """The build stages' decisions (the shell steps run the tools).
"""

COMMANDS = [Command('build', BUILD, None, None, subcommands=(
    Command('check-config', CHECK_CONFIG, _check_config_args, _check_config),
    Command('localmod-diff', LOCALMOD_DIFF, _localmod_diff_args,
            _localmod_diff),
    Command('donor', DONOR, _donor_args, _donor),
    Command('fastpath', FASTPATH, _fastpath_args, _fastpath),
    Command('tree-check', TREE_CHECK, _tree_args, _tree_check),
    Command('tree-state', TREE_STATE, _tree_args, _tree_state),
    Command('describe-artifacts', DESCRIBE, None, None, subcommands=(
        Command('kernel', KERNEL_JSON, _kernel_json_args, _kernel_json),
        Command('expected', EXPECTED, _expected_args, _expected),
        Command('etc', ETC, _etc_args, _etc),
        Command('variant', VARIANT_JSON, _variant_json_args, _variant_json),
    )),
))]
