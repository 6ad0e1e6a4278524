"""What changed between two sets of results (make compare A=... B=...).

Per variant and test: new failures (failing in B, not in A), fixed tests,
other status changes and tests run in only one of them; the exit class,
kernel problems, boot time and every numeric metric the tests printed
("# metric: name=value") side by side with their ratio. Only what the two
runs recorded is compared; a metric change is shown, never judged (one
run is no benchmark). Which test is which in A and B, and whether a
failure is new, is pipeline/analysis/identity.py's one rule, the one the
summary judges pristine by.

A run with knobs or KERNEL_TREE, NAME-knobs-HASH, that only one set
has is compared with the other set's NAME: the variant it was run from.

A test that passed in A and is skipped or absent in B is LOST
(pipeline/analysis/skips.py). A benchmark that ran is bench, not pass:
the two are one good outcome here, so results from before benchmarks were
declared (pass) compare with newer ones (bench) without a change.

Python 3.11 standard library only (Debian 12).
"""

import dataclasses
import enum
import re

from .. import Fail, classes
from ..models import BAD, GOOD
from . import runs, skips
from .identity import Pairing

# the name of a run with knobs (pipeline/knobs.py derive())
RUN_RE = re.compile(r'(.+)-knobs-[0-9a-f]{8}')


@dataclasses.dataclass
class Tally:
    """The changes that count, per variant and over the sets."""
    new: int = 0
    fixed: int = 0
    changed: int = 0
    lost: int = 0

    def add(self, other: 'Tally') -> None:
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) +
                    getattr(other, f.name))


class Change(enum.Enum):
    """How one test changed from A to B: its label in the listing."""
    NEW_FAILURE = 'NEW FAILURE'
    LOST = 'LOST'
    LOST_OK = 'lost, ok'
    FIXED = 'FIXED'
    ONLY_A = 'only in A'
    ONLY_B = 'only in B'
    CHANGED = 'CHANGED'


@dataclasses.dataclass
class VariantDiff:
    lines: list[str]
    regressed: bool
    tally: Tally


def num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) \
        else None


def fmt(v) -> str:
    if isinstance(v, float):
        return '%.4g' % v
    return str(v)


def change(a, b) -> str:
    """'a -> b (+d, xr)' for two numbers."""
    text = '%s -> %s' % (fmt(a), fmt(b))
    if a is None or b is None:
        return text
    d = b - a
    text += ' (%s%s' % ('+' if d >= 0 else '', fmt(round(d, 6)))
    if a:
        text += ', x%.3f' % (b / a)
    return text + ')'


def metrics(r: dict) -> dict:
    out = {}
    for t in r.get('tests') or []:
        for k, v in (t.get('metrics') or {}).items():
            if num(v) is not None:
                out[(t['id'], k)] = v
    return out


def kinds(r: dict) -> dict:
    out: dict[str, int] = {}
    for p in r.get('kernel_problems') or []:
        out[p['kind']] = out.get(p['kind'], 0) + 1
    return out


def _kind_of(sa, sb, was, lost_why) -> Change | None:
    """The change of one test: SA and SB its statuses in A and B (None:
    not there), WAS what A says of B's result by the one rule, LOST_WHY
    None when it is not LOST, else the accepted reason or ''."""
    if lost_why is not None:
        return Change.LOST_OK if lost_why else Change.LOST
    if sb in BAD and was not in BAD:
        return Change.NEW_FAILURE
    if sa in BAD and sb in GOOD:
        return Change.FIXED
    if sb is None:
        return Change.ONLY_A
    if sa is None:
        return Change.ONLY_B
    return Change.CHANGED


def compare_variant(a: dict, b: dict, rules=()) -> VariantDiff:
    """The changes of one variant in both sets."""
    lines = []
    ca, cb = classes.recorded(a), classes.recorded(b)
    worse = classes.worse(ca, cb)
    lines.append('   class %d %s -> %d %s%s' % (
        ca, a.get('exit_class_name', ''), cb, b.get('exit_class_name', ''),
        '   WORSE' if worse else '   better' if classes.worse(cb, ca) else ''))
    ba = num((a.get('boot') or {}).get('ready_uptime_s'))
    bb = num((b.get('boot') or {}).get('ready_uptime_s'))
    if ba is not None or bb is not None:
        lines.append('   boot to READY (guest uptime, s): %s' % change(ba, bb))
    ka, kb = kinds(a), kinds(b)
    new_kinds = {k: n for k, n in kb.items() if n > ka.get(k, 0)}
    if new_kinds:
        for k, n in sorted(new_kinds.items()):
            first = next(p['first_line'] for p in b['kernel_problems']
                         if p['kind'] == k)
            lines.append('   NEW KERNEL PROBLEM  %s: %d -> %d (%s)' % (
                k, ka.get(k, 0), n, first))
    for k in sorted(set(ka) - set(kb)):
        lines.append('   kernel problem gone  %s: %d -> 0' % (k, ka[k]))
    ta, tb = a.get('tests') or [], b.get('tests') or []
    pairs = Pairing(ta, tb)
    # absent in B counts only where B meant to run it (its plan: a rerun
    # of a few tests loses nothing it did not select)
    lost = {x.id for x in skips.lost(ta, tb, skips.planned_in(b))}
    # (A's tests in their order, each with its B, then B's own)
    seen: dict[str, dict] = {}
    both = []
    for t in ta:
        if t['id'] in seen:
            continue
        seen[t['id']] = t
        same = pairs.in_now(t)
        both.append((t, same))
    paired = {id(s) for _, s in both if s is not None}
    both += [(None, t) for t in tb if id(t) not in paired and
             t['id'] not in seen]
    n = Tally()
    rows = []
    for ta_t, tb_t in both:
        sa = ta_t['status'] if ta_t else None
        sb = tb_t['status'] if tb_t else None
        if sa == sb or (sa in GOOD and sb in GOOD):
            continue
        tid = ta_t['id'] if ta_t else tb_t['id']
        if ta_t and tb_t and tb_t['id'] != tid:
            tid = '%s (in B: %s)' % (tid, tb_t['id'])
        why = None
        if ta_t and ta_t['id'] in lost:
            why = skips.accepted(rules, ta_t['id']) or ''
        what = _kind_of(sa, sb, sa if ta_t else pairs.was(tb_t), why)
        if what is Change.LOST_OK:
            sb = '%s  (accepted: %s)' % (sb or '-', why)
        elif what is Change.LOST:
            n.lost += 1
            if tb_t and tb_t.get('skip_reason'):
                sb = '%s  (%s)' % (sb, tb_t['skip_reason'])
        elif what is Change.NEW_FAILURE:
            n.new += 1
        elif what is Change.FIXED:
            n.fixed += 1
        elif what is Change.CHANGED:
            n.changed += 1
        rows.append('   %-12s %s: %s -> %s%s' % (
            what.value, tid, sa or '-', sb or '-',
            '  (%s)' % tb_t['note'] if tb_t and tb_t['status'] in BAD and
            tb_t.get('note') else ''))
    rows.sort(key=lambda r: (0 if r.startswith('   NEW') else
                             1 if r.startswith('   LOST') else 2, r))
    lines.extend(rows)
    regressed = classes.regressed(ca, cb, n.new, n.lost, len(new_kinds))
    ma, mb = metrics(a), metrics(b)
    for key in sorted(set(ma) | set(mb)):
        va, vb = ma.get(key), mb.get(key)
        if va != vb:
            lines.append('   metric %s %s: %s' % (key[0], key[1],
                                                 change(va, vb)))
    return VariantDiff(lines, regressed, n)


def run_base(name: str) -> str | None:
    """NAME of a run variant NAME-knobs-HASH (pipeline/knobs.py), else
    None."""
    m = RUN_RE.fullmatch(name)
    return m.group(1) if m else None


def compare(path_a: str, path_b: str, want: list[str] = (),
            rules: list[skips.Rule] = ()) -> tuple[list[str], list[str]]:
    """(lines, regressed variants) between the sets at PATH_A and PATH_B,
    for the variants WANT (none: all)."""
    sa, sb = runs.load_set(path_a), runs.load_set(path_b)
    names = list(dict.fromkeys(list(sa) + list(sb)))
    if want:
        for v in want:
            if v not in sa and v not in sb:
                raise Fail('variant %s is in neither %s nor %s' % (
                    v, path_a, path_b))
        # (a variant's runs with knobs come with it)
        names = [v for v in names if v in want or run_base(v) in want]
    out = ['compare: A=%s (%d variants)  B=%s (%d variants)' % (
        path_a, len(sa), path_b, len(sb))]
    bad = []
    total = Tally()
    # A run with knobs or KERNEL_TREE (NAME-knobs-HASH, pipeline/knobs.py)
    # that one set has and the other not is compared with the other's
    # NAME: what the knobs, or the tree, changed against the variant.
    paired = {run_base(v) for v in names if v in sb and v not in sa
              and run_base(v) in sa} | \
        {run_base(v) for v in names if v in sa and v not in sb
         and run_base(v) in sb}
    for v in names:
        a = b = v
        label = v
        if v not in sb and run_base(v) in sb:
            b = run_base(v)
            label = '%s (against %s of A)' % (b, v)
        elif v not in sa and run_base(v) in sa:
            a = run_base(v)
            label = '%s (against %s of A)' % (v, a)
        elif (v not in sa or v not in sb) and v in paired:
            continue
        if b not in sb:
            out.append('== %s: in A only: no result in B   REGRESSED' % v)
            bad.append(v)
            continue
        if a not in sa:
            out.append('== %s: in B only (class %s)' % (
                v, sb[v].get('exit_class')))
            continue
        d = compare_variant(sa[a], sb[b], rules)
        total.add(d.tally)
        out.append('== %s%s' % (label, '   REGRESSED' if d.regressed
                                else ''))
        out.extend(d.lines)
        if d.regressed:
            bad.append(b)
    out.append('compare: %s; %d new failures, %d lost, %d fixed, %d other '
               'status changes' % ('regressed: ' + ' '.join(bad) if bad else
                                   'no regression', total.new, total.lost,
                                   total.fixed, total.changed))
    return out, bad


def main(path_a: str, path_b: str, want: list[str],
         accepted: str | None = None) -> int:
    """Print the comparison; 1 when B regressed."""
    rules = skips.load_accepted(accepted)
    out, bad = compare(path_a, path_b, want, rules)
    for line in out:
        print(line)
    return classes.compare_status(bad)
