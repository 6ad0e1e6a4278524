"""The donor of a kernel build: the object directory a new build starts
from (scripts/pipeline build donor, scripts/build-kernel).

A donor changes how fast the same bytes come out, never the bytes; its
rule is described by the command's help (pipeline/cli/build.py, DONOR).

Python 3.11 standard library only (Debian 12).
"""

import json
import os
import re
import sys

from . import Fail

# A donor that saves less than this share of a build is not worth its copy.
MIN_SHARE = 0.10
PREFIX = '.obj-'
RECORD = '.pipeline-built'
SYMBOL_RE = re.compile(r'^(CONFIG_[A-Za-z0-9_]+)=(.*)$')
DEP_RE = re.compile(r'include/config/([A-Za-z0-9_]+)\)')


def read_config(path):
    """{symbol: value} of a .config; unset symbols are absent."""
    values = {}
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = SYMBOL_RE.match(line.rstrip('\n'))
            if m:
                values[m.group(1)] = m.group(2)
    return values


def differing(a, b):
    """The symbols (without CONFIG_) whose values differ between a and b."""
    return sorted(s[len('CONFIG_'):] for s in set(a) | set(b)
                  if a.get(s) != b.get(s))


def flag_symbols(src):
    """Symbols the Makefiles that set the global compiler flags test."""
    files = [os.path.join(src, 'Makefile')]
    for d, prefix in (('arch/x86', 'Makefile'), ('scripts', 'Makefile.')):
        try:
            names = os.listdir(os.path.join(src, d))
        except OSError:
            continue
        files += [os.path.join(src, d, n) for n in sorted(names)
                  if n.startswith(prefix)]
    found = set()
    for path in files:
        try:
            with open(path, encoding='utf-8', errors='replace') as f:
                for line in f:
                    code = line.split('#', 1)[0]
                    found.update(re.findall(r'CONFIG_([A-Za-z0-9_]+)', code))
        except OSError:
            continue
    return found


def object_deps(obj):
    """For every object's .o.cmd file below obj: the symbols it depends on."""
    deps = []
    for root, dirs, files in os.walk(obj):
        dirs[:] = [d for d in dirs if d not in ('.tmp_versions',)]
        for f in files:
            if f.startswith('.') and f.endswith('.o.cmd'):
                with open(os.path.join(root, f), encoding='utf-8',
                          errors='replace') as fh:
                    deps.append(set(DEP_RE.findall(fh.read())))
    return deps


def pick(src, variant, commit, toolchain):
    """(DONOR, REUSED, TOTAL, DIFFERING) of the best donor in SRC for
    VARIANT, or None; says on stderr why each candidate was or was not
    taken."""
    target_config = os.path.join(src, PREFIX + variant, '.config')
    if not os.path.isfile(target_config):
        raise Fail('%s does not exist (run the config step first)'
                   % target_config)
    want = read_config(target_config)
    try:
        names = sorted(os.listdir(src))
    except OSError as e:
        raise Fail('cannot list %s: %s' % (src, e)) from None
    flags = None
    best = None
    for name in names:
        d = os.path.join(src, name)
        other = name[len(PREFIX):]
        # (.obj-X.lock files and .obj-X.tmp copies are not candidates)
        if not name.startswith(PREFIX) or other == variant or '.' in other \
                or not os.path.isdir(d) or os.path.islink(d):
            continue

        def no(why, other=other):
            print('donor %s: not taken (%s)' % (other, why), file=sys.stderr)

        try:
            with open(os.path.join(d, RECORD), encoding='utf-8') as f:
                rec = json.load(f)
        except (OSError, ValueError):
            no('no finished build')
            continue
        if not isinstance(rec, dict):
            no('unreadable build record')
            continue
        if rec.get('commit') != commit:
            no('built from another commit')
            continue
        if rec.get('toolchain') != toolchain:
            no('built with another toolchain')
            continue
        try:
            have = read_config(os.path.join(d, '.config'))
        except OSError:
            no('no .config')
            continue
        diff = differing(want, have)
        if flags is None:
            flags = flag_symbols(src)
        flag_diff = [s for s in diff if s in flags]
        if flag_diff:
            no('other compiler flags: CONFIG_%s'
               % ', CONFIG_'.join(flag_diff[:5]))
            continue
        deps = object_deps(d)
        if not deps:
            no('no objects')
            continue
        changed = set(diff)
        reused = sum(1 for s in deps if not s & changed)
        share = reused / len(deps)
        if share < MIN_SHARE:
            no('%d of %d objects reusable, under %d%%' % (
                reused, len(deps), MIN_SHARE * 100))
            continue
        print('donor %s: candidate (%d of %d objects reusable, %d symbols '
              'differ)' % (other, reused, len(deps), len(diff)),
              file=sys.stderr)
        key = (reused, -len(diff))
        if best is None or key > best[0]:
            best = (key, other, reused, len(deps), len(diff))
    return best[1:] if best else None
