"""The history of earlier runs on this machine, for the page's charts and
its comparison with the previous run.

Kept per user beside the caches every checkout shares
($PIPELINE_CACHE/report-history/, by default
~/.cache/kernel-pipeline/report-history/), so a run of any checkout on
this machine is a point of the trend lines:

    runs.json     the last KEEP runs, oldest first: each one's id (a hash
                  of its results.json files), date, label and figures
                  ({"chart|series": number}, figures.py)
    last/, prev/  a slim copy of the results.json of the last run recorded
                  and of the one before it (what make compare reads of a
                  run), so the page compares a run with the one before it

A run is recorded once (the same id again replaces nothing), only when
the pipeline wrote the page at the end of its own run (--record); a page
of a CI download reads the history and adds nothing to it.

Python 3.11 standard library only (Debian 12).
"""

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile

KEEP = 30
RUNS = 'runs.json'
# what a slim copy keeps of a test and of a run (compare and the LOST
# rule read no more)
TEST_KEYS = ('id', 'key', 'suite', 'program', 'name', 'number', 'status',
             'skip_reason', 'note', 'missing', 'metrics', 'flaky')
RUN_KEYS = ('schema', 'variant', 'kernel_release', 'boot', 'exit_class',
            'exit_class_name', 'reasons', 'counts', 'plan', 'booted')


@dataclasses.dataclass
class Run:
    """One earlier run: a point of every chart."""
    id: str
    date: str
    label: str
    figures: dict

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def default_dir() -> str:
    """$PIPELINE_CACHE/report-history, as scripts/lib.sh names the cache."""
    cache = os.environ.get('PIPELINE_CACHE')
    if not cache:
        base = os.environ.get('XDG_CACHE_HOME') or os.path.join(
            os.path.expanduser('~'), '.cache')
        cache = os.path.join(base, 'kernel-pipeline')
    return os.path.join(cache, 'report-history')


def run_id(files: list[str]) -> str:
    """A run's id: the hash of its results.json files, in order."""
    h = hashlib.sha256()
    for f in files:
        with open(f, 'rb') as fh:
            h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()[:16]


def load(directory: str) -> list[Run]:
    """The runs recorded in DIRECTORY, oldest first ([] when none or
    unreadable: the history is a convenience, never a reason to fail)."""
    try:
        with open(os.path.join(directory, RUNS), encoding='utf-8') as f:
            data = json.load(f)
        return [Run(d['id'], d.get('date', ''), d.get('label', ''),
                    {k: v for k, v in (d.get('figures') or {}).items()
                     if isinstance(v, (int, float))})
                for d in data.get('runs', [])]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def _slim(res: dict) -> dict:
    d = {k: res.get(k) for k in RUN_KEYS if k in res}
    d['kernel_problems'] = [{'kind': p.get('kind'),
                             'first_line': p.get('first_line')}
                            for p in res.get('kernel_problems') or []]
    d['tests'] = [{k: t[k] for k in TEST_KEYS if k in t}
                  for t in res.get('tests') or []]
    return d


def _copy_dir(directory: str, name: str) -> str:
    return os.path.join(directory, name)


def _run_of(directory: str, name: str) -> str | None:
    try:
        with open(os.path.join(directory, name, 'run.json'),
                  encoding='utf-8') as f:
            return json.load(f).get('id')
    except (OSError, ValueError, AttributeError):
        return None


def previous(directory: str, this_id: str) -> str | None:
    """The slim copy of the run before THIS_ID: last/, or prev/ when last/
    is this run itself (its page written again). None: no earlier run."""
    for name in ('last', 'prev'):
        rid = _run_of(directory, name)
        if rid is not None and rid != this_id:
            return _copy_dir(directory, name)
    return None


def record(directory: str, rid: str, date: str, figures: dict,
           results: str, label: str = '', sets: dict | None = None) -> None:
    """Add the run RID to the history (once), keep the last KEEP, and make
    its slim copy last/ (the last one prev/). SETS: {variant: results}."""
    os.makedirs(directory, exist_ok=True)
    runs = [r for r in load(directory) if r.id != rid]
    runs.append(Run(rid, date, label, figures))
    runs = runs[-KEEP:]
    _write_json(os.path.join(directory, RUNS),
                {'runs': [r.to_dict() for r in runs]})
    if sets is None or _run_of(directory, 'last') == rid:
        return
    tmp = tempfile.mkdtemp(dir=directory, prefix='.new-')
    for v, res in sets.items():
        os.makedirs(os.path.join(tmp, v))
        _write_json(os.path.join(tmp, v, 'results.json'), _slim(res))
    _write_json(os.path.join(tmp, 'run.json'), {'id': rid, 'date': date,
                                                'results': results})
    last, prev = _copy_dir(directory, 'last'), _copy_dir(directory, 'prev')
    shutil.rmtree(prev, ignore_errors=True)
    if os.path.isdir(last):
        os.rename(last, prev)
    os.rename(tmp, last)


def _write_json(path: str, data) -> None:
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write('\n')
    os.replace(tmp, path)
