"""The one reader of the patch series, patches/series (PATCHES names
another directory): one patch per line (its first word; quilt's options
after it are ignored), '#' starts a comment line, blank lines are
skipped. An absent or empty series is valid: it builds the pristine
source. prepare-source, series-check, patches-export, the manifest and
the staleness rule ask it (bash through `scripts/pipeline config series`).

Python 3.11 standard library only (Debian 12).
"""

from __future__ import annotations

import os

from pipeline import Fail, sha256, top

def patches_dir() -> str:
    return os.environ.get('PATCHES') or os.path.join(top(), 'patches')


def series_names(directory: str | None = None) -> list[str]:
    """The patch file names of the series, in order; each must exist."""
    d = directory or patches_dir()
    path = os.path.join(d, 'series')
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding='utf-8') as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith('#'):
                continue
            name = words[0]
            if os.sep in name or name in ('.', '..'):
                raise Fail("patches/series names '%s': a patch is a file in "
                           "patches/ itself" % name)
            if not os.path.isfile(os.path.join(d, name)):
                raise Fail("patches/series names '%s', but patches/%s does "
                           "not exist" % (name, name))
            out.append(name)
    return out


def series_entries(directory: str | None = None) -> list[tuple[str, str]]:
    """[(name, sha256)] in series order."""
    d = directory or patches_dir()
    return [(n, sha256(os.path.join(d, n))) for n in series_names(d)]


def series_hash(directory: str | None = None) -> str:
    """One hash over the series: every patch's name and content, in order
    (the sha256 of the lines "NAME SHA256\\n")."""
    text = ''.join('%s %s\n' % e for e in series_entries(directory))
    import hashlib  # (here: `config` imports this module, rarely for a hash)
    return hashlib.sha256(text.encode()).hexdigest()


def series_lines(cmds: list[str]) -> list[str]:
    """What `config series CMDS...` prints: for each of list, paths and
    hash in the order asked, its answer."""
    out = []
    for cmd in cmds:
        if cmd == 'list':
            out += series_names()
        elif cmd == 'paths':
            out += [os.path.join(patches_dir(), n) for n in series_names()]
        else:
            out.append(series_hash())
    return out
