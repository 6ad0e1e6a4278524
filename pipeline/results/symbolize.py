"""Kernel reports of a run decoded to file:line (the symbolize
subcommand, scripts/pipeline symbolize; parse --symbolize).

For each kernel report in RESULTS_DIR/results.json, runs the kernel tree's
scripts/decode_stacktrace.sh over its excerpt against the vmlinux of the
kernel that was booted, and stores the decoded text as the report's
"decoded" (the raw "excerpt" stays); a test whose excerpt holds lines
of a report gets a "decoded" excerpt as well. The top-level "symbolized"
says with what, or why not.

Works from the artifact contract alone: the vmlinux is the booted
variant's kernel's vmlinux.xz (ARTIFACTS/<kernel>/, named by
ARTIFACTS/<variant>/variant.json, whose release must be the one the log
shows), unpacked into a temporary directory. decode_stacktrace.sh
comes from the patched tree (build/linux) when there is one, else from the
pinned source package's tarball (once, into build/symbols/tools/), or
DECODE_STACKTRACE names it. "Code:" lines are left as they are (the
disassembly would bury the frames). A run without kernel reports is not
touched. Exit 0 when results.json is written (also when decoding was not
possible: "symbolized" says why), 2 when it cannot be read or written.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from typing import Any

from .. import Fail, kernel_pin, top as _top
from ..artifacts import artifacts_dir as default_artifacts

TOOLS = ('scripts/decode_stacktrace.sh', 'scripts/decodecode')


class NoDecode(Exception):
    """Why the reports of this run cannot be decoded."""


def vmlinux_xz(artifacts, res):
    variant = res.get('variant')
    vj = os.path.join(artifacts, str(variant), 'variant.json')
    try:
        with open(vj, encoding='utf-8') as f:
            v = json.load(f)
        kernel = v['kernel']
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise NoDecode('no usable %s: %s' % (vj, e)) from None
    booted = res.get('kernel_release')
    if booted and kernel.get('release') and booted != kernel['release']:
        raise NoDecode('the log shows kernel %s, but %s holds %s' % (
            booted, vj, kernel['release']))
    path = os.path.join(artifacts, kernel['variant'], 'vmlinux.xz')
    if not os.path.isfile(path):
        raise NoDecode('no %s' % path)
    return path


def unpacked(xz, tmp):
    """The vmlinux of XZ, unpacked into TMP (a few seconds; not kept: a
    vmlinux is large, and a run has reports rarely)."""
    out = os.path.join(tmp, 'vmlinux')
    with open(out, 'wb') as f:
        r = subprocess.run(['xz', '-dc', xz], stdout=f,
                           stderr=subprocess.PIPE, check=False)
    if r.returncode != 0:
        raise NoDecode('cannot unpack %s: %s' % (
            xz, r.stderr.decode(errors='replace').strip()))
    return out


def tarball():
    if os.environ.get('KSRC_TARBALL'):
        return os.environ['KSRC_TARBALL']
    try:
        return '/usr/src/%s.tar.xz' % kernel_pin()[0]
    except Fail as e:
        raise NoDecode(str(e)) from None


def decoder():
    """decode_stacktrace.sh: given, from the tree, or from the tarball."""
    given = os.environ.get('DECODE_STACKTRACE')
    if given:
        return given
    build = os.environ.get('BUILD') or os.path.join(_top(), 'build')
    tree = os.path.join(build, 'linux', TOOLS[0])
    if os.path.isfile(tree):
        return tree
    tools = os.path.join(build, 'symbols', 'tools')
    have = os.path.join(tools, TOOLS[0])
    if os.path.isfile(have):
        return have
    tb = tarball()
    if not os.path.isfile(tb):
        raise NoDecode('no kernel tree (build/linux) and no %s to take '
                       'decode_stacktrace.sh from' % tb)
    try:
        with tarfile.open(tb) as t:
            for m in t:
                rel = m.name.split('/', 1)[-1]
                if rel in TOOLS and m.isfile():
                    dst = os.path.join(tools, rel)
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    with t.extractfile(m) as src, open(dst, 'wb') as f:
                        shutil.copyfileobj(src, f)
                    os.chmod(dst, 0o755)
    except (OSError, tarfile.TarError) as e:
        raise NoDecode('cannot read %s: %s' % (tb, e)) from None
    if not os.path.isfile(have):
        raise NoDecode('%s holds no %s' % (tb, TOOLS[0]))
    return have


def decode(tool, vmlinux, excerpt):
    """The excerpt with its frames decoded; "Code:" lines kept as they are
    (decode_stacktrace.sh maps every other line to one line)."""
    lines = excerpt.split('\n')
    todo = [ln for ln in lines if 'Code: ' not in ln]
    # base path "auto": the directory the kernel was built in (from
    # kernel_init's file name), stripped so that file names are the
    # tree's own (kernel/sched/umcg.c:553), wherever it was built.
    r = subprocess.run(['bash', tool, vmlinux, 'auto'],
                       input='\n'.join(todo) + '\n', capture_output=True,
                       text=True, errors='replace', check=False)
    out = r.stdout.split('\n')
    if out and out[-1] == '':
        out.pop()
    if r.returncode != 0 or len(out) != len(todo):
        raise NoDecode('%s failed (exit %d): %s' % (
            tool, r.returncode, (r.stderr.strip().splitlines() or
                                 ['%d lines in, %d out' % (len(todo),
                                                          len(out))])[-1]))
    it = iter(out)
    return '\n'.join(ln if 'Code: ' in ln else next(it).rstrip()
                     for ln in lines)


def decode_tests(tests, problems):
    """A report printed while a test ran is in that test's excerpt too:
    give such a test a "decoded" excerpt with the report's lines replaced
    by their decoded form (the line, its timestamp included, is the key).
    The raw "excerpt" stays."""
    lines = {}
    for p in problems:
        if p.get('excerpt') and p.get('decoded'):
            for raw, dec in zip(p['excerpt'].split('\n'),
                                p['decoded'].split('\n')):
                if raw.rstrip() != dec.rstrip():
                    lines[raw.rstrip()] = dec.rstrip()
    if not lines:
        return
    for t in tests:
        text = t.get('excerpt')
        if not text:
            continue
        old = text.split('\n')
        new = [lines.get(ln.rstrip(), ln) for ln in old]
        if new != old:
            t['decoded'] = '\n'.join(new)


def symbolize(results_dir: str, artifacts: str) -> None:
    """Decode the kernel reports of RESULTS_DIR/results.json against the
    booted kernel's vmlinux in ARTIFACTS, and write it back with
    "symbolized" saying with what, or why not. A run without kernel
    reports is not touched."""
    path = os.path.join(results_dir, 'results.json')
    try:
        with open(path, encoding='utf-8') as f:
            res: dict[str, Any] = json.load(f)
    except (OSError, ValueError) as e:
        raise Fail('cannot read %s: %s' % (path, e)) from None
    problems = res.get('kernel_problems') or []
    if not any(p.get('excerpt') for p in problems):
        return
    info: dict[str, str | None] = {'tool': None, 'vmlinux': None,
                                   'error': None}
    try:
        xz = vmlinux_xz(artifacts, res)
        info['vmlinux'] = xz
        tool = decoder()
        info['tool'] = tool
        with tempfile.TemporaryDirectory(prefix='symbolize.') as tmp:
            vmlinux = unpacked(xz, tmp)
            for p in problems:
                if p.get('excerpt'):
                    p['decoded'] = decode(tool, vmlinux, p['excerpt'])
        decode_tests(res.get('tests') or [], problems)
    except NoDecode as e:
        info['error'] = str(e)
        print('symbolize: kernel reports not decoded: %s' % e,
              file=sys.stderr)
    res['symbolized'] = info
    try:
        with open(path + '.tmp', 'w', encoding='utf-8') as f:
            json.dump(res, f, indent=2)
            f.write('\n')
        os.replace(path + '.tmp', path)
    except OSError as e:
        raise Fail('cannot write %s: %s' % (path, e)) from None


# --help: the summary, then what the module's docstring says after its
# first paragraph
DOC = ('Decode the kernel reports of a run to file:line.\n\n'
       + __doc__.split('\n\n', 1)[1])


def configure(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('--artifacts', default=None,
                    help='the artifact set booted (default: ARTIFACTS, '
                    'else artifacts/)')
    ap.add_argument('results', metavar='RESULTS_DIR')


def run(a: argparse.Namespace) -> int:
    symbolize(a.results, a.artifacts or default_artifacts())
    return 0
