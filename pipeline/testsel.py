"""TESTS: which suites, programs and tests a run selects.

TESTS is a space-separated list of globs over the test ids of results.json,
"suite/program/test". A glob is matched one component at a time, so a '*'
never crosses a '/', and a glob with fewer components selects everything
below them:

    umcg                      the whole umcg suite
    umcg/switch*              every umcg program whose name starts with switch
    umcg/*/global.timeout*    those tests of every umcg program

The guest's run-suite (guest-tests/runner/run-suite) does the same matching
in sh, one program at a time; the tooling tests hold the two to the same
answers. Selecting tests inside a program uses the kselftest harness's own
`-r fixture[.variant].test`; a program without that harness runs whole.

Python 3.11 standard library only (Debian 12).
"""

import fnmatch
import re

from . import Fail

# What a glob may contain: it travels through make, podman, expect and the
# guest shell (single-quoted there), so no quotes, spaces, backslashes or $.
GLOB_RE = re.compile(r'[A-Za-z0-9_.*?\[\]!/:,+=@#%~-]+')
META = '*?['


def parse(text):
    """The globs of a TESTS value; exit 2 naming a bad one."""
    globs = (text or '').split()
    for g in globs:
        if not GLOB_RE.fullmatch(g):
            raise Fail("TESTS: '%s' has a character a test glob cannot have "
                       "(use letters, digits and _ . * ? [ ] ! / : , + = @ "
                       "# %% ~ -)" % g)
        if g.startswith('/') or '//' in g or g.endswith('/'):
            raise Fail("TESTS: '%s' has an empty component: write "
                       "suite/program/test" % g)
    return globs


def split(glob):
    """(suite, program or None, test or None) parts of a glob; the test
    part is everything after the second '/'."""
    parts = glob.split('/', 2)
    return tuple(parts) + (None,) * (3 - len(parts))


def _m(name, pattern):
    return pattern is None or fnmatch.fnmatchcase(name, pattern)


def matches(glob, suite, program=None, test=None):
    """Whether GLOB selects suite[/program[/test]]: True, False, or None
    when the answer needs a part that was not given (the program or test
    name)."""
    gs, gp, gt = split(glob)
    if not _m(suite, gs):
        return False
    if gp is None:
        return True
    if program is None:
        return None
    if not _m(program, gp):
        return False
    if gt is None:
        return True
    if test is None:
        return None
    # a glob below the test (a nested kselftest result) selects the test:
    # the kernel's runner runs a program whole
    return _m(test, gt.split('/')[0])


def selects(globs, suite, program=None, test=None):
    """Whether any glob selects it (None: not known without the parts that
    were not given); no globs select everything."""
    if not globs:
        return True
    answers = [matches(g, suite, program, test) for g in globs]
    if True in answers:
        return True
    if None in answers:
        return None
    return False


def suites(own, others, globs):
    """The suites a run with GLOBS needs, from a variant's OWN suites and
    the OTHERS of its initramfs (the all_variants ones): a glob's suite
    part that is a plain name reaches any of them; a wildcard ranges over
    OWN only, so TESTS='*' never runs the harness's crash self-tests."""
    cands = list(own)
    for g in globs:
        name = split(g)[0]
        if not has_meta(name) and name in others and name not in cands:
            cands.append(name)
    return [s for s in cands if selects(globs, s) is not False]


def has_meta(text):
    return any(c in text for c in META)


def escape(name):
    """A name as a glob that matches only itself (sh case and fnmatch both
    read [*] as a literal *)."""
    return ''.join('[%s]' % c if c in META else c for c in name)


def id_glob(*parts):
    """The glob of exactly one id: suite[/program[/test]]."""
    return '/'.join(escape(p) for p in parts)


# The usage text kselftest_harness.h compiles into every program, and the
# line scripts/kselftest-suite writes into each target's program: how a
# program's tests are listed (run-suite, in the guest, knows them the same
# way).
HARNESS_USAGE = b'[-t|-T|-v|-V|-f|-F|-r name]'
KSELFTEST_LINE_RE = re.compile(
    rb'^# kselftest target .* \(scripts/kselftest-suite\)$', re.M)


def harness_tests(text):
    """fixture[.variant].test ids from a kselftest_harness program's "-l"
    table ("%-20s %-25s %s"; fixture and variant blank on continuation
    rows, a fixture's variants and tests listed side by side: every pairing
    is a test). The same rules as run-suite's harness_tests()."""
    out = []
    fx, vs, ts = None, [], []

    def flush():
        if fx is None:
            return
        for v in vs or [None]:
            for t in ts:
                out.append('.'.join(x for x in (fx, v, t) if x))

    for line in text.splitlines():
        if line.startswith('# FIXTURE') or line.startswith('---'):
            continue
        pos = 0
        fields = []
        for width in (20, 25):
            if pos >= len(line) or line[pos] == ' ':
                fields.append('')
                pos += width + 1
            else:
                tok = line[pos:].split(' ')[0]
                fields.append(tok)
                pos += max(len(tok), width) + 1
        name = line[pos:].rstrip()
        if fields[0]:
            flush()
            fx, vs, ts = fields[0], [], []
        if fields[1]:
            vs.append(fields[1])
        if name:
            ts.append(name)
    flush()
    return out


# runner.sh's name for a program's result: "selftests: <dir>: <program>"
RUNNER_NAME_RE = re.compile(r'^selftests:\s+\S+:\s+(.+)$')
# results that stand for the whole program they are in, not a test of it
PROGRAM_RESULTS = ('missing-results', 'exit-status')


def test_part(name):
    """The test a result is of, as a TESTS glob names it: a kselftest
    runner's flat 'selftests: T: name' is name; a nested 'name/sub' is
    name; a repeated 'name#2' is name."""
    m = RUNNER_NAME_RE.match(name)
    if m:
        name = m.group(1)
    return name.split('/')[0].split('#')[0]
