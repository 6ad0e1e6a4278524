"""Kernel .config files: reading them, and what localmodconfig changed.

A variant with `#@ localmodconfig = LIST` (pipeline/config.py) starts from
Debian's config, and the kernel's own streamline_config.pl (what `make
localmodconfig` runs) turns off every module the machine in LIST does not
load. The rule the distro-vm variant promises: only modules go. A built-in
that became a module, or a module that became built-in, is an error; every
other change (the modules dropped, and options that went with them) is
listed, never hidden.

    python3 -m pipeline.kconfig localmod-diff DEBIAN NOW CHANGES

Python 3.11 standard library only (Debian 12).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

SET_RE = re.compile(r'^(CONFIG_[A-Za-z0-9_]+)=(.*)$')
UNSET_RE = re.compile(r'^# (CONFIG_[A-Za-z0-9_]+) is not set$')


def read(path: str) -> dict[str, str]:
    """The options of a .config: name -> value, 'n' for "is not set"."""
    out = {}
    with open(path, encoding='utf-8') as f:
        for ln in f:
            ln = ln.rstrip('\n')
            m = SET_RE.match(ln)
            if m:
                out[m.group(1)] = m.group(2)
                continue
            m = UNSET_RE.match(ln)
            if m:
                out[m.group(1)] = 'n'
    return out


@dataclass(frozen=True)
class Change:
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


def changes(before: dict[str, str], after: dict[str, str]) -> list[Change]:
    """Every option whose value differs, an absent option counting as n."""
    return [Change(k, before.get(k, 'n'), after.get(k, 'n'))
            for k in sorted(set(before) | set(after))
            if before.get(k, 'n') != after.get(k, 'n')]


def localmod_report(before: dict[str, str], after: dict[str, str]
                    ) -> tuple[list[str], list[Change]]:
    """What localmodconfig did, as lines to print, and the changes it must
    not make (tristate flips)."""
    diff = changes(before, after)
    dropped = [c for c in diff if c.module_dropped]
    other = [c for c in diff if not c.module_dropped]
    kept = sum(1 for v in after.values() if v == 'm')
    lines = ["localmodconfig: %d of Debian's %d modules kept, %d dropped; "
             '%d other options changed with them:' % (
                 kept, kept + len(dropped), len(dropped), len(other))]
    lines += ['  ' + str(c) for c in other]
    return lines, [c for c in diff if c.tristate_flip]


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[0] != 'localmod-diff':
        print('usage: python3 -m pipeline.kconfig localmod-diff DEBIAN NOW '
              'CHANGES', file=sys.stderr)
        return 2
    before, after = read(argv[1]), read(argv[2])
    lines, bad = localmod_report(before, after)
    with open(argv[3], 'w', encoding='utf-8') as f:
        f.writelines(str(c) + '\n' for c in changes(before, after))
    print('\n'.join(lines))
    if bad:
        print("error: localmodconfig changed what Debian builds in or as a "
              'module: %s' % ', '.join(str(c) for c in bad), file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
