"""python3 -m pipeline SUBCOMMAND: the command line (pipeline/cli.py)."""
import sys

from .cli import main

sys.exit(main())
