"""python3 -m pipeline SUBCOMMAND: the command line (pipeline/cli/)."""
import sys

from .cli import main

sys.exit(main())
