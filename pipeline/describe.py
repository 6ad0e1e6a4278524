"""The writers of the artifact contract's two files (pipeline/artifacts.py):
kernel.json (scripts/build-kernel) and variant.json with the smoke
suite's expected facts (scripts/build-initramfs); `scripts/pipeline build
describe-artifacts` runs them. The variant's parameters come from
pipeline/config.py, the kernel's facts from its kernel.json.

Python 3.11 standard library only (Debian 12).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from pipeline import Fail, config, series, sha256, testsel
from pipeline.artifacts import KERNEL_FORMAT, VARIANT_FORMAT


def _load(path: str, what: str) -> Any:
    try:
        with open(path, encoding='utf-8') as f:
            return json.load(f)
    except OSError as e:
        raise Fail('%s: %s' % (what, e)) from None
    except ValueError as e:
        raise Fail('%s: %s is not valid JSON: %s' % (what, path, e)) \
            from None


def dump_json(obj: Any, path: str) -> None:
    """OBJ as PATH (indented, sorted keys), replaced whole, never written
    in place."""
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write('\n')
    os.replace(tmp, path)


def write_kernel_json(variant: str, obj: str, out: str, ccache: str,
                      durations: list[str],
                      series_sha256: str | None,
                      tree: dict[str, Any] | None = None) -> None:
    """OUT/kernel.json: what the kernel in OUT was built from in OBJ
    (fragments and their hashes, the Kconfig lines' hash, .config and
    bzImage hashes, release, build DURATIONS as NAME=SECONDS; with
    SERIES_SHA256, the series the tree holds: its patches when patches/
    still is that series)."""
    v = config.Variant(variant)
    if v.boot_only:
        raise Fail("variant '%s' is boot-only: it has no kernel of its "
                   "own" % variant)
    took = {}
    for d in durations:
        name, _, secs = d.partition('=')
        try:
            took[name] = float(secs)
        except ValueError:
            raise Fail('--duration %s: expected NAME=SECONDS' % d) from None
    release_file = os.path.join(obj, 'include/config/kernel.release')
    try:
        with open(release_file, encoding='utf-8') as f:
            release = f.read().strip()
    except OSError as e:
        raise Fail('no kernel release: %s' % e) from None
    # The patches, when the tree holds the series patches/ has now (the
    # hash prepare-source recorded for it): what `artifacts stale` compares.
    patches = None
    if series_sha256 and series_sha256 == series.series_hash():
        patches = [{'name': n, 'sha256': h}
                   for n, h in series.series_entries()]
    dump_json({
        'format': KERNEL_FORMAT,
        'series': patches,
        'variant': variant,
        'release': release,
        'source': v.params['source'],
        # KERNEL_TREE: the tree, its git describe and state
        # (pipeline/kerneltree.py; artifacts stale compares the state)
        **({'tree': tree} if tree else {}),
        'fragments': [{'path': config.fragment_label(p),
                       'sha256': sha256(p)}
                      for p in v.fragment_files],
        'config_sha256': sha256(os.path.join(out, 'config')),
        'kconfig_sha256': v.kconfig_sha256(),
        'bzImage_sha256': sha256(os.path.join(out, 'bzImage')),
        'headers_sha256': sha256(os.path.join(out, 'headers.tar.xz')),
        'ccache': ccache,
        'durations_s': took,
        # What the kernel build put into OUT (it starts empty): the files
        # a download of this kernel needs, also without its guest side.
        'files': sorted({f for f in os.listdir(out)
                         if not f.startswith('.')} | {'kernel.json'}),
    }, os.path.join(out, 'kernel.json'))


def kernel_facts(v: config.Variant, kdir: str) -> dict[str, Any]:
    """KDIR/kernel.json, checked to be the kernel V boots."""
    k = _load(os.path.join(kdir, 'kernel.json'),
              'the kernel of %s (%s)' % (v.name, v.kernel))
    if k.get('format') != KERNEL_FORMAT or k.get('variant') != v.kernel:
        raise Fail('%s/kernel.json is not the kernel of %s' % (
            kdir, v.kernel))
    return k


def expected_lines(variant: str, kdir: str) -> list[str]:
    """The initramfs's /etc/pipeline/expected: what the guest's smoke
    suite checks the running kernel (KDIR/kernel.json) and its boot
    against."""
    v = config.Variant(variant)
    k = kernel_facts(v, kdir)
    return ['%s=%s' % (key, val) for key, val in (
        ('variant', v.name), ('release', k['release']),
        ('config_sha256', k['config_sha256']),
        ('cmdline', v.params['cmdline']), ('smp', v.params['smp']))]


def programs(out: str, suite: str) -> list[str]:
    """The programs of SUITE the build put into OUT/guest-tests."""
    d = os.path.join(out, 'guest-tests', suite)
    try:
        return sorted(f for f in os.listdir(d)
                      if os.path.isfile(os.path.join(d, f)))
    except OSError:
        return []


def program_tests(path: str) -> list[str] | None:
    """The tests of a guest program, when it can name them without running
    one: a kselftest_harness program's "-l" table, a kselftest target's
    "--list" (scripts/kselftest-suite); None for any other program, which
    is not started here. The names go into the plan of every boot
    (scripts/pipeline boot plan), so that a test that never printed is named."""
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError:
        return None
    if testsel.HARNESS_USAGE in data:
        args, parse = ['-l'], testsel.harness_tests
    elif testsel.KSELFTEST_LINE_RE.search(data):
        args, parse = ['--list'], str.split
    else:
        return None
    # Nothing of the build's environment or terminal: some programs'
    # constructors act on variables of their own (the exec tests' child
    # markers).
    why = None
    try:
        r = subprocess.run([path] + args, capture_output=True, text=True,
                           timeout=30, cwd=os.path.dirname(path),
                           stdin=subprocess.DEVNULL, check=False,
                           env={'PATH': '/usr/bin:/bin'})
    except (OSError, subprocess.SubprocessError) as e:
        why = str(e)
    else:
        # the harness lists to stderr under its "# FIXTURE" header and
        # exits 4 (KSFT_SKIP); a target's program lists to stdout, exit 0
        if args == ['-l'] and r.stderr.startswith('# FIXTURE') and \
                r.returncode == 4:
            return parse(r.stderr) or None
        if args == ['--list'] and r.returncode == 0:
            return parse(r.stdout) or None
        why = 'exit %d, %r' % (r.returncode, (r.stderr or r.stdout)[:80])
    # no names: its results are still counted against its KTAP plan
    print('pipeline build describe-artifacts: warning: %s %s did not list its tests: %s'
          % (path, ' '.join(args), why), file=sys.stderr)
    return None


def _suite_number(out: str, suite: str, file: str, what: str) -> int:
    path = os.path.join(out, 'guest-tests', suite, 'bin', file)
    try:
        with open(path, encoding='utf-8') as f:
            return int(f.read().strip())
    except (OSError, ValueError) as e:
        raise Fail('no kselftest %s for suite %s: %s' % (what, suite, e)) \
            from None


def kselftest_budget(out: str, suite: str) -> int:
    """The kselftest programs' measured time budget (build-initramfs)."""
    return _suite_number(out, suite, 'budget', 'time budget')


def kselftest_test_timeout(out: str, suite: str) -> int:
    """The largest per-test timeout of the suite's runner (in the guest,
    not scaled): a hung test is silent that long."""
    return _suite_number(out, suite, 'test-timeout', 'test timeout')


def benchmarks(suite: str, globs: list[str], progs: list[str],
               tests: dict[str, list[str]]) -> list[str]:
    """A suite's `benchmarks` (suite.conf: program[/test] globs) as globs
    over whole test ids, which the plan hands to pipeline/results.
    Each must name a program the build made, and a test of it when the
    program lists its tests: a misspelt one would leave its benchmark
    counted as a passing test, saying nothing."""
    def names(glob: str, prog: str) -> bool:
        m = testsel.matches(glob, suite, prog)
        if m is None:
            # a glob into the program: its tests, when it lists them
            return prog not in tests or any(
                testsel.matches(glob, suite, prog, t) for t in tests[prog])
        return m

    out = []
    for g in globs:
        full = '%s/%s' % (suite, g)
        if not any(names(full, p) for p in progs):
            conf = os.path.join(config.guest_tests_dir(), suite,
                                'suite.conf')
            raise Fail("%s: benchmarks: '%s' names no test of suite "
                       "%s (programs: %s)" % (
                           config.rel_to_top(conf), g, suite,
                           ' '.join(progs) or 'none'))
        out.append(full)
    return out


def write_variant_json(variant: str, out: str, kdir: str) -> None:
    """OUT/variant.json: everything a boot of VARIANT needs, and the only
    file of the build the boot side reads (docs/architecture.md: the
    artifact contract); the kernel's facts from KDIR/kernel.json."""
    v = config.Variant(variant)
    k = kernel_facts(v, kdir)
    initramfs = os.path.join(out, 'initramfs.cpio.gz')
    suites: dict[str, dict[str, Any]] = {}
    for s in v.initramfs_suites():
        conf = config.suite_conf(s)
        timeout = conf['timeout']
        if conf['kselftest']:
            # the kselftest programs' measured budget (build-initramfs)
            timeout += kselftest_budget(out, s)
        progs = programs(out, s)
        suites[s] = {'timeout': timeout, 'silence': conf['silence'],
                     'programs': progs}
        tests = {}
        for prog in progs:
            names = program_tests(os.path.join(out, 'guest-tests', s, prog))
            if names is not None:
                tests[prog] = names
        if tests:
            suites[s]['tests'] = tests
        if conf['benchmarks']:
            suites[s]['benchmarks'] = benchmarks(s, conf['benchmarks'],
                                                 progs, tests)
        if conf['kselftest']:
            suites[s]['test_timeout'] = kselftest_test_timeout(out, s)
    dump_json({
        'format': VARIANT_FORMAT,
        'variant': v.name,
        'chain': v.chain,
        'boot_only': v.boot_only,
        'kernel': {
            'variant': v.kernel,
            'release': k['release'],
            'bzImage_sha256': k['bzImage_sha256'],
            'config_sha256': k['config_sha256'],
            'fragments': k['fragments'],
            **({'tree': k['tree']} if k.get('tree') else {}),
        },
        'params': v.params,
        # a run variant's knobs (pipeline/knobs.py): what it was run with
        **({'knobs': v.knobs} if v.knobs else {}),
        'suites': suites,
        'initramfs': {
            'file': 'initramfs.cpio.gz',
            'sha256': sha256(initramfs),
            'guest_tests': 'guest-tests',
        },
    }, os.path.join(out, 'variant.json'))
