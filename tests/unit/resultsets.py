"""Results sets for the analysis tests (tests/unit/test_analysis*.py): a
results.json's tests and the file itself as compare and summarize read
it, a fake variant's results, written under a results directory.
"""
import contextlib
import io
import json
import os
import sys

sys.dont_write_bytecode = True
TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   '..', '..'))
sys.path.insert(0, TOP)

LOGS = os.path.join(TOP, 'tests', 'fixtures', 'console-logs')


def t(tid, status, **kw):
    """A test of results.json."""
    return dict({'id': tid, 'status': status, 'metrics': {}, 'note': None},
                **kw)


def res(variant, cls, tests, **kw):
    """A results.json as compare reads it (tests/tooling/compare.bats' res)."""
    r = {'variant': variant, 'exit_class': cls,
         'exit_class_name': 'c%d' % cls, 'boot': {'ready_uptime_s': 1.5},
         'kernel_problems': [], 'tests': tests}
    r.update(kw)
    return r


def fake(variant, *specs):
    """A results.json as summarize reads it, from 'id=status' SPECS
    (tests/integration/kselftest.bats' fake_results)."""
    tests = []
    for s in specs:
        i, st = s.rsplit('=', 1)
        tests.append({'id': i, 'key': i + '#k', 'suite': i.split('/')[0],
                      'status': st})
    c = {k: sum(1 for x in tests if x['status'] == k)
         for k in ('pass', 'fail', 'skip', 'error')}
    c['total'] = len(tests)
    cls = 1 if c['fail'] or c['error'] else 0
    return {'variant': variant, 'counts': c, 'tests': tests,
            'kernel_problems': [], 'kernel_problems_total': 0,
            'boot': {'ready_uptime_s': 1.0}, 'duration_s': 5,
            'exit_class': cls,
            'reasons': [{'class': 1, 'reason': 'a test failed'}] if cls
            else []}


def write(top, sub, r):
    os.makedirs(os.path.join(top, sub), exist_ok=True)
    with open(os.path.join(top, sub, 'results.json'), 'w',
              encoding='utf-8') as f:
        json.dump(r, f)


def quiet(fn, *args):
    """(return value, printed lines) of FN(*ARGS)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = fn(*args)
    return rc, out.getvalue().splitlines()
