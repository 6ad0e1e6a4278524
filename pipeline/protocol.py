"""The harness's own lines of a console log, `@@@ HARNESS NAME ...`
(expect-scripts/PROTOCOL.md): their one definition. Two drivers write
them, expect-scripts/boot-and-test.exp (a QEMU boot) and pipeline/
machine.py (kernel-pipeline-tests on a machine), and the parser
(results/markers.py) reads them; machine.py makes its lines with line(),
and tests hold both drivers' logs to check() (tests/unit/test_machine.py,
tests/tooling/harness-fake.bats).

Python 3.11 standard library only (Debian 12).
"""

import re

PREFIX = '@@@ HARNESS '

# NAME: the key=value fields it has, in order; None: free text after the
# name (a reason, a command line).
LINES: dict[str, tuple[str, ...] | None] = {
    'START': ('variant', 'date'),
    'ACCEL': None,
    'QEMU': None,
    'READY-SEEN': ('elapsed',),
    'SEND': None,
    'SUITE-DONE': ('suite', 'elapsed'),
    'BOOT-TIMEOUT': ('after',),
    'SUITE-TIMEOUT': ('suite', 'after'),
    'SILENCE': ('after',),
    'FINAL-TIMEOUT': ('after',),
    'POWEROFF-TIMEOUT': ('after',),
    'INTERRUPTED': ('signal',),
    'PANIC': (),
    'QEMU-EXIT': ('status',),
    'END': ('elapsed',),
    'NO-KERNEL-LOG': None,
}

# the lines kept as events in results.json
EVENTS = ('BOOT-TIMEOUT', 'SUITE-TIMEOUT', 'SILENCE', 'PANIC',
          'FINAL-TIMEOUT', 'POWEROFF-TIMEOUT', 'INTERRUPTED', 'QEMU-EXIT',
          'SUITE-DONE', 'END', 'READY-SEEN', 'NO-KERNEL-LOG')

_FIELD_RE = re.compile(r'^([\w.-]+)=(\S*)$')


def text(name: str, free: str = '', **fields) -> str:
    """The text after PREFIX of the line NAME: its FIELDS in the order
    LINES gives them, or FREE text; ValueError when they are not NAME's."""
    keys = LINES[name]
    if keys is None:
        if fields:
            raise ValueError('%s takes text, not fields' % name)
        return ('%s %s' % (name, free)).rstrip()
    if free or set(fields) != set(keys):
        raise ValueError('%s takes the fields %s' % (name, ' '.join(keys)))
    return ' '.join([name] + ['%s=%s' % (k, fields[k]) for k in keys])


def check(line: str) -> str | None:
    """What is wrong with harness line LINE (None: it is one LINES
    defines, with its fields)."""
    if not line.startswith(PREFIX):
        return 'not a harness line: %r' % line
    name, _, rest = line[len(PREFIX):].partition(' ')
    if name not in LINES:
        return 'no harness line %s: %r' % (name, line)
    keys = LINES[name]
    if keys is None:
        return None
    got = [(m.group(1) if m else None)
           for m in map(_FIELD_RE.match, rest.split())]
    if got != list(keys):
        return '%s wants the fields %s: %r' % (name, ' '.join(keys) or
                                               'none', line)
    return None
