"""The build side: what a kernel build checks and records, in-process.

The config check (scripts/pipeline build check-config, scripts/config-variant): every
option the variant's fragments set must have that value in the .config
olddefconfig wrote. Kconfig drops an option whose dependencies are missing
without a word, and a debug variant without KASAN would "pass" while
detecting nothing; the check names each dropped option, the fragment that
asked for it and what it became. The last fragment that mentions an option
wins; "# CONFIG_X is not set" asks for n, and an option the .config does
not set is n.

The compiler, make, cpio and podman calls stay in the shell steps of
scripts/ (build-kernel, build-initramfs, ...); their decisions move here,
but for the donor of a new build (`build donor`, pipeline/donor.py).
"""

import argparse
import dataclasses
import os
import re
import sys

from . import Fail, artifacts, config, donor
from .cli import Command

_SET_RE = re.compile(r'(CONFIG_[A-Za-z0-9_]+)=')
_UNSET_RE = re.compile(r'# (CONFIG_[A-Za-z0-9_]+) is not set')


@dataclasses.dataclass(frozen=True)
class Wanted:
    """An option a fragment asks for: VALUE as .config writes it after
    the '=', or 'n' for "is not set"; FRAGMENT the file name (no
    directory) of the last fragment that mentions it."""
    option: str
    value: str
    fragment: str

    @property
    def line(self) -> str:
        """The .config line that asks for it."""
        if self.value == 'n':
            return '# %s is not set' % self.option
        return '%s=%s' % (self.option, self.value)


@dataclasses.dataclass(frozen=True)
class Dropped:
    """A wanted option the .config does not have: GOT is its value there,
    None when it is not set at all."""
    wanted: Wanted
    got: str | None


def wanted_options(fragments: list[tuple[str, str]]) -> list[Wanted]:
    """The options FRAGMENTS (file name, text) ask for, in the order they
    are first mentioned, each with the value of its last mention."""
    want: dict[str, Wanted] = {}
    for name, text in fragments:
        label = os.path.basename(name)
        for line in text.split('\n'):
            m = _SET_RE.match(line)
            if m:
                opt, value = m.group(1), line[m.end():]
            else:
                m = _UNSET_RE.match(line)
                if not m:
                    continue
                opt, value = m.group(1), 'n'
            want[opt] = Wanted(opt, value, label)
    return list(want.values())


def option_lines(wanted: list[Wanted]) -> list[str]:
    """The wanted options in .config syntax (check-config --list)."""
    return [w.line for w in wanted]


def config_values(text: str) -> dict[str, str]:
    """The options a .config sets: "CONFIG_X=value" lines."""
    have = {}
    for line in text.split('\n'):
        m = _SET_RE.match(line)
        if m:
            have[m.group(1)] = line[m.end():]
    return have


def dropped_options(wanted: list[Wanted],
                    have: dict[str, str]) -> list[Dropped]:
    """The wanted options whose value in HAVE (config_values()) differs."""
    return [Dropped(w, have.get(w.option)) for w in wanted
            if have.get(w.option, 'n') != w.value]


def dropped_report(dropped: list[Dropped]) -> list[str]:
    """What check-config prints about DROPPED (on stderr), nothing when it
    is empty."""
    if not dropped:
        return []
    out = ['error: options the config fragments ask for did not survive '
           'olddefconfig:']
    for d in dropped:
        became = ('not set (missing dependency?)' if d.got is None
                  else '%s=%s' % (d.wanted.option, d.got))
        out.append('  %s=%s (from %s) became %s' % (
            d.wanted.option, d.wanted.value, d.wanted.fragment, became))
    return out


def fragment_options(v: config.Variant) -> list[str]:
    """The options the fragments of variant V ask for, in .config
    syntax (check-config --list of its fragments)."""
    return option_lines(wanted_options(
        [(f, _read(f, 'config fragment ')) for f in v.fragment_files]))


def write_guest_facts(variant: str, kdir: str, directory: str) -> None:
    """DIRECTORY/expected and DIRECTORY/options: the initramfs's
    /etc/pipeline, what the smoke suite checks the running kernel
    (KDIR/kernel.json) and its boot against."""
    files = {'expected': artifacts.expected_lines(variant, kdir),
             'options': fragment_options(config.Variant(variant))}
    for name, lines in files.items():
        with open(os.path.join(directory, name), 'w',
                  encoding='utf-8') as f:
            f.writelines(line + '\n' for line in lines)


def _read(path: str, what: str) -> str:
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return f.read()
    except OSError:
        raise Fail('%s%s does not exist' % (what, path)) from None


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
        for line in fragment_options(config.Variant(a.variant)):
            print(line)
        return 0
    if len(files) < (1 if a.list else 2):
        raise Fail('usage: give CONFIG and its fragments (CONFIG '
                   'FRAGMENT... | --list FRAGMENT...)')
    dot_config = None
    if not a.list:
        dot_config = files.pop(0)
        have = config_values(_read(dot_config, ''))
    wanted = wanted_options([(f, _read(f, 'config fragment '))
                             for f in files])
    if dot_config is None:
        for line in option_lines(wanted):
            print(line)
        return 0
    report = dropped_report(dropped_options(wanted, have))
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


def _kernel_json(a: argparse.Namespace) -> int:
    artifacts.write_kernel_json(a.variant, a.obj, a.out, a.ccache,
                                a.duration, a.series_sha256)
    return 0


def _expected_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('variant', metavar='VARIANT')
    ap.add_argument('kernel_dir', metavar='KERNEL_DIR')


def _expected(a: argparse.Namespace) -> int:
    for line in artifacts.expected_lines(a.variant, a.kernel_dir):
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
    write_guest_facts(a.variant, a.kernel_dir, a.dir)
    return 0


def _variant_json_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('variant', metavar='VARIANT')
    ap.add_argument('out', metavar='OUT')
    ap.add_argument('kernel_dir', metavar='KERNEL_DIR')


def _variant_json(a: argparse.Namespace) -> int:
    artifacts.write_variant_json(a.variant, a.out, a.kernel_dir)
    return 0


# localmodconfig (a variant with `#@ localmodconfig = LIST`,
# scripts/config-variant): Debian's config cut down by the kernel's own
# streamline_config.pl to the modules of LIST. The rule: only modules go.
# A built-in that became a module, or a module that became built-in, is an
# error; every other change (the modules dropped, and options that went
# with them) is listed, never hidden.

@dataclasses.dataclass(frozen=True)
class Change:
    """An option whose value differs between two .configs ('n': unset)."""
    option: str
    before: str
    after: str

    @property
    def module_dropped(self) -> bool:
        return self.before == 'm' and self.after == 'n'

    @property
    def tristate_flip(self) -> bool:
        """A built-in became a module or the reverse: not localmodconfig's
        to do."""
        return {self.before, self.after} == {'y', 'm'}

    def __str__(self) -> str:
        return '%s: %s -> %s' % (self.option, self.before, self.after)


def config_changes(before: dict[str, str],
                   after: dict[str, str]) -> list[Change]:
    """Every option whose value differs (config_values()), an absent
    option counting as n."""
    return [Change(k, before.get(k, 'n'), after.get(k, 'n'))
            for k in sorted(set(before) | set(after))
            if before.get(k, 'n') != after.get(k, 'n')]


def localmod_report(before: dict[str, str], after: dict[str, str]
                    ) -> tuple[list[str], list[Change]]:
    """What localmodconfig did, as lines to print, and the changes it must
    not make (tristate flips)."""
    diff = config_changes(before, after)
    dropped = [c for c in diff if c.module_dropped]
    other = [c for c in diff if not c.module_dropped]
    kept = sum(1 for v in after.values() if v == 'm')
    lines = ["localmodconfig: %d of Debian's %d modules kept, %d dropped; "
             '%d other options changed with them:' % (
                 kept, kept + len(dropped), len(dropped), len(other))]
    lines += ['  ' + str(c) for c in other]
    return lines, [c for c in diff if c.tristate_flip]


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
    before = config_values(_read(a.debian, ''))
    after = config_values(_read(a.now, ''))
    lines, bad = localmod_report(before, after)
    with open(a.changes, 'w', encoding='utf-8') as f:
        f.writelines(str(c) + '\n' for c in config_changes(before, after))
    print('\n'.join(lines))
    if bad:
        print("error: localmodconfig changed what Debian builds in or as a "
              'module: %s' % ', '.join(str(c) for c in bad), file=sys.stderr)
        return 2
    return 0


BUILD = """The build stages' decisions (the shell steps run the tools).
"""

COMMANDS = [Command('build', BUILD, None, None, subcommands=(
    Command('check-config', CHECK_CONFIG, _check_config_args, _check_config),
    Command('localmod-diff', LOCALMOD_DIFF, _localmod_diff_args,
            _localmod_diff),
    # (its code is pipeline/donor.py: see there why not here)
    Command('donor', donor.DOC, donor.configure, donor.run),
    Command('describe-artifacts', DESCRIBE, None, None, subcommands=(
        Command('kernel', KERNEL_JSON, _kernel_json_args, _kernel_json),
        Command('expected', EXPECTED, _expected_args, _expected),
        Command('etc', ETC, _etc_args, _etc),
        Command('variant', VARIANT_JSON, _variant_json_args, _variant_json),
    )),
))]
