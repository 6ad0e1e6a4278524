"""The artifact contract: what artifacts/<variant>/ holds and when its
kernel is current.

The build writes artifacts/ (scripts/build-kernel, build-initramfs,
manifest; kernel.json and variant.json with the writers of
pipeline/describe.py); the boot reads nothing else. Its files:

    <kernel>/kernel.json    what the kernel was built from (KERNEL_FORMAT)
    <kernel>/.inputs        the build's own record of its inputs, for the
                            next build (KernelInputs, JSON; not uploaded)
    <variant>/variant.json  everything a boot needs (VARIANT_FORMAT)
    manifest.json, SHA256SUMS   the whole set (`artifacts manifest`,
                            pipeline/manifest.py)

"Is this kernel current" has one rule, changes(): a kernel is the one
this checkout builds when none of the inputs it recorded differs from
the same input now. The build (scripts/build-kernel, to skip a build)
knows every input: the tree's commit, the Kconfig lines, its own scripts,
the toolchain, the timestamp, the tree. A boot (`artifacts stale`, to
refuse a stale kernel) knows only what the checkout has: the series in
patches/ and the Kconfig lines. Each asks with what it knows; an input
one side does not know (None) is not judged, so an older kernel.json
that lacks one is not called stale for it.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

from pipeline import Fail, config, kerneltree, sha256, top
from pipeline.series import series_entries

VARIANT_FORMAT = 'kernel-pipeline-variant/1'
KERNEL_FORMAT = 'kernel-pipeline-kernel/1'
# Every file a kernel build leaves in artifacts/<kernel>/: one missing
# means the build did not finish.
KERNEL_FILES = ('bzImage', 'config', 'System.map', 'vmlinux.xz',
                'headers.tar.xz', 'build.log', 'kernel.json')
INPUTS_FILE = '.inputs'


_REQUIRED = object()


def read_json(path: str, missing: Any = _REQUIRED) -> Any:
    """A JSON file of the contract; MISSING when it is not there, if given
    (else that is an error too)."""
    try:
        with open(path, encoding='utf-8') as f:
            return json.load(f)
    except FileNotFoundError as e:
        if missing is not _REQUIRED:
            return missing
        raise Fail(str(e)) from None
    except OSError as e:
        raise Fail(str(e)) from None
    except ValueError as e:
        raise Fail('%s is not valid JSON: %s' % (path, e)) from None


def load_json(path: str) -> Any:
    """A JSON file, or None when it is not there."""
    return read_json(path, None)


Series = tuple[tuple[str, str], ...]


@dataclasses.dataclass(frozen=True)
class KernelInputs:
    """What a kernel is built from. None: not known to whoever asks."""
    kconfig_sha256: str | None = None    # config.Variant.kconfig_sha256()
    series: Series | None = None         # (patch, sha256) in series order
    commit: str | None = None            # the kernel tree's HEAD
    tools_sha256: str | None = None      # the build scripts' bytes
    toolchain: str | None = None         # gcc and ld version lines
    timestamp: str | None = None         # KBUILD_BUILD_TIMESTAMP
    tree: str | None = None              # the tree's path (objects in it)
    # a KERNEL_TREE kernel's tree: HEAD, changes, untracked files hashed
    # (pipeline/kerneltree.py state())
    tree_state: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        if self.series is not None:
            d['series'] = [list(e) for e in self.series]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> KernelInputs:
        known = {f.name for f in dataclasses.fields(cls)}
        d = {k: v for k, v in d.items() if k in known}
        if d.get('series') is not None:
            d['series'] = tuple((n, h) for n, h in d['series'])
        return cls(**d)

    def merged(self, other: KernelInputs) -> KernelInputs:
        """These inputs, with other's where these do not know one."""
        return dataclasses.replace(self, **{
            k: v for k, v in dataclasses.asdict(other).items()
            if v is not None and getattr(self, k) is None})


def patch_changes(built: Series, now: Series) -> list[str]:
    """What differs between two series, for people."""
    old, new = dict(built), dict(now)
    out = ['%s (changed)' % n for n, h in now if n in old and old[n] != h]
    out += ['%s (new)' % n for n, _ in now if n not in old]
    out += ['%s (gone)' % n for n, _ in built if n not in new]
    if not out:
        out = ['the order of patches/series']
    return out


def changes(kernel: str, built: KernelInputs, now: KernelInputs) -> list[str]:
    """The one "is current" rule: each input known on both sides that
    differs, said for people. Empty: the kernel is current."""
    why = []

    def differs(key: str) -> bool:
        a, b = getattr(built, key), getattr(now, key)
        return a is not None and b is not None and a != b

    if differs('series'):
        assert built.series is not None and now.series is not None
        why.append('patches/ changed since it was built: ' +
                   ', '.join(patch_changes(built.series, now.series)))
    if differs('kconfig_sha256'):
        why.append('its Kconfig lines changed since it was built '
                   '(`scripts/pipeline config kconfig %s`)' % kernel)
    if differs('commit'):
        why.append('the kernel tree is at %s, it was built from %s' % (
            now.commit, built.commit))
    if differs('tools_sha256'):
        why.append('the build scripts changed since it was built')
    if differs('toolchain'):
        why.append('the toolchain is %s, it was built with %s' % (
            now.toolchain, built.toolchain))
    if differs('timestamp'):
        why.append('the build timestamp is %s, it was built at %s' % (
            now.timestamp, built.timestamp))
    if differs('tree'):
        why.append('the kernel tree is %s, it was built in %s' % (
            now.tree, built.tree))
    if differs('tree_state'):
        why.append('the kernel tree %s changed since it was built (its '
                   'HEAD, its changes or its untracked files)' % (
                       now.tree or built.tree or '(KERNEL_TREE)'))
    return why


def recorded(kernel_json: dict[str, Any] | None,
             inputs: dict[str, Any] | None = None) -> KernelInputs:
    """The inputs a built kernel records: kernel.json's (the patches,
    when it was built from the series as patches/ held it; the Kconfig
    lines), and the build's own .inputs where there is one."""
    k = kernel_json or {}
    series = None
    if k.get('source') == 'series' and k.get('series') is not None:
        series = tuple((p['name'], p['sha256']) for p in k['series'])
    tree = k.get('tree') if k.get('source') == 'tree' else None
    out = KernelInputs(kconfig_sha256=k.get('kconfig_sha256'), series=series,
                       tree_state=tree.get('state') if tree else None)
    if inputs:
        out = out.merged(KernelInputs.from_dict(inputs))
    return out


def checkout_inputs(kernel: str, series: bool = True) -> KernelInputs:
    """The inputs the checkout has for KERNEL's build (a boot's view):
    the Kconfig lines now, and with SERIES the patches in patches/ (read
    only when the kernel recorded its own: a bad series file is not a
    pristine kernel's problem)."""
    v = config.Variant(kernel)
    tree = {}
    if v.params['source'] == 'tree':
        # (its tree now: the one place a boot looks outside the checkout)
        path = v.params['kernel_tree']
        # (the path only names it: kernel.json records no path to judge)
        tree = {'tree': path, 'tree_state': kerneltree.state(
            kerneltree.check(path))[1]}
    return KernelInputs(
        kconfig_sha256=v.kconfig_sha256(),
        series=tuple(series_entries()) if series else None, **tree)


def stale_reason(name: str, artifacts: str) -> str | None:
    """Why the kernel variant NAME boots is not the one this checkout
    builds, or None (also when nothing is built: the boot says what is
    missing). A #@ run parameter is not a kernel input."""
    v = config.Variant(name)
    kernel = load_json(os.path.join(artifacts, v.kernel, 'kernel.json'))
    if kernel is None:
        return None
    built = recorded(kernel)
    why = changes(v.kernel, built,
                  checkout_inputs(v.kernel, built.series is not None))
    if not why:
        return None
    return 'the kernel in artifacts/%s is not the one this checkout builds: ' \
        '%s' % (v.kernel, '; '.join(why))


def build_reason(kernel: str, out: str, now: KernelInputs) -> str | None:
    """Why the kernel in OUT must be built again, or None: the build's
    side of the same rule, with every input, and every file there."""
    missing = [f for f in KERNEL_FILES if not os.path.isfile(
        os.path.join(out, f))]
    if missing:
        return 'no %s' % ', '.join(missing)
    try:
        inputs = load_json(os.path.join(out, INPUTS_FILE))
    except Fail:
        inputs = None
    if not isinstance(inputs, dict):
        # (also the hash an older build-kernel wrote there)
        return 'no record of its inputs'
    why = changes(kernel, recorded(load_json(os.path.join(out, 'kernel.json')),
                                   inputs), now)
    return '; '.join(why) or None


def write_inputs(out: str, inputs: KernelInputs) -> None:
    path = os.path.join(out, INPUTS_FILE)
    with open(path + '.tmp', 'w', encoding='utf-8') as f:
        json.dump(inputs.to_dict(), f, indent=1, sort_keys=True)
        f.write('\n')
    os.replace(path + '.tmp', path)


# manifest.json and SHA256SUMS: the record of a build and the hash of
# every file a download of it holds.

MANIFEST_FORMAT = 'kernel-pipeline-manifest/2'


def files_under(d: str) -> list[str]:
    """Every non-hidden file below d, as paths relative to d, sorted."""
    out = []
    for root, dirs, files in os.walk(d):
        dirs[:] = sorted(x for x in dirs if not x.startswith('.'))
        for f in files:
            if not f.startswith('.'):
                out.append(os.path.relpath(os.path.join(root, f), d))
    return sorted(out)


def manifest(artifacts: str, variants: list[str],
             record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The manifest of VARIANTS in ARTIFACTS on top of RECORD (what made
    them: source, series, toolchain, environment), and the sha256 of
    every file it covers: each variant's whole directory, and the kernel
    directory of a boot-only one, only its kernel files (nothing older
    that happens to lie in ARTIFACTS)."""
    dirs: dict[str, list[str]] = {}
    metas: dict[str, dict[str, Any]] = {}
    for v in dict.fromkeys(variants):
        d = os.path.join(artifacts, v)
        meta = read_json(os.path.join(d, 'variant.json'))
        if meta.get('variant') != v:
            raise Fail('%s/variant.json describes %r, not %r' % (
                d, meta.get('variant'), v))
        metas[v] = meta
        dirs[v] = files_under(d)
    for v, meta in list(metas.items()):
        k = meta['kernel']['variant']
        if k not in dirs:
            kernel = read_json(os.path.join(artifacts, k, 'kernel.json'))
            dirs[k] = sorted(kernel['files'])

    out = dict(record)
    out['variants'] = {}
    out['kernels'] = {}
    # Debian packages of a kernel (scripts/build-packages): its version and
    # files; the files' hashes are among the variant's artifacts.
    out['packages'] = {}
    for v in sorted(dirs):
        if 'packages.json' in dirs[v]:
            out['packages'][v] = read_json(
                os.path.join(artifacts, v, 'packages.json'))
    sums = {}
    for d, files in sorted(dirs.items()):
        for name in files:
            sums['%s/%s' % (d, name)] = sha256(os.path.join(artifacts, d,
                                                            name))
    for v, meta in sorted(metas.items()):
        e = dict(meta)
        e['artifacts'] = {n: sums['%s/%s' % (v, n)] for n in dirs[v]}
        out['variants'][v] = e
    for k in sorted({m['kernel']['variant'] for m in metas.values()}):
        kernel = read_json(os.path.join(artifacts, k, 'kernel.json'))
        kernel['artifacts'] = {n: sums['%s/%s' % (k, n)]
                               for n in kernel['files']}
        out['kernels'][k] = kernel
    return out, sums


def write_manifest(artifacts: str, m: dict[str, Any],
                   sums: dict[str, str]) -> None:
    """manifest.json, and SHA256SUMS over every file and the manifest:
    `cd artifacts && sha256sum -c SHA256SUMS` checks a download whole."""
    path = os.path.join(artifacts, 'manifest.json')
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(m, f, indent=2, sort_keys=True)
        f.write('\n')
    lines = ['%s  %s\n' % (h, p) for p, h in sorted(sums.items())]
    lines.append('%s  manifest.json\n' % sha256(path))
    with open(os.path.join(artifacts, 'SHA256SUMS'), 'w',
              encoding='utf-8') as f:
        f.writelines(lines)


# variant.json, the boot's whole input.

def variants_in(artifacts: str) -> list[str]:
    """The variants in an artifact set: those with a variant.json."""
    try:
        return sorted(d for d in os.listdir(artifacts)
                      if os.path.isfile(os.path.join(artifacts, d,
                                                     'variant.json')))
    except OSError:
        return []


def load_variant(artifacts: str, variant: str) -> dict[str, Any]:
    """ARTIFACTS/VARIANT/variant.json, checked to be one of this format."""
    config.check_name(variant)
    path = os.path.join(artifacts, variant, 'variant.json')
    if not os.path.isfile(path):
        have = variants_in(artifacts)
        raise Fail(
            'variant %s is not built: no %s (%s; build it with '
            "'make container-build VARIANTS=%s')" % (
                variant, path, 'built there: ' + ' '.join(have) if have
                else 'nothing is built there', variant))
    try:
        with open(path, encoding='utf-8') as f:
            v = json.load(f)
    except ValueError as e:
        raise Fail('%s is not valid JSON: %s' % (path, e)) from None
    if not isinstance(v, dict) or v.get('format') != VARIANT_FORMAT:
        raise Fail('%s: not a %s file (format %r); rebuild it with '
                   'this checkout' % (path, VARIANT_FORMAT, v.get('format')
                                      if isinstance(v, dict) else None))
    if v.get('variant') != variant:
        raise Fail('%s describes variant %r' % (path, v.get('variant')))
    return v


def boot_files(artifacts: str, v: dict[str, Any]) -> tuple[str, str]:
    """The bzImage and initramfs of a variant, checked against the hashes
    its variant.json recorded."""
    k = v['kernel']
    bz = os.path.join(artifacts, k['variant'], 'bzImage')
    initrd = os.path.join(artifacts, v['variant'], v['initramfs']['file'])
    for path, want, what in ((bz, k['bzImage_sha256'], 'kernel'),
                             (initrd, v['initramfs']['sha256'], 'initramfs')):
        if not os.path.isfile(path):
            raise Fail('the %s of %s is missing: no %s' % (
                what, v['variant'], path))
        if sha256(path) != want:
            raise Fail(
                '%s is not the %s %s was built with (sha256 differs from '
                'its variant.json): rebuild %s, or download the set again' %
                (path, what, v['variant'], v['variant']))
    return bz, initrd


# Where the checkout and its artifacts are.

def artifacts_dir() -> str:
    """artifacts/ of the checkout (ARTIFACTS names another)."""
    return os.environ.get('ARTIFACTS') or os.path.join(top(), 'artifacts')
