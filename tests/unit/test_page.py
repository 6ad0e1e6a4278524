"""In-process unit tests of pipeline/page: the results page
(results/index.html, make report-html). Its model from a results set (the
verdict, the problems at the top, the matrix, the failures with their
console excerpts, the regressions by the analysis' own rules), its HTML
(escaped guest text, nothing outside the file), the history of earlier
runs on this machine (capped) and a page without matplotlib.
tests/tooling/report-html.bats opens the same page in Chromium.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import json
import os
import re
import sys
import tempfile
import unittest
from unittest import mock

sys.dont_write_bytecode = True
TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   '..', '..'))
sys.path.insert(0, TOP)
from pipeline import page  # noqa: E402
from pipeline.page import charts, history, html, model  # noqa: E402

EVIL = '<script>alert("x")</script>&amp;'


def t(tid, status, **kw):
    suite, program = tid.split('/')[:2]
    d = {'id': tid, 'suite': suite, 'program': program,
         'name': tid.split('/', 2)[-1], 'status': status, 'metrics': {},
         'note': None, 'skip_reason': None, 'excerpt': '', 'line': None}
    d.update(kw)
    return d


def res(variant, cls, name, tests, **kw):
    c = {k: sum(1 for x in tests if x['status'] == k)
         for k in ('pass', 'fail', 'skip', 'error', 'bench')}
    c['total'] = len(tests)
    r = {'variant': variant, 'exit_class': cls, 'exit_class_name': name,
         'reasons': [], 'counts': c, 'tests': tests,
         'kernel_problems': [], 'kernel_problems_total': 0,
         'boot': {'ready_uptime_s': 1.25}, 'duration_s': 30,
         'kernel_release': '6.12.118-pipeline', 'plan': None,
         'log': 'console.log'}
    r.update(kw)
    return r


CONSOLE = ['[    0.0%02d] line %d' % (i % 100, i) for i in range(1, 301)]
CONSOLE[199] = 'not ok 3 ' + EVIL
CONSOLE[249] = 'BUG: kernel NULL pointer dereference, address: 0'


def write_set(top, rows, summary_requested=None):
    for r in rows:
        d = os.path.join(top, r['variant'])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, 'results.json'), 'w') as f:
            json.dump(r, f)
        with open(os.path.join(d, 'console.log'), 'w') as f:
            f.write('\n'.join(CONSOLE) + '\n')
    if summary_requested:
        with open(os.path.join(top, 'summary.json'), 'w') as f:
            json.dump({'requested': summary_requested}, f)


def failing_run(top):
    """default: a failure (guest text with markup), a kernel report
    decoded to file:line, a test lost against the baseline; pristine and
    isolated green; rt planned and never run (no results)."""
    bench = {'umcg_futex_ratio_1cpu': 0.98, 'umcg_futex_ratio_2cpu': 0.86,
             'umcg_pipe_ratio_shared': 0.12}
    default = res('default', 3, 'kernel-problem', [
        t('umcg/switch/global.a', 'pass'),
        t('umcg/block/' + EVIL, 'fail', line=200,
          excerpt='\n'.join('out %d' % i for i in range(60)) + '\n' + EVIL),
        t('lkdtm/trigger/lkdtm.EXCEPTION', 'error', line=250,
          explained_by=['oops'], note='no result'),
        t('smoke/smoke/global.b', 'skip', skip_reason='no THP'),
        t('umcg-bench/switch_bench/bench.switch_latency', 'bench',
          metrics=bench)],
        reasons=[{'class': 3, 'reason': 'kernel oops: BUG: kernel NULL'}],
        kernel_problems=[{
            'kind': 'oops', 'first_line': 'BUG: kernel NULL pointer '
            'dereference, address: 0', 'line': 250,
            'during': 'lkdtm/trigger', 'excerpt': 'RIP: lkdtm_EXCEPTION+0x6',
            'decoded': 'RIP: lkdtm_EXCEPTION (drivers/misc/lkdtm/core.c:42)'}],
        kernel_problems_total=1)
    pristine = res('pristine', 0, 'pass', [
        t('umcg/switch/global.a', 'pass'),
        t('umcg/block/' + EVIL, 'pass'),
        t('smoke/smoke/global.b', 'pass')])
    isolated = res('isolated', 0, 'pass', [
        t('isolation/cost/cost.getppid_cost', 'pass',
          metrics={'getppid_ratio_active': 1.8})])
    write_set(top, [default, pristine, isolated],
              ['default', 'pristine', 'isolated', 'rt'])
    base = os.path.join(top, '..', 'baseline')
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, 'default.tests'), 'w') as f:
        f.write('umcg/switch/global.a\nsmoke/smoke/global.b\n')
    return base


class Fixture(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.top = os.path.join(self.tmp.name, 'results')
        self.base = failing_run(self.top)
        self.hist = os.path.join(self.tmp.name, 'cache', 'report-history')

    def tearDown(self):
        self.tmp.cleanup()

    def build(self, **kw):
        kw.setdefault('baseline_dir', self.base)
        kw.setdefault('history_dir', self.hist)
        kw.setdefault('accepted', os.devnull)
        # (drawing costs a second a page: only where the charts are held)
        kw.setdefault('draw', False)
        return model.build(self.top, **kw)


class Model(Fixture):
    def test_the_verdict_is_the_summarys_worst_class(self):
        p = self.build()
        self.assertEqual('kernel-problem', p.verdict)
        self.assertFalse(p.green)
        self.assertEqual(['default', 'pristine', 'isolated', 'rt'],
                         [v.name for v in p.variants])

    def test_planned_and_not_run_lost_and_errors_are_problems(self):
        p = self.build()
        kinds = [(x.kind, x.variant, x.test) for x in p.problems]
        # rt was asked for and left no result
        self.assertIn(('no result', 'rt', None), kinds)
        # skipped here, passed on pristine and in the baseline
        self.assertIn(('LOST', 'default', 'smoke/smoke/global.b'), kinds)
        self.assertIn(('error', 'default', 'lkdtm/trigger/lkdtm.EXCEPTION'),
                      kinds)
        self.assertIn(('kernel', 'default', None), kinds)

    def test_cells_are_variant_by_suite_with_counts(self):
        p = self.build()
        self.assertEqual(['lkdtm', 'smoke', 'umcg', 'umcg-bench',
                          'isolation'], p.suites)
        c = p.cell('default', 'umcg')
        self.assertEqual(('fail', 1, 1), (c.state, c.passed, c.failed))
        self.assertEqual(p.failures[0].anchor, c.link)
        self.assertEqual('error', p.cell('default', 'lkdtm').state)
        self.assertEqual('lost', p.cell('default', 'smoke').state)
        self.assertIsNone(p.cell('isolated', 'umcg'))

    def test_a_failure_has_its_reason_output_tail_and_console_excerpt(self):
        p = self.build()
        f = next(x for x in p.failures if x.test.startswith('umcg/block'))
        self.assertEqual('fail', f.status)
        self.assertTrue(f.output.endswith(EVIL))
        self.assertLessEqual(len(f.output.splitlines()),
                             model.OUTPUT_LINES + 1)
        ex = p.excerpt(f.log_anchor)
        self.assertIn('not ok 3 ' + EVIL, ex.lines)
        self.assertEqual(200, ex.first + ex.lines.index('not ok 3 ' + EVIL))

    def test_a_kernel_report_is_decoded_to_file_line(self):
        p = self.build()
        k = p.reports[0]
        f = next(x for x in p.failures if x.test.startswith('lkdtm'))
        self.assertEqual([k.anchor], f.reports)
        self.assertTrue(k.decoded)
        self.assertIn('core.c:42', k.text)
        self.assertIsNotNone(p.excerpt(k.log_anchor))

    def test_regressions_are_the_analysis_ones(self):
        p = self.build()
        self.assertIn('LOST:smoke/smoke/global.b', p.regressions['default'])
        self.assertIn('umcg/block/' + EVIL, p.regressions['default'])
        self.assertTrue(any('smoke/smoke/global.b: pass -> skip' in ln
                            for ln in p.baseline))

    def test_a_variant_run_after_the_summary_is_shown_an_older_one_not(self):
        extra = os.path.join(self.top, 'off')
        write_set(self.top, [res('off', 0, 'pass', [
            t('smoke/smoke/global.b', 'pass')])])
        summary_json = os.path.join(self.top, 'summary.json')
        # off's results are older than the matrix's summary: not its run
        os.utime(os.path.join(extra, 'results.json'), (1, 1))
        self.assertNotIn('off', [v.name for v in self.build().variants])
        # written after it (make test-variant VARIANT=off): on the page
        os.utime(summary_json, (2, 2))
        os.utime(os.path.join(self.top, 'default', 'results.json'), (1, 1))
        os.utime(os.path.join(self.top, 'pristine', 'results.json'), (1, 1))
        os.utime(os.path.join(self.top, 'isolated', 'results.json'), (1, 1))
        os.utime(os.path.join(extra, 'results.json'), (3, 3))
        self.assertEqual(['default', 'pristine', 'isolated', 'rt', 'off'],
                         [v.name for v in self.build().variants])

    def test_a_ci_download_is_read_by_the_variant_name_inside(self):
        os.rename(os.path.join(self.top, 'default'),
                  os.path.join(self.top, 'results-default'))
        os.remove(os.path.join(self.top, 'summary.json'))
        p = self.build()
        self.assertIn('default', [v.name for v in p.variants])
        self.assertEqual('fail', p.cell('default', 'umcg').state)


class Html(Fixture):
    def render(self, **kw):
        return html.render(self.build(**kw))

    def test_guest_text_is_escaped(self):
        out = self.render()
        self.assertNotIn(EVIL, out)
        self.assertIn(page.html.esc(EVIL), out)
        self.assertEqual([], re.findall(r'<script', out, re.I))

    def test_nothing_outside_the_file(self):
        out = self.render()
        self.assertEqual([], re.findall(
            r'(?:src|href)\s*=\s*"(?!#|data:)[^"]*"', out))
        self.assertNotIn('<link', out)
        self.assertNotIn('@import', out)
        self.assertNotIn('url(http', out)

    def test_a_failing_cell_links_to_its_failure_and_its_log(self):
        out = self.render()
        p = self.build()
        f = p.failures[0]
        self.assertIn('href="#%s"' % f.anchor, out)
        self.assertIn('id="%s"' % f.anchor, out)
        self.assertIn('href="#%s"' % f.log_anchor, out)
        self.assertIn('id="%s"' % f.log_anchor, out)

    def test_the_problems_come_before_the_matrix(self):
        out = self.render()
        self.assertLess(out.index('id="problems"'), out.index('id="matrix"'))
        self.assertLess(out.index('LOST'), out.index('id="matrix"'))
        self.assertLess(out.index('id="verdict"'), out.index('id="problems"'))

    def test_charts_are_inline_svg(self):
        if not charts.available():
            self.skipTest('python3-matplotlib is not installed')
        out = self.render(draw=True)
        self.assertGreaterEqual(out.count('<svg'), 2)
        self.assertNotIn('<?xml', out)

    def test_without_matplotlib_the_page_says_so(self):
        with mock.patch.object(charts, 'available', return_value=False):
            out = self.render(draw=True)
        self.assertIn('matplotlib', out)
        self.assertNotIn('<svg', out)
        self.assertIn('default pinned', out)


class History(Fixture):
    def test_a_run_is_recorded_once_and_capped(self):
        for i in range(history.KEEP + 5):
            history.record(self.hist, 'run%d' % i, '2026-12-0%d' % (i % 9),
                           {'boot s|default': float(i)}, self.top)
        runs = history.load(self.hist)
        self.assertEqual(history.KEEP, len(runs))
        self.assertEqual('run%d' % (history.KEEP + 4), runs[-1].id)
        history.record(self.hist, runs[-1].id, 'x', {}, self.top)
        self.assertEqual(history.KEEP, len(history.load(self.hist)))

    def test_the_figures_of_a_run(self):
        p = self.build()
        f = p.figures
        self.assertEqual(0.98, f['UMCG/futex ratio|default pinned'])
        self.assertEqual(1.25, f['boot to READY, s|default'])
        self.assertEqual(1.8, f['isolation: getppid cost ratio|isolated '
                                'active'])

    def test_the_previous_run_is_compared_by_make_compare_rules(self):
        p = self.build(record=True)
        self.assertEqual([], p.previous)
        # the next run: the failure fixed
        path = os.path.join(self.top, 'default', 'results.json')
        with open(path) as f:
            r = json.load(f)
        for x in r['tests']:
            if x['id'].startswith('umcg/block'):
                x['status'] = 'pass'
        with open(path, 'w') as f:
            json.dump(r, f)
        p = self.build(record=True)
        self.assertTrue(any('FIXED' in ln for ln in p.previous), p.previous)
        self.assertEqual(2, len(history.load(self.hist)))
        # the same run rendered again is compared with the one before it
        p = self.build(record=True)
        self.assertTrue(any('FIXED' in ln for ln in p.previous))
        self.assertEqual(2, len(history.load(self.hist)))


if __name__ == '__main__':
    unittest.main()
