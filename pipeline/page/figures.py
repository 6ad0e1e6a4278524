"""The figures of a run the page draws as charts: the series' benchmarks
as the guest tests print them ("# metric: name=value" in their KTAP, a
test's metrics in results.json) and each variant's boot time.

A figure is "chart|series": CHARTS names each chart and the metrics it
shows (a pattern over metric names, its group the series' suffix), so a
new benchmark that prints a metric of one of these names is charted with
no change here. Instruction budgets (metrics named *_insns or
*_instructions) get their chart when a test prints one.

Python 3.11 standard library only (Debian 12).
"""

import dataclasses
import re

BOOT = 'boot to READY, s'


@dataclasses.dataclass(frozen=True)
class ChartSpec:
    title: str
    pattern: str        # over metric names; group 1 names the series
    unit: str


CHARTS = (
    ChartSpec('UMCG/futex ratio',
              r'umcg_futex_ratio_(1cpu|2cpu|shared|shared8)',
              'UMCG switch time / futex switch time (below 1: UMCG faster)'),
    ChartSpec('UMCG/pipe ratio', r'umcg_pipe_ratio_(1cpu|2cpu|shared|shared8)',
              'UMCG switch time / pipe switch time'),
    ChartSpec('isolation: getppid cost ratio',
              r'getppid_ratio_(active|deactivated)',
              'getppid time / never-isolated getppid time'),
    ChartSpec('isolation: vmstat updates on the housekeeping CPU',
              r'housekeeping_vmstat_update_(not_quiesced|quiesced)',
              'vmstat_update runs during the long syscalls'),
    ChartSpec('isolation: stat refresh on the isolated CPU, ms',
              r'isolated_stat_refresh_ms_(not_quiesced|quiesced)', 'ms'),
    ChartSpec('instruction budgets', r'(\w+)_(?:insns|instructions)',
              'instructions'),
    ChartSpec(BOOT, '', 'guest uptime at READY, s'),
)

# how a series' suffix reads (the benchmark's placements)
PLACES = {'1cpu': 'pinned', '2cpu': '2 CPUs', 'shared': 'shared',
          'shared8': 'shared, 8 workers', 'not_quiesced': 'not quiesced',
          'quiesced': 'quiesced'}


def key(chart: str, series: str) -> str:
    return '%s|%s' % (chart, series)


def split(k: str) -> tuple[str, str]:
    chart, _, series = k.partition('|')
    return chart, series


def number(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) \
        else None


def of_run(sets: dict[str, dict]) -> dict[str, float]:
    """{chart|series: value} of a run, SETS {variant: results.json}."""
    out: dict[str, float] = {}
    specs = [(c, re.compile(c.pattern + '$')) for c in CHARTS if c.pattern]
    for v in sorted(sets):
        res = sets[v]
        boot = number((res.get('boot') or {}).get('ready_uptime_s'))
        if boot is not None:
            out[key(BOOT, v)] = boot
        for t in res.get('tests') or []:
            for name, value in (t.get('metrics') or {}).items():
                if number(value) is None:
                    continue
                for spec, rx in specs:
                    m = rx.match(name)
                    if m:
                        series = '%s %s' % (v, PLACES.get(m.group(1),
                                                          m.group(1)))
                        out.setdefault(key(spec.title, series), value)
    return out


def unit_of(title: str) -> str:
    return next((c.unit for c in CHARTS if c.title == title), '')


def titles() -> list[str]:
    return [c.title for c in CHARTS]
