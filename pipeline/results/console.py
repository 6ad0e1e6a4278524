"""Console splitting: the serial console's text -> logical records.

The console is shared: kernel messages (a printk timestamp at the start)
and user space output (the harness's and the guest's markers, programs'
KTAP) arrive on one line stream and can cut into each other's lines.
split_records() tells them apart and rebuilds what was cut.

Python 3.11 standard library only (Debian 12).
"""

import re

# printk timestamp with PRINTK_TIME: always 6 decimals, which user text
# rarely has; it is how kernel text is told apart from program output.
TS_RE = re.compile(r'\[\s*(\d+\.\d{6})\]')
ANSI_RE = re.compile(r'\x1b(\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>78])')
# control characters except tab, newline and carriage return
CTRL_RE = re.compile(r'[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]')

# The harness's own line, written into the log after a partial guest line
# (the shell's prompt): it starts a record of its own. The guest's markers
# never do: they count only as whole lines at column 0 (guest output that
# holds "@@@" elsewhere is no marker; ktap-run escapes a program's "@@@",
# docs/architecture.md "Markers only their writer can write").
HARNESS_IN_LINE_RE = re.compile(r'@@@ HARNESS \S')


def strip_ts(text):
    """Line without its leading printk timestamp (and CPU/caller id)."""
    m = TS_RE.match(text)
    if not m:
        return text
    rest = text[m.end():]
    rest = re.sub(r'^\[\s*[TC]\d+\]', '', rest)
    return rest.lstrip(' ')


def split_records(text):
    """Physical console lines -> logical records (lineno, 'k'|'u', text).

    'k' is kernel text (starts with a printk timestamp), 'u' everything else
    (markers, KTAP, shell). The serial console is shared, so a kernel
    message can land in the middle of a user line: "ok 1 glo[  5.1] WARN..."
    followed later by "bal.foo". The user part before the timestamp is
    carried and joined with the next user line, which rebuilds "ok 1
    global.foo" and keeps the kernel line whole.
    """
    out = []
    carry = ''
    carry_no = 0

    def flush():
        nonlocal carry
        if carry:
            out.append((carry_no, 'u', carry))
        carry = ''

    for no, raw in enumerate(text.split('\n'), 1):
        # keep '\r' for now: a user prefix ending in '\r' was a whole line
        line = CTRL_RE.sub('', ANSI_RE.sub('', raw))
        m = TS_RE.search(line)
        kern = user = None
        if m and line[:m.start()].replace('\r', '').strip() == '':
            kern = line[m.start():]
        elif m:
            prefix = line[:m.start()]
            if not carry:
                carry_no = no
            carry += prefix.replace('\r', '')
            if prefix.rstrip(' ').endswith('\r'):
                # the user line was complete before the kernel cut in
                flush()
            kern = line[m.start():]
        else:
            user = line
        if kern is not None:
            # (a kernel record is whole: a "@@@" in it, which /dev/kmsg
            # lets any program write, is kernel text, never a marker)
            kern = kern.replace('\r', '')
            out.append((no, 'k', kern))
        if user is not None:
            user = user.replace('\r', '')
            # the harness's line after guest output that had no newline
            # ("guest:/# @@@ HARNESS SEND ..."): it starts its own record
            m2 = HARNESS_IN_LINE_RE.search(user)
            if m2 and m2.start() > 0:
                head, user = user[:m2.start()], user[m2.start():]
                out.append((no, 'u', carry + head))
                carry = ''
            if carry:
                if user.startswith('@@@ '):
                    # markers always start a line: never glue onto them
                    flush()
                else:
                    user = carry + user
                    no = carry_no
                    carry = ''
            out.append((no, 'u', user))
    flush()
    # a trailing newline leaves one empty record: drop it
    if out and out[-1][1] == 'u' and out[-1][2] == '':
        out.pop()
    return out


def read_log(path):
    with open(path, 'rb') as f:
        return f.read().decode('utf-8', 'replace')
