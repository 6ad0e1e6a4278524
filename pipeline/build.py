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

import dataclasses
import os
import re

from . import Fail, config, describe

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
    files = {'expected': describe.expected_lines(variant, kdir),
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
