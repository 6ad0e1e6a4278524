#!/usr/bin/python3
"""skips.py: what a run did not test: its skips by reason
(`python3 -m pipeline skips`, whose --help says how; this path stays for
its callers)."""
import os
import sys

# entry.py sits next to this script (resolve a symlinked invocation); it
# makes the pipeline package importable. No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
sys.dont_write_bytecode = True
import entry  # noqa: E402
from pipeline import cli  # noqa: E402

if __name__ == '__main__':
    main = cli.script_main('skips', 'skips')
    entry.run(main, 'skips')
