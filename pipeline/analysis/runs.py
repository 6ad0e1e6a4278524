"""Reading the results.json files of runs: one run, or a set of them.

A set is a results directory as a checkout has it (results/<variant>/),
a CI download (results-<variant>/), or one variant's directory. Every
stage that reads runs (summary, compare, skips, report, the rerun
selection) reads them here, so they refuse the same bad input with the
same words.

Python 3.11 standard library only (Debian 12).
"""

import json
import os

from .. import Fail

# how a reader without results learns where they come from
NO_RUNS = (' (a variant has results once make test-variant VARIANT=<it> '
           'has run)')


def load(path: str, hint: str = '') -> dict:
    """One results.json (PATH, or PATH/results.json for a directory); Fail
    when it cannot be read, the message ending with HINT."""
    if os.path.isdir(path):
        path = os.path.join(path, 'results.json')
    try:
        with open(path, encoding='utf-8') as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Fail('cannot read %s: %s%s' % (path, e, hint)) from None


def load_set(path: str, hint: str = '') -> dict[str, dict]:
    """{variant: results} of the runs under PATH, by the variant name in
    each results.json (a CI download's directories are not named after
    it); Fail on no runs, one that cannot be read, or a variant twice.
    HINT ends the message for no runs."""
    if not os.path.isdir(path):
        raise Fail('%s is not a directory of results' % path)
    if os.path.isfile(os.path.join(path, 'results.json')):
        files = [os.path.join(path, 'results.json')]
    else:
        files = [os.path.join(path, d, 'results.json')
                 for d in sorted(os.listdir(path))
                 if os.path.isfile(os.path.join(path, d, 'results.json'))]
    if not files:
        raise Fail('no results.json in %s or its subdirectories%s'
                   % (path, hint))
    out: dict[str, dict] = {}
    for f in files:
        r = load(f)
        try:
            name = r['variant']
        except (KeyError, TypeError) as e:
            raise Fail('cannot read %s: %s' % (f, e)) from None
        if name in out:
            raise Fail('%s: variant %s is in %s twice' % (f, name, path))
        out[name] = r
    return out
