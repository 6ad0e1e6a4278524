"""kernel-pipeline's Python code: one module per concept.

    ktap.py      the one KTAP / TAP 13 parser, flat and nested output alike
    testsel.py   TESTS: which suites, programs and tests a run selects
    results/     a boot's console log -> its results and exit class:
                 console splitting, kernel reports and their patterns, the
                 marker state machine, each program's results, the verdict
                 with every class rule, and the writers (results.json,
                 junit.xml, <suite>.ktap)
    analysis/    what runs say together: the summary and its regressions
                 against pristine, compare, skips and LOST tests, the rerun
                 selection and the report, with one test identity
    cli.py       the one command line, `python3 -m pipeline SUBCOMMAND`

The Makefile calls the command line; the entry points in scripts/ (each
answers --help) import this package from the checkout's top directory,
which is mounted at the same path in the container. Python 3.11 standard library only
(Debian 12).
"""


class Fail(Exception):
    """A problem the user can fix: printed as 'PROG: error: MESSAGE', exit 2
    (scripts/entry.py)."""
