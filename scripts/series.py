"""The one reader of patches/series.

The series file names one patch per line (its first word; quilt's options
after it are ignored), '#' starts a comment line, blank lines are skipped.
An absent or empty series is valid: it builds the pristine source.
prepare-source, series-check, patches-export and manifest all read the
series through this module (the `series` command in bash), so they cannot
disagree about which patches it holds.
"""

import hashlib
import os

from entry import Fail


def patches_dir():
    top = os.environ.get('TOP') or os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    return os.environ.get('PATCHES') or os.path.join(top, 'patches')


def sha256(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def names(directory=None):
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


def entries(directory=None):
    """[(name, sha256)] in series order."""
    d = directory or patches_dir()
    return [(n, sha256(os.path.join(d, n))) for n in names(d)]


def series_hash(directory=None):
    """One hash over the series: every patch's name and content, in order
    (the sha256 of the lines "NAME SHA256\\n")."""
    text = ''.join('%s %s\n' % e for e in entries(directory))
    return hashlib.sha256(text.encode()).hexdigest()
