"""The page as HTML: one self-contained file (inline CSS, the charts'
inline SVG, no script, no link to anything outside it but its own
anchors), so a results/ copy or a CI download opens in any browser with
no server and no network.

Every text that comes from a run (test ids, reasons, output, console
lines: guest text, untrusted) goes through esc(); markup is only ever
this module's own.

Python 3.11 standard library only (Debian 12).
"""

import html

from .model import Page

PER_KIND = 3    # problems of one kind at the top; the sections have them all

CSS = """
body{font:14px/1.35 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
main{padding:0 16px 40px}
header{padding:10px 16px;color:#fff}
header h1{font-size:20px;margin:0}
header p{margin:2px 0 0}
.v-pass{background:#1e7d32}.v-test-failure{background:#c62828}
.v-infrastructure,.v-incomplete{background:#6a1b9a}.v-kernel-problem{background:#4a148c}
h2{font-size:16px;margin:18px 0 6px;border-bottom:1px solid #ccc}
h3{font-size:14px;margin:10px 0 4px}
#problems ul{margin:4px 0;padding-left:0;list-style:none}
#problems li{margin:2px 0;padding:2px 6px;border-left:5px solid #999;background:#fff}
#problems li.k-fail,#problems li.k-error{border-color:#c62828}
#problems li.k-LOST{border-color:#ef6c00}
#problems li.k-kernel{border-color:#6a1b9a}
.kind{display:inline-block;min-width:74px;font-weight:bold}
code,pre{font:12px/1.3 ui-monospace,monospace}
pre{background:#fff;border:1px solid #ddd;padding:6px;overflow-x:auto;margin:4px 0}
table{border-collapse:collapse;background:#fff}
th,td{border:1px solid #ccc;padding:3px 6px;font-size:13px;text-align:left}
td.cell{text-align:center;min-width:60px}
td.cls{max-width:300px;overflow-wrap:anywhere}
td.cell a{color:inherit;display:block}
.s-pass{background:#c8e6c9}.s-bench{background:#b2ebf2}.s-skip{background:#fff9c4}
.s-lost{background:#ffcc80}.s-fail,.s-error{background:#ef9a9a;font-weight:bold}
.c-pass{color:#1e7d32}.c-test-failure{color:#c62828}
.c-infrastructure,.c-incomplete,.c-kernel-problem{color:#6a1b9a}
.mark{background:#ffe082;display:block}
.muted{color:#666}
figure{display:inline-block;margin:4px;background:#fff;border:1px solid #ddd}
figure svg{display:block;max-width:100%;height:auto}
figcaption{font-size:12px;padding:2px 6px}
"""


def esc(text) -> str:
    """Any text for HTML (guest text: untrusted)."""
    return html.escape('' if text is None else str(text), quote=True)


def link(anchor, text) -> str:
    return '<a href="#%s">%s</a>' % (esc(anchor), text) if anchor else text


def _head(p: Page) -> list[str]:
    c = p.counts
    return [
        '<header id="verdict" class="v-%s"><h1>%s: %s</h1>' % (
            esc(p.verdict), 'PASS' if p.green else 'NOT GREEN',
            esc('class %d %s' % (p.verdict_class, p.verdict))),
        '<p>%d variants &middot; %d passed, %d failed, %d skipped, %d '
        'benchmarks &middot; run of %s &middot; <code>%s</code></p>'
        '</header>' % (len(p.variants), c.passed, c.failed, c.skipped,
                       c.benchmarks, esc(p.date), esc(p.results))]


def _problems(p: Page) -> list[str]:
    out = ['<section id="problems"><h2>What did not go as planned (%d)'
           '</h2>' % len(p.problems)]
    if not p.problems:
        out.append('<p>Everything planned ran and passed (or skipped as '
                   'accepted).</p></section>')
        return out
    out.append('<ul>')
    # every kind on the first screen: a few of each, then how many more
    kinds = list(dict.fromkeys(x.kind for x in p.problems))
    for kind in kinds:
        these = [x for x in p.problems if x.kind == kind]
        for x in these[:PER_KIND]:
            out.append('<li class="k-%s"><span class="kind">%s</span> '
                       '<b>%s</b> %s %s</li>' % (
                           esc(x.kind), esc(x.kind), esc(x.variant),
                           link(x.link, '<code>%s</code>' % esc(x.test))
                           if x.test else '',
                           link(x.link, esc(x.text)) if not x.test
                           else '<span class="muted">%s</span>'
                           % esc(x.text)))
        if len(these) > PER_KIND:
            out.append('<li class="k-%s"><span class="kind">%s</span> ... '
                       'and %d more: %s</li>' % (
                           esc(kind), esc(kind), len(these) - PER_KIND,
                           link(these[PER_KIND].link, 'the next')))
    out.append('</ul></section>')
    return out


def _cell(c) -> str:
    if c is None:
        return '<td class="cell muted">&ndash;</td>'
    bits = ['%d&#10003;' % c.passed] if c.passed else []
    for n, what in ((c.failed, 'failed'), (c.errors, 'error'),
                    (c.lost, 'LOST'), (c.skipped, 'skip'),
                    (c.benchmarks, 'bench')):
        if n:
            bits.append('%d %s' % (n, what))
    text = ' '.join(bits) or '0'
    return '<td class="cell s-%s" title="%s">%s</td>' % (
        esc(c.state), esc('%s %s: %s' % (c.variant, c.suite, c.state)),
        link(c.link, text))


def _matrix(p: Page) -> list[str]:
    out = ['<section id="matrix"><h2>Matrix: variants &times; suites</h2>',
           '<table><tr><th>variant</th><th>class</th><th>boot s</th>%s'
           '</tr>' % ''.join('<th>%s</th>' % esc(s) for s in p.suites)]
    for v in p.variants:
        out.append('<tr id="variant-%s"><th>%s</th><td class="cls c-%s">%d %s'
                   '%s</td><td>%s</td>%s</tr>' % (
                       esc(_slug(v.name)), esc(v.name), esc(v.label), v.cls,
                       esc(v.label),
                       '' if v.green or not v.reason else
                       '<br><span class="muted">%s</span>' % esc(v.reason),
                       '-' if v.boot_s is None else '%.1f' % v.boot_s,
                       ''.join(_cell(p.cell(v.name, s)) for s in p.suites)))
    out.append('</table></section>')
    return out


def _slug(text: str) -> str:
    return ''.join(c if c.isalnum() or c in '-_' else '_' for c in text)


def _lines_section(anchor, title, lines, empty) -> list[str]:
    out = ['<section id="%s"><h2>%s</h2>' % (anchor, title)]
    if lines:
        out.append('<pre>%s</pre>' % esc('\n'.join(lines)))
    else:
        out.append('<p class="muted">%s</p>' % empty)
    out.append('</section>')
    return out


def _regressions(p: Page) -> list[str]:
    lines = []
    for v, ids in p.regressions.items():
        lines.append('%s: %d regressions versus pristine' % (v, len(ids)))
        lines += ['   ' + i for i in ids]
    for v, ids in p.accepted_lost.items():
        lines += ['%s: lost, accepted (configs/accepted-skips.txt): %s'
                  % (v, i) for i in ids]
    return _lines_section(
        'regressions', 'Regressions versus pristine (LOST: passed on '
        'pristine, skipped or not run here)', lines,
        'none (or no pristine in this run to judge against)')


NEWS = ('==', 'NEW', 'LOST', 'FIXED', 'compare:')
FULL_LINES = 500


def _previous(p: Page) -> list[str]:
    """make compare's lines against the run before: the news (new
    failures, LOST, fixed, each variant's class), the rest folded."""
    out = ['<section id="previous"><h2>Against %s</h2>'
           % esc(p.previous_what)]
    if not p.previous:
        out.append('<p class="muted">nothing to compare with</p></section>')
        return out
    news = [ln for ln in p.previous if ln.strip().startswith(NEWS) or
            'WORSE' in ln or 'better' in ln]
    out.append('<pre>%s</pre>' % esc('\n'.join(news)))
    rest = p.previous[:FULL_LINES]
    more = len(p.previous) - len(rest)
    out.append('<details><summary>every change, metrics too (%d lines)'
               '</summary><pre>%s%s</pre></details></section>' % (
                   len(p.previous), esc('\n'.join(rest)),
                   esc('\n... %d more lines (make compare)' % more)
                   if more > 0 else ''))
    return out


def _failures(p: Page) -> list[str]:
    out = ['<section id="failures"><h2>Failures (%d)</h2>'
           % (len(p.failures) + p.more_failures)]
    for f in p.failures:
        out.append('<article id="%s"><h3>%s <code>%s</code> %s</h3>' % (
            esc(f.anchor), esc(f.variant), esc(f.test), esc(f.status)))
        out.append('<p>%s%s%s</p>' % (esc(f.reason), ' &middot; ' + link(
            f.log_anchor, 'console log, line %d' % f.line)
            if f.log_anchor else '', ''.join(
                ' &middot; ' + link(a, 'the kernel report') for a in
                f.reports)))
        if f.output:
            out.append('<pre>%s</pre>' % esc(f.output))
        out.append('</article>')
    if p.more_failures:
        out.append('<p>... and %d more (make report VARIANT=...)</p>'
                   % p.more_failures)
    if not p.failures:
        out.append('<p class="muted">none</p>')
    out.append('</section>')
    return out


def _reports(p: Page) -> list[str]:
    out = ['<section id="reports"><h2>Kernel reports (%d)</h2>'
           % len(p.reports)]
    for k in p.reports:
        out.append('<article id="%s"><h3>%s: kernel %s%s</h3><p><code>%s'
                   '</code> &middot; %s%s</p><pre>%s</pre></article>' % (
                       esc(k.anchor), esc(k.variant), esc(k.kind),
                       esc(' during %s' % k.during if k.during else ''),
                       esc(k.first_line),
                       'decoded to file:line' if k.decoded else
                       'not decoded (no vmlinux)',
                       ' &middot; ' + link(k.log_anchor, 'console log, '
                                           'line %d' % k.line)
                       if k.log_anchor else '', esc(k.text)))
    if not p.reports:
        out.append('<p class="muted">none</p>')
    out.append('</section>')
    return out


def _charts(p: Page) -> list[str]:
    out = ['<section id="charts"><h2>Benchmarks and boot times, with '
           'earlier runs on this machine</h2>']
    if p.charts_note:
        out.append('<p class="note">%s</p>' % esc(p.charts_note))
    for c in p.charts:
        if c.svg:
            out.append('<figure class="chart">%s<figcaption>%s: %s'
                       '</figcaption></figure>' % (c.svg, esc(c.title),
                                                   esc(c.unit)))
    if not p.charts:
        out.append('<p class="muted">no benchmark figures in this run</p>')
    if p.figures:
        out.append('<details%s><summary>The figures of this run (%d)'
                   '</summary><table><tr><th>chart</th><th>series</th>'
                   '<th>value</th></tr>' % (
                       ' open' if p.charts_note else '', len(p.figures)))
        for k, v in p.figures.items():
            chart, _, series = k.partition('|')
            out.append('<tr><td>%s</td><td>%s</td><td>%s</td></tr>' % (
                esc(chart), esc(series), esc('%.4g' % v)))
        out.append('</table></details>')
    out.append('</section>')
    return out


def _logs(p: Page) -> list[str]:
    out = ['<section id="logs"><h2>Console log excerpts</h2>']
    for e in p.excerpts:
        body = []
        for i, line in enumerate(e.lines, e.first):
            text = esc('%6d  %s' % (i, line))
            body.append('<span class="mark">%s</span>' % text
                        if i == e.mark else text + '\n')
        out.append('<div id="%s"><h3>%s console.log, lines %d-%d</h3>'
                   '<pre>%s</pre></div>' % (
                       esc(e.anchor), esc(e.variant), e.first,
                       e.first + len(e.lines) - 1, ''.join(body)))
    if not p.excerpts:
        out.append('<p class="muted">none (no failure with a console log '
                   'line)</p>')
    out.append('</section>')
    return out


def render(p: Page) -> str:
    parts = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width">',
             '<title>%s: %s</title>' % (esc('kernel-pipeline results'),
                                        esc(p.verdict)),
             '<style>%s</style></head><body>' % CSS]
    parts += _head(p)
    parts.append('<main>')
    for section in (_problems, _matrix, _regressions):
        parts += section(p)
    parts += _lines_section('baseline', 'Against ci/baseline/ (the tests '
                            'a green run of main passed)', p.baseline,
                            'no baseline for these variants')
    parts += _previous(p)
    for section in (_failures, _reports, _charts, _logs):
        parts += section(p)
    parts.append('</main></body></html>')
    return '\n'.join(parts) + '\n'
