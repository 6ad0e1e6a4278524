"""What the runs say together: the summary of a matrix with its
regressions against pristine, the comparison of two result sets, the
skips and LOST tests, what to run again, and the report for people.
They read results.json files and share one test identity and one list
of bad outcomes (pipeline.models.BAD, GOOD).

    identity.py   one rule for "the same test" in two runs, and what a
                  failed result stands for
    runs.py       reading results.json: one run, or a set of them
    skips.py      skips by reason; LOST tests; configs/accepted-skips.txt
    summary.py    summary.json, the table, regressions against pristine
    compare.py    what changed from one result set to another
    selection.py  what to run again to repeat what failed
    report.py     one line per test, for people
    commands.py   their subcommands of `python3 -m pipeline`

Python 3.11 standard library only (Debian 12).
"""
