"""A step's error, handed to its caller as JSON, not as a line of text:
the step that fails (scripts/step-error.sh's die, the pipeline's
guard()) writes {"error": MESSAGE, "by": PROG} to the file $STEP_ERROR
names, and the caller (scripts/test-variant) reads it back with read()
(scripts/pipeline step-error): a message of several lines, or one that
quotes another tool's "error: ...", arrives whole. The last step to fail writes last, as
the innermost error is said first and the step's own last.
"""

import json
import os

ENV = 'STEP_ERROR'


def write(message: str, by: str) -> None:
    """MESSAGE into $STEP_ERROR, when the caller named one (never fails
    the step: its own message is on stderr already)."""
    path = os.environ.get(ENV)
    if not path:
        return
    try:
        with open(path, 'w', encoding='utf-8') as f:
            json.dump({'error': message, 'by': by}, f)
            f.write('\n')
    except OSError:
        pass


def read(path: str) -> str:
    """The error in PATH; '' when there is none (no file, or not one)."""
    try:
        with open(path, encoding='utf-8') as f:
            e = json.load(f).get('error')
    except (OSError, ValueError, AttributeError):
        return ''
    return e if isinstance(e, str) else ''
