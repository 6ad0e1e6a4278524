"""The bench-table subcommand (scripts/pipeline bench-table): the table and
the JSON of scripts/bench-build, and one stage's seconds from a
kernel.json for it.

Python 3.11 standard library only (Debian 12).
"""

import argparse
import json
import sys

from .. import Fail

DOC = """The table and the JSON of scripts/bench-build.

bench-table OUT.json (NAME<tab>VALUE lines on stdin): reads what
bench-build measured, writes OUT.json (the raw values and the table) and
prints the table with its ratios as Markdown, for the README. A row whose
step failed (NAME_exit not 0) has no seconds and says FAILED: its time
measured nothing the row claims. Then the exit is 1, naming the failed
steps.
bench-table --duration KERNEL_JSON STAGE: prints one stage's seconds from
a kernel.json (empty if none).
Exit 0, or 2 with a message.
"""

USAGE = ('usage: pipeline bench-table OUT.json | pipeline bench-table '
         '--duration KERNEL_JSON STAGE')


def duration(path, stage):
    try:
        with open(path, encoding='utf-8') as fh:
            value = json.load(fh).get('durations_s', {}).get(stage)
    except (OSError, ValueError, AttributeError):
        value = None
    print('' if value is None else value)
    return 0


def table(out, lines):
    """Write OUT from the NAME<tab>VALUE LINES, print the table; 1 when a
    step failed."""
    r = dict(line.rstrip('\n').split('\t', 1) for line in lines
             if '\t' in line)

    failed = sorted(k[:-len('_exit')] for k, v in r.items()
                    if k.endswith('_exit') and v != '0')

    def f(k):
        if k in failed:
            return None
        try:
            return float(r[k])
        except (KeyError, ValueError):
            return None

    def ratio(a, b):
        return round(a / b, 3) if a is not None and b else None

    kernels = r.get('kernels', '').split()
    # (what, the bench-build step it times, seconds, note)
    rows = [
        ('cold make (build + boot), empty ccache', 'cold', f('cold'), ''),
        ('  of which until the last kernel was built', 'cold',
         f('cold_builds_done'),
         ', '.join('%s %ss' % (k, r.get('cold_kernel_' + k)) for k in kernels)),
        ('warm make container-build (ccache, no objects)', 'warm', f('warm'),
         'warm/cold builds %s' % ratio(f('warm'), f('cold_builds_done'))),
        ('no-op make container-build', 'noop', f('noop'), ''),
        ('edit one patch: make container-build VARIANTS=default',
         'edit_build', f('edit_build'),
         'kernel stage %ss, config stage %ss' % (
             r.get('edit_kernel_stage'), r.get('edit_config_stage'))),
        ('edit one patch: make test-variant SUITES=umcg', 'edit_results',
         f('edit_results'), ''),
        ('off, empty ccache, from nothing', 'off_clean', f('off_clean'),
         'kernel stage %ss' % r.get('off_clean_kernel_stage')),
        ('off, empty ccache, from default (donor)', 'off_donor',
         f('off_donor'),
         'kernel stage %ss; donor/clean %s; %s; same bzImage: %s' % (
             r.get('off_donor_kernel_stage'),
             ratio(f('off_donor'), f('off_clean')),
             r.get('off_donor_line') or 'no donor',
             r.get('off_clean_sha256') == r.get('off_donor_sha256'))),
    ]
    if 'repro_result' in r:
        rows.append(('make repro-check (second checkout, no ccache)', 'repro',
                     f('repro'), r.get('repro_result')))
    rows = [(w, None, 'FAILED (exit %s); %s' % (r[step + '_exit'], n))
            if step in failed else (w, s, n) for w, step, s, n in rows]
    doc = {'format': 'kernel-pipeline-bench-build/1', 'raw': r,
           'failed': failed,
           'table': [{'what': w.strip(), 'seconds': s, 'note': n}
                     for w, s, n in rows]}
    try:
        with open(out, 'w', encoding='utf-8') as fh:
            json.dump(doc, fh, indent=2, sort_keys=True)
            fh.write('\n')
    except OSError as e:
        raise Fail('cannot write %s: %s' % (out, e)) from None
    print('build benchmark, commit %s, %s CPUs, kernels: %s; load average '
          '%s at start, %s at end' % (
              r.get('commit'), r.get('cpus'), r.get('kernels'),
              r.get('load_start'), r.get('load_end')))
    print()
    print('| what | s | |')
    print('| --- | ---: | --- |')
    for w, s, n in rows:
        print('| %s | %s | %s |' % (w.strip(), '-' if s is None else
                                    '%.0f' % s, n))
    if failed:
        print('pipeline bench-table: these steps failed, their rows show no time: %s'
              % ', '.join(failed), file=sys.stderr)
        return 1
    return 0


def configure(ap: argparse.ArgumentParser) -> None:
    ap.usage = ('%(prog)s [-h] OUT.json\n'
                '       %(prog)s --duration KERNEL_JSON STAGE')
    ap.add_argument('out', nargs='?', metavar='OUT.json')
    ap.add_argument('--duration', nargs=2, metavar=('KERNEL_JSON', 'STAGE'))


def run(a: argparse.Namespace) -> int:
    # one of the two forms, never both
    if a.duration and a.out is None:
        return duration(*a.duration)
    if a.out is not None and not a.duration:
        return table(a.out, sys.stdin)
    raise Fail(USAGE)
