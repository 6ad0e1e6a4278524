"""A run's results for people, one line per test (make test-variant ends
with it; `python3 -m pipeline report results/<variant>` prints it again;
what each line says: `python3 -m pipeline report --help`).

Python 3.11 standard library only (Debian 12).
"""

import enum
import os
import sys

from ..models import GOOD, Status
from . import runs

TEST_LINES = 30         # the end of a failing test's output
REPORT_LINES = 60       # of one kernel report


class Word(enum.Enum):
    """A line's tag."""
    PASS = 'PASS'
    BENCH = 'BENCH'
    FAIL = 'FAIL'
    SKIP = 'SKIP'
    CRASH = 'CRASH'
    ERROR = 'ERROR'


# each tag's colour (SGR); FAIL and ERROR share theirs, so it cannot be
# the enum's value (two members with one value are one member)
COLORS = {Word.PASS: '32', Word.BENCH: '36', Word.FAIL: '1;31',
          Word.SKIP: '33', Word.CRASH: '1;35', Word.ERROR: '1;31'}


def use_color(mode: str, stream) -> bool:
    """Colours only on a terminal, never with NO_COLOR set
    (https://no-color.org) or TERM=dumb, unless MODE is 'always'."""
    if mode != 'auto':
        return mode == 'always'
    if os.environ.get('NO_COLOR') or os.environ.get('TERM') == 'dumb':
        return False
    return stream.isatty()


def tag(word: Word, color: bool) -> str:
    text = '[%s]' % word.name
    if color:
        return '\x1b[%sm%s\x1b[0m' % (COLORS[word], text)
    return text


def excerpt(text: str | None, limit: int, where: str) -> list[str]:
    lines = [ln.rstrip() for ln in (text or '').split('\n')]
    while lines and not lines[-1]:
        lines.pop()
    out = []
    if len(lines) > limit:
        out.append('        | [... %d earlier lines: %s]' % (
            len(lines) - limit, where))
        lines = lines[-limit:]
    out.extend('        | ' + ln for ln in lines)
    return out


def word_of(t: dict) -> Word:
    if t['status'] == Status.PASS:
        return Word.PASS
    if t['status'] == Status.BENCH:
        return Word.BENCH
    if t['status'] == Status.SKIP:
        return Word.SKIP
    if t.get('explained_by'):
        return Word.CRASH
    return Word.FAIL


def detail(t: dict) -> str:
    bits = []
    if isinstance(t.get('duration_ms'), (int, float)):
        bits.append('%.1fs' % (t['duration_ms'] / 1000.0))
    if t['status'] == Status.SKIP and t.get('skip_reason'):
        bits.append(t['skip_reason'])
    elif t['status'] not in GOOD and t.get('note'):
        bits.append(t['note'])
    metrics = t.get('metrics') or {}
    if metrics:
        bits.append(' '.join('%s=%s' % kv for kv in list(metrics.items())[:4]))
    return '  '.join(bits)


BAD_WORDS = (Word.FAIL, Word.CRASH)


def render(res: dict, path: str, color: bool,
           failures: bool = False) -> list[str]:
    """The report's lines; with FAILURES only what went wrong: the
    [FAIL], [CRASH] and [ERROR] lines and the output under them."""
    out = []
    tests = res.get('tests') or []
    width = min(60, max([len(t['id']) for t in tests] + [10]))
    for t in tests:
        word = word_of(t)
        if failures and word not in BAD_WORDS:
            continue
        pad = ' ' * (7 - len('[%s]' % word.name))
        line = '%s%s %-*s  %s' % (tag(word, color), pad, width, t['id'],
                                  detail(t))
        out.append(line.rstrip())
        if word in BAD_WORDS:
            out.extend(excerpt(t.get('decoded') or t.get('excerpt'),
                               TEST_LINES,
                               '%s, test %s' % (path, t['id'])))
    for p in res.get('kernel_problems') or []:
        during = ' during %s' % p['during'] if p.get('during') else ''
        out.append('%s kernel %s%s (console.log line %s): %s' % (
            tag(Word.CRASH, color), p['kind'], during, p.get('line'),
            p['first_line']))
        text = p.get('decoded') or p.get('excerpt')
        out.extend(excerpt(text, REPORT_LINES, path))
    sym = res.get('symbolized')
    if sym and sym.get('error') and not failures:
        out.append('        (not decoded to file:line: %s)' % sym['error'])
    for r in res.get('reasons') or []:
        if r['class'] == 2:
            out.append('%s %s' % (tag(Word.ERROR, color), r['reason']))
    return out


def main(path: str, color_mode: str, failures: bool = False,
         stream=None) -> int:
    """Print the report of the run at PATH (a directory or its
    results.json) on STREAM (default stdout); FAILURES: only what went
    wrong."""
    stream = stream or sys.stdout
    if os.path.isdir(path):
        path = os.path.join(path, 'results.json')
    res = runs.load(path, runs.NO_RUNS)
    for line in render(res, path, use_color(color_mode, stream), failures):
        print(line, file=stream)
    return 0
