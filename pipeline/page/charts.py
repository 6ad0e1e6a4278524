"""The page's charts: matplotlib (Debian's python3-matplotlib) drawing
SVG text that the page holds inline, so it needs no file and no network
when it is viewed, and its text (titles, labels) stays text in the DOM.

Why matplotlib: Debian packages it (scripts/deps/build.txt for the
container that writes the page at the end of a run, check.txt for the
host: make report-html and the browser test), it draws in the writing
process with no browser and no JavaScript, and its SVG is plain markup
an HTML page can inline. A JavaScript charting library would have to be
vendored from the npm registry into every page and would draw only in a
browser that runs scripts.

Without matplotlib the page is still written, without charts, and says
so (available() is False); the figures are then a table.

Python 3.11 standard library; python3-matplotlib when installed.
"""

import dataclasses
import importlib.util
import io
import os
import re

from . import figures as fig

WIDTH, HEIGHT = 6.0, 2.4        # inches, at 100 px an inch in SVG: two a row


@dataclasses.dataclass
class Chart:
    """One chart: its title, unit, every series' points (one a run,
    oldest first: None where a run had no such figure) and its SVG."""
    title: str
    unit: str
    labels: list            # the runs' labels (x axis)
    series: dict            # {series: [value or None, ...]}
    svg: str | None = None


def available() -> bool:
    """Whether matplotlib can be imported (the page says so if not)."""
    # (found, not imported: its config directory is chosen at import,
    # and draw() chooses it first)
    return importlib.util.find_spec('matplotlib') is not None


def build(runs: list) -> list[Chart]:
    """One Chart per chart title that has a figure in RUNS (history.Run,
    oldest first, this run last), without SVG."""
    out = []
    labels = [r.label or r.date for r in runs]
    for title in fig.titles():
        series: dict[str, list] = {}
        for i, r in enumerate(runs):
            for k, v in r.figures.items():
                chart, name = fig.split(k)
                if chart == title:
                    series.setdefault(name, [None] * len(runs))[i] = v
        if series:
            out.append(Chart(title, fig.unit_of(title), labels,
                             dict(sorted(series.items()))))
    return out


def draw(charts: list[Chart], cache: str | None = None) -> None:
    """Give each chart its SVG (matplotlib must be available). CACHE:
    where matplotlib keeps its font cache when MPLCONFIGDIR is not set
    (in the container HOME is not the user's: beside the history, it is
    built once, not at every page, and says nothing)."""
    if cache and not os.environ.get('MPLCONFIGDIR'):
        try:
            os.makedirs(cache, exist_ok=True)
            os.environ['MPLCONFIGDIR'] = cache
        except OSError:
            pass
    import matplotlib
    matplotlib.use('svg')
    from matplotlib import pyplot as plt
    # text as text (smaller, searchable); ids that do not change from one
    # page to the next for the same figures
    matplotlib.rcParams.update({'svg.fonttype': 'none',
                                'svg.hashsalt': 'kernel-pipeline',
                                'font.size': 8})
    for n, c in enumerate(charts):
        f, ax = plt.subplots(figsize=(WIDTH, HEIGHT))
        xs = list(range(len(c.labels)))
        for name, values in c.series.items():
            pts = [(x, v) for x, v in zip(xs, values) if v is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts],
                        marker='o', markersize=3, linewidth=1.2, label=name)
        ax.set_title(c.title, fontsize=9)
        ax.set_ylabel(c.unit if len(c.unit) < 30 else '', fontsize=7)
        step = max(1, len(xs) // 8)
        ax.set_xticks(xs[::step])
        ax.set_xticklabels(c.labels[::step], fontsize=6)
        ax.grid(True, linewidth=0.3)
        ax.legend(fontsize=6, loc='center left', bbox_to_anchor=(1.0, 0.5),
                  frameon=False)
        f.tight_layout()
        buf = io.StringIO()
        f.savefig(buf, format='svg')
        plt.close(f)
        c.svg = inline(buf.getvalue(), 'c%d' % n)


def inline(svg: str, prefix: str) -> str:
    """matplotlib's SVG document as markup inside HTML: no XML prolog or
    doctype, its ids made unique on the page (several charts inline)."""
    svg = svg[svg.index('<svg'):]
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    for i in sorted(ids, key=len, reverse=True):
        svg = re.sub(r'(?<=id=")%s(?=")|(?<=#)%s(?=[)"])' % (
            re.escape(i), re.escape(i)), '%s-%s' % (prefix, i), svg)
    return svg
