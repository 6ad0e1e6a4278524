"""kernel-pipeline's Python code: one module per concept.

    config.py    the one reader of variants, suites, kselftest targets and
                 the series
    artifacts.py the artifact contract and the one "is this kernel current"
                 rule
    manifest.py  manifest.json and SHA256SUMS, the record of a build
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
    cli.py       the one command line, `python3 -m pipeline SUBCOMMAND`

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
