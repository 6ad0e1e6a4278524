#!/usr/bin/env python3
"""The instruction profiler's table (insn-profile.tsv, written by
tools/insn-profile/insn_profile.c) as Markdown: per kernel function, the
instructions of one round trip in each chosen window, the functions with
at least --min in some column, the rest summed as one row, and the total.

Window numbers are umcg-bench/switch_bench.c's: 1 + case * 3 + mechanism,
the cases 1cpu, 2cpu, shared, shared8 and the mechanisms futex, pipe,
umcg, in that order.

Python 3.11 standard library only (Debian 12).
"""

from __future__ import annotations

import argparse
import sys

CASES = ('1cpu', '2cpu', 'shared', 'shared8')
MECHS = ('futex', 'pipe', 'umcg')
DEFAULT_COLUMNS = 'umcg_1cpu,futex_1cpu,umcg_shared,futex_shared'


def window_of(name: str) -> int:
    """The window number of a column name MECH_CASE."""
    mech, _, case = name.partition('_')
    if mech not in MECHS or case not in CASES:
        raise ValueError('unknown column %r: MECH_CASE with MECH one of %s '
                         'and CASE one of %s' % (name, ', '.join(MECHS),
                                                 ', '.join(CASES)))
    return 1 + CASES.index(case) * len(MECHS) + MECHS.index(mech)


class Window:
    def __init__(self, runs: int, rounds: int, total: int):
        self.runs, self.rounds, self.total = runs, rounds, total
        self.counts: dict[str, int] = {}


def read(path: str) -> dict[int, Window]:
    windows: dict[int, Window] = {}
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line or line.startswith('#'):
                continue
            w = line.split('\t')
            try:
                if w[0] == 'window' and len(w) == 8:
                    windows[int(w[1])] = Window(int(w[3]), int(w[5]),
                                                int(w[7]))
                elif len(w) == 3:
                    windows[int(w[0])].counts[w[1]] = int(w[2])
                else:
                    raise ValueError('not a line of the table')
            except (ValueError, KeyError) as e:
                raise ValueError('%s:%d: %s: %r' % (path, n, e, line)) \
                    from None
    return windows


def fmt(x: float) -> str:
    return '%.1f' % x if x else '-'


def table(windows: dict[int, Window], columns: list[str],
          least: float) -> list[str]:
    chosen = []
    for c in columns:
        w = windows.get(window_of(c))
        if w is None or not w.rounds:
            raise ValueError('no round trips counted in window %d (%s)' % (
                window_of(c), c))
        chosen.append(w)
    per = {}
    for name in {s for w in chosen for s in w.counts}:
        per[name] = [w.counts.get(name, 0) / w.rounds for w in chosen]
    shown = sorted((n for n in per if max(per[n]) >= least),
                   key=lambda n: (-max(per[n]), n))
    rest = [n for n in per if n not in shown]
    out = ['| function | %s |' % ' | '.join(c.replace('_', ' ')
                                              for c in columns),
           '|---|%s' % ('---:|' * len(columns))]
    for n in shown:
        out.append('| `%s` | %s |' % (n, ' | '.join(fmt(x) for x in per[n])))
    if rest:
        out.append('| %d other functions, each < %g | %s |' % (
            len(rest), least, ' | '.join(
                fmt(sum(per[n][i] for n in rest))
                for i in range(len(columns)))))
    out.append('| **total** | %s |' % ' | '.join(
        '**%.1f**' % (w.total / w.rounds) for w in chosen))
    out.append('| round trips counted (runs) | %s |' % ' | '.join(
        '%d (%d)' % (w.rounds, w.runs) for w in chosen))
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('tsv', help='insn-profile.tsv of a boot')
    ap.add_argument('--columns', default=DEFAULT_COLUMNS,
                    help='windows as MECH_CASE, comma separated '
                    '(default %(default)s)')
    ap.add_argument('--min', type=float, default=10.0, dest='least',
                    help='instructions per round trip a function needs in '
                    'some column to have a row (default %(default)s)')
    a = ap.parse_args(argv)
    try:
        lines = table(read(a.tsv), a.columns.split(','), a.least)
    except (OSError, ValueError) as e:
        print('insn-profile table: %s' % e, file=sys.stderr)
        return 2
    print('\n'.join(lines))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
