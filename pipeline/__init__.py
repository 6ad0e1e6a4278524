"""kernel-pipeline's Python code: one module per concept.

    config.py    the one reader of variants and suites
    params.py    the parameters' table (defaults, meanings, parsers) and the
                 kselftest targets
    series.py    the one reader of the patch series
    artifacts.py the artifact contract and the one "is this kernel current"
                 rule
    describe.py  the writers of kernel.json and variant.json
    manifest.py  the build record of manifest.json
    build.py     the build side's decisions: the config check
    donor.py     the object directory a new kernel build starts from
    boot.py      a boot planned from variant.json: QEMU's arguments, the
                 accelerators, the rootfs, the plan
    ktap.py      the one KTAP / TAP 13 parser, flat and nested output alike
    testsel.py   TESTS: which suites, programs and tests a run selects
    results/     a boot's console log -> its results and exit class:
                 console splitting, kernel reports and their patterns, the
                 marker state machine, each program's results, the verdict
                 with every class rule, the writers (results.json,
                 junit.xml, <suite>.ktap) and symbolize (reports to
                 file:line)
    analysis/    what runs say together: the summary and its regressions
                 against pristine, compare, skips and LOST tests, the rerun
                 selection and the report, with one test identity
    cli/         the one command line, `python3 -m pipeline SUBCOMMAND`: the
                 top layer; a subcommand group whose module holds only
                 domain logic has its Command here (cli/config.py,
                 cli/artifacts.py, cli/build.py), and no module below
                 imports cli

The Makefile, the shell steps, CI and the tests call the command line,
scripts/pipeline, which imports this package from the checkout's top
directory, mounted at the same path in the container. Python 3.11
standard library only (Debian 12).
"""


class Fail(Exception):
    """A problem the user can fix: printed as 'PROG: error: MESSAGE', exit 2
    (scripts/entry.py)."""


def sha256(path):
    """The sha256 of a file's bytes, as sha256sum prints it: the one hash
    of the artifact contract (kernel.json, variant.json, the manifest and
    SHA256SUMS) and of the series."""
    import hashlib
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            h.update(block)
    return h.hexdigest()


def top():
    """The checkout's top directory (TOP names another): the one place
    the package computes it."""
    import os
    return os.environ.get('TOP') or os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))


def rel_to_top(path):
    """PATH relative to the checkout when it is inside it."""
    import os
    try:
        rel = os.path.relpath(path, top())
    except ValueError:
        return path
    return path if rel.startswith('..') else rel


def kernel_pin():
    """(package, version) of the kernel source pin, the first line of
    scripts/deps/kernel-source.txt in apt's package=version syntax: the
    package's one reader of it (scripts/lib.sh's kernel_pin is the
    shell's)."""
    import os
    path = os.path.join(top(), 'scripts', 'deps', 'kernel-source.txt')
    try:
        with open(path, encoding='utf-8') as f:
            for line in f:
                line = line.split('#', 1)[0].strip()
                if line:
                    package, _, version = line.split()[0].partition('=')
                    return package, version
    except OSError as e:
        raise Fail('cannot read the kernel pin: %s' % e) from None
    raise Fail('no kernel source package pinned in %s' % path)
