"""kernel-pipeline-tests' command line (the tests package's
/usr/bin/kernel-pipeline-tests runs main()): its arguments and guard()
over pipeline/machine.py, which runs the guest tests on this machine."""

import argparse
import sys
from typing import IO

from pipeline.cli import guard
from pipeline.machine import DOC, ROOT, configure, run


def main(argv: list[str] | None = None, root: str = ROOT,
         stdout: IO[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = stdout or sys.stdout

    def main_(args):
        ap = argparse.ArgumentParser(
            prog='kernel-pipeline-tests', description=DOC.split('\n')[0],
            epilog=DOC.split('\n\n', 1)[1],
            formatter_class=argparse.RawDescriptionHelpFormatter)
        configure(ap)
        return run(ap.parse_args(args), root, out)
    return guard(main_, argv, 'kernel-pipeline-tests')
