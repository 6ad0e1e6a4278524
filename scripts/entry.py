"""The common frame of the Python entry point in scripts/ (scripts/pipeline;
every Python stage is one of its subcommands).

The exit statuses of the pipeline (README) give 1 the meaning "a test
failed". Python itself exits 1 on an uncaught exception, which would turn a
bug or a bad input into a test failure; run() makes every such end an
infrastructure error (2) with a message instead (pipeline/cli/).
Expected problems (bad input, a missing file) are raised as pipeline.Fail
and printed without a traceback.
"""

import os
import sys

# The pipeline package is in the checkout's top directory, one up from
# scripts/ (in the container too: the checkout is mounted at its own
# path). Every entry point imports this module before the package.
sys.path.insert(1, os.path.dirname(os.path.dirname(
    os.path.realpath(__file__))))
from pipeline.cli import guard  # noqa: E402


def run(main, prog):
    """sys.exit(main(argv)), with every abnormal end mapped to exit 2
    (pipeline/cli's guard(), the frame of `python3 -m pipeline` too)."""
    sys.exit(guard(main, sys.argv[1:], prog))
