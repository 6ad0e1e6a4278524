"""The common frame of every Python entry point in scripts/.

The exit statuses of the pipeline (README) give 1 the meaning "a test
failed". Python itself exits 1 on an uncaught exception, which would turn a
bug or a bad input into a test failure; run() makes every such end an
infrastructure error (2) with a message instead. Expected problems (bad
input, a missing file) are raised as Fail and printed without a traceback.
"""

import os
import sys
import traceback

# The pipeline package is in the checkout's top directory, one up from
# scripts/ (in the container too: the checkout is mounted at its own
# path). Every entry point imports this module before the package.
sys.path.insert(1, os.path.dirname(os.path.dirname(
    os.path.realpath(__file__))))
from pipeline import Fail  # noqa: E402,F401 - scripts raise entry.Fail


def run(main, prog):
    """sys.exit(main(argv)), with every abnormal end mapped to exit 2."""
    try:
        rc = main(sys.argv[1:])
    except Fail as e:
        print('%s: error: %s' % (prog, e), file=sys.stderr)
        rc = 2
    except SystemExit as e:
        # argparse: 0 after --help, 2 on a usage error. sys.exit("text")
        # would exit 1: a message is an error here.
        if isinstance(e.code, str):
            print('%s: error: %s' % (prog, e.code), file=sys.stderr)
            rc = 2
        else:
            rc = e.code or 0
    except KeyboardInterrupt:
        print('%s: interrupted' % prog, file=sys.stderr)
        rc = 2
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): nothing left to say.
        rc = 2
    except Exception as e:  # noqa: BLE001 - the point of this frame
        traceback.print_exc()
        print('%s: error: internal error (%s: %s); this is a bug in %s' % (
            prog, type(e).__name__, e, prog), file=sys.stderr)
        rc = 2
    sys.exit(rc)
