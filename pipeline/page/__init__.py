"""The results page: results/index.html, one static self-contained page
of a run (make report-html; written at the end of make, make matrix and
make test-variant). docs/usage.md#the-results-page says what it shows.

    model.py    the page's data, typed, from the analysis' functions
    figures.py  the benchmark figures and boot times a run charts
    history.py  earlier runs on this machine (per user, capped)
    charts.py   the charts: matplotlib to inline SVG, when installed
    html.py     the HTML, every run's text escaped

Python 3.11 standard library; python3-matplotlib for the charts.
"""

import os

from .. import Fail
from . import html, model


def write(results: str, out: str | None = None, **kw) -> str:
    """Write the page of the results set at RESULTS to OUT (default
    RESULTS/index.html); returns its path. KW: model.build's."""
    page = model.build(results, **kw)
    out = out or os.path.join(results, 'index.html')
    tmp = out + '.tmp'
    try:
        with open(tmp, 'w', encoding='utf-8') as f:
            f.write(html.render(page))
        os.replace(tmp, out)
    except OSError as e:
        raise Fail('cannot write %s: %s' % (out, e)) from None
    return out
