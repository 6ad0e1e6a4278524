"""The knobs of one run (issue 46): KCONFIG_ADD='CONFIG_X=y ...' (Kconfig
lines), APPEND='...' (kernel command line words) and QEMU_ARGS='...'
(QEMU arguments), given to make, make test-variant or make boot, without
a new file in configs/.

KERNEL_TREE=PATH (pipeline/kerneltree.py) is one more: the kernel is
then KERNEL-tree-HASH, the variant's built from that git tree (and
KERNEL-tree-HASH-kconfig-HASH with KCONFIG_ADD too).

A run with knobs is the run of a variant of its own, a *run variant*
written to build/knobs/ (never configs/, so no default set has it):
NAME-knobs-HASH extends the variant, with APPEND and QEMU_ARGS added to
its cmdline and qemu_args, and boots the variant's kernel, or with
KCONFIG_ADD a kernel of its own, KERNEL-kconfig-HASH: the variant's
kernel plus those lines, built like any variant's (from the variant's
objects as its donor, through the dropped-option check) into its own
artifact directory, with its own Kconfig hash. The variant's own
artifacts and results are never touched. Each run variant's knobs are
in a .json beside its file; pipeline/config.py reads them into `config
show`, which variant.json, the boot's plan.json and results.json carry.

The knobs are checked before anything is built or removed: a Kconfig
word that is not CONFIG_NAME=VALUE, an APPEND that hides warnings from
the console (quiet, loglevel below 5: the verdict reads them there) or
sets the harness's console= or panic=, a QEMU argument the harness
sets itself, a character that would not survive make, podman and the
guest shell: exit 2 naming it.

Python 3.11 standard library only (Debian 12).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any, Mapping

from pipeline import Fail, config, kerneltree
from pipeline.results.verdict import console_level_problem

# (environment variable, key in the records)
VARS = (('KCONFIG_ADD', 'kconfig_add'), ('APPEND', 'append'),
        ('QEMU_ARGS', 'qemu_args'), ('KERNEL_TREE', 'kernel_tree'))
KCONFIG_WORD_RE = re.compile(
    r'(CONFIG_[A-Za-z0-9_]+)=(y|m|n|-?[0-9]+|0x[0-9a-fA-F]+|"[^"\\\s]*")')
# What a word of APPEND or QEMU_ARGS may hold: it goes through make,
# podman, a variant file and expect.
WORD_RE = re.compile(r'[A-Za-z0-9_.,:=/+@%*~-]+')
WORD_CHARS = 'letters, digits and _ . , : = / + @ % * ~ -'
# The harness's own kernel arguments (pipeline/boot.py HARNESS_CMDLINE)
# and QEMU options (pipeline/boot.py qemu()).
HARNESS_ARGS = ('console', 'panic')
HARNESS_OPTIONS = ('-kernel', '-initrd', '-append', '-serial', '-monitor',
                   '-nographic', '-no-reboot', '-display', '-accel')


def _words(var: str, text: str) -> list[str]:
    words = text.split()
    for w in words:
        if not WORD_RE.fullmatch(w):
            raise Fail("%s: '%s' has a character a word here cannot have "
                       "(use %s)" % (var, w, WORD_CHARS))
    return words


def _kconfig(text: str) -> list[str]:
    seen: dict[str, str] = {}
    words = text.split()
    for w in words:
        m = KCONFIG_WORD_RE.fullmatch(w)
        if not m:
            raise Fail("KCONFIG_ADD: '%s' is not CONFIG_NAME=VALUE (VALUE "
                       "y, m, n, a number or a \"string\" without spaces)"
                       % w)
        if m.group(1) in seen:
            raise Fail('KCONFIG_ADD sets %s twice (%s, %s)' % (
                m.group(1), seen[m.group(1)], w))
        seen[m.group(1)] = w
    return words


def _append(text: str) -> str:
    words = _words('APPEND', text)
    for w in words:
        if console_level_problem(w):
            raise Fail('APPEND: %s keeps warnings off the console, where '
                       'the verdict reads them: %s' % (
                           w, console_level_problem(w)))
        if w.split('=', 1)[0] in HARNESS_ARGS:
            raise Fail("APPEND: %s= is the harness's (pipeline/boot.py): "
                       "%s" % (w.split('=', 1)[0], w))
    return ' '.join(words)


def _qemu_args(text: str) -> str:
    words = _words('QEMU_ARGS', text)
    for w in words:
        if w in HARNESS_OPTIONS:
            raise Fail("QEMU_ARGS: %s is the harness's (pipeline/boot.py "
                       "sets it)" % w)
    return ' '.join(words)


def from_env(env: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The knobs of ENV (default the environment), checked; None when
    none is given."""
    env = os.environ if env is None else env
    text = {key: env.get(var, '') for var, key in VARS}
    if not any(t.strip() for t in text.values()):
        return None
    out = {'kconfig_add': _kconfig(text['kconfig_add']),
           'append': _append(text['append']),
           'qemu_args': _qemu_args(text['qemu_args'])}
    if text['kernel_tree'].strip():
        # (only then: the records of runs without it stay as they were)
        out['kernel_tree'] = kerneltree.check(text['kernel_tree'].strip())
    return out


def _hash(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()
                          ).hexdigest()[:8]


def _kconfig_line(word: str) -> str:
    name, value = word.split('=', 1)
    return '# %s is not set' % name if value == 'n' else word


def _write(name: str, lines: list[str], knobs: dict[str, Any]) -> None:
    """build/knobs/NAME.variant and NAME.json, each replaced whole."""
    d = config.knobs_dir()
    os.makedirs(d, exist_ok=True)
    for ext, text in (('.json', json.dumps(knobs, indent=1) + '\n'),
                      ('.variant', ''.join(ln + '\n' for ln in lines))):
        path = os.path.join(d, name + ext)
        tmp = path + '.tmp'
        with open(tmp, 'w', encoding='utf-8') as f:
            f.write(text)
        os.replace(tmp, path)


def derive(variant: str, knobs: dict[str, Any]) -> str:
    """The run variant of VARIANT with KNOBS (from_env's), written to
    build/knobs/ (with its kernel's when KCONFIG_ADD gives it one);
    its name."""
    v = config.Variant(variant)
    kernel = v.kernel
    made = 'a run variant (pipeline/knobs.py) made for one run'
    if knobs.get('kernel_tree'):
        # KERNEL_TREE: the kernel of the variant built from that tree
        # (pipeline/kerneltree.py), the series' options it lacks stated
        # off
        tree = knobs['kernel_tree']
        off = kerneltree.series_options_absent(tree)
        own = '%s-tree-%s' % (kernel, _hash(kernel, tree, off))
        _write(own, ['# %s: the kernel of %s built from %s' % (
                         made, kernel, tree),
                     '#@ extends = %s' % kernel, '#@ source = tree',
                     '#@ kernel_tree = %s' % tree] +
               ['# %s is not set' % o for o in off],
               {'variant': kernel, 'kernel_tree': tree,
                'series_options_off': off, 'kconfig_add': [], 'append': '',
                'qemu_args': ''})
        kernel = own
    if knobs['kconfig_add']:
        adds = knobs['kconfig_add']
        own = '%s-kconfig-%s' % (kernel, _hash(kernel, adds))
        _write(own, ['# %s: the kernel of %s with KCONFIG_ADD' % (
                         made, kernel),
                     '#@ extends = %s' % kernel] +
               [_kconfig_line(w) for w in adds],
               {'variant': kernel, 'kconfig_add': adds, 'append': '',
                'qemu_args': ''})
        kernel = own
    name = '%s-knobs-%s' % (variant, _hash(variant, knobs))
    lines = ['# %s: %s with its knobs' % (made, variant),
             '#@ extends = %s' % variant, '#@ kernel = %s' % kernel]
    if knobs['append']:
        lines.append('#@ cmdline += %s' % knobs['append'])
    if knobs['qemu_args']:
        lines.append('#@ qemu_args += %s' % knobs['qemu_args'])
    _write(name, lines, dict(knobs, variant=variant))
    config.Variant(name)     # it resolves, or exit 2 naming why
    return name
