"""KERNEL_TREE (issue 46): any kernel git tree, built by the pipeline
instead of Debian's source plus patches/.

`make test-variant KERNEL_TREE=~/src/linux VARIANT=default` runs the
run variant of default (pipeline/knobs.py) whose kernel is
KERNEL-tree-HASH: the variant's kernel with `#@ source = tree` and `#@
kernel_tree = PATH`, built by scripts/build-kernel out of tree (O=) into
the checkout's build/, never into the tree (the container mounts it
read-only). A tree without the series lacks its options (the `config`
lines patches/ adds): the run variant states each one off, as the
pristine variant does, so the dropped-option check holds the rest and the
series' suites skip as they do in `off` (the guest reads /proc/config.gz).

Checked before anything is built (exit 2 naming the problem): an
absolute path, a directory, a kernel tree (Makefile and
scripts/kconfig/merge_config.sh, what the build runs), the top of a git
tree (the records name its commit: git describe), and clean of an
in-tree build (Kbuild refuses O= then: make mrproper).

Whether a tree kernel is current (pipeline/artifacts.py) compares the
tree's state: its HEAD, its uncommitted changes and its untracked files,
hashed (state()): a changed file builds again, nothing changed does not.

Python 3.11 standard library only (Debian 12).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess

from pipeline import Fail, series

_CONFIG_RE = re.compile(r'^\s*(?:menu)?config\s+([A-Za-z0-9_]+)\s*$', re.M)
_PATCH_CONFIG_RE = re.compile(
    r'^\+\s*(?:menu)?config\s+([A-Za-z0-9_]+)\s*$', re.M)


def _git(tree: str, *args: str) -> bytes:
    try:
        return subprocess.run(['git', '-C', tree, *args], check=True,
                              capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        err = getattr(e, 'stderr', b'') or b''
        raise Fail('KERNEL_TREE: git %s in %s failed: %s' % (
            ' '.join(args), tree,
            err.decode(errors='replace').strip() or e)) from None


def check(path: str) -> str:
    """PATH as KERNEL_TREE, checked: exit 2 (Fail) naming the problem."""
    if not path.startswith('/'):
        raise Fail("KERNEL_TREE: '%s' is not an absolute path (make "
                   "makes it one; scripts take it absolute)" % path)
    if not os.path.isdir(path):
        raise Fail('KERNEL_TREE: %s is not a directory' % path)
    if not (os.path.isfile(os.path.join(path, 'Makefile')) and
            os.path.isfile(os.path.join(path, 'scripts/kconfig/'
                                        'merge_config.sh'))):
        raise Fail('KERNEL_TREE: %s is not a kernel tree (no Makefile and '
                   'scripts/kconfig/merge_config.sh)' % path)
    try:
        top = subprocess.run(['git', '-C', path, 'rev-parse',
                              '--show-toplevel'], check=True,
                             capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        top = ''
    if not top or os.path.realpath(top) != os.path.realpath(path):
        raise Fail('KERNEL_TREE: %s is not a git tree (the top of one: the '
                   'records name the commit built, git describe)' % path)
    for f in ('.config', 'include/config'):
        if os.path.exists(os.path.join(path, f)):
            raise Fail('KERNEL_TREE: %s has a %s (built in the tree): the '
                       'pipeline builds out of tree (O=), which Kbuild '
                       'refuses then; run make mrproper there' % (path, f))
    return path


def defined_options(tree: str) -> set[str]:
    """The CONFIG_ names the Kconfig files of TREE define."""
    out = set()
    for root, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if not d.startswith('.')]
        for f in files:
            if f.startswith('Kconfig'):
                try:
                    with open(os.path.join(root, f), encoding='utf-8',
                              errors='replace') as fh:
                        out.update('CONFIG_' + m for m in
                                   _CONFIG_RE.findall(fh.read()))
                except OSError:
                    continue
    return out


def series_options() -> list[str]:
    """The CONFIG_ names the series defines (its patches' added
    `config` lines), sorted."""
    out = set()
    for name in series.series_names():
        path = os.path.join(series.patches_dir(), name)
        try:
            with open(path, encoding='utf-8', errors='replace') as f:
                out.update('CONFIG_' + m for m in
                           _PATCH_CONFIG_RE.findall(f.read()))
        except OSError as e:
            raise Fail('cannot read %s: %s' % (path, e)) from None
    return sorted(out)


def series_options_absent(tree: str) -> list[str]:
    """The series' options TREE does not define: a tree without (that
    part of) the series."""
    have = defined_options(tree)
    return [o for o in series_options() if o not in have]


def state(tree: str) -> tuple[str, str]:
    """(git describe --always --dirty, a hash of what the tree holds):
    HEAD, the changes against it and the untracked files' names and
    bytes. Equal hashes: the same source."""
    describe = _git(tree, 'describe', '--always', '--dirty').decode(
        errors='replace').strip()
    h = hashlib.sha256()
    h.update(_git(tree, 'rev-parse', 'HEAD'))
    h.update(_git(tree, 'diff', '--binary', 'HEAD'))
    untracked = _git(tree, 'ls-files', '-z', '--others',
                     '--exclude-standard').split(b'\0')
    for name in sorted(n for n in untracked if n):
        h.update(name + b'\0')
        try:
            with open(os.path.join(tree.encode(), name), 'rb') as f:
                h.update(hashlib.sha256(f.read()).digest())
        except OSError:
            h.update(b'unreadable')
    return describe, h.hexdigest()
