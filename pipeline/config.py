"""The one reader of the pipeline's configuration: variant files, suite
files, the kselftest targets and the patch series.

A variant file, configs/<name>.variant, is a Kconfig fragment plus run
parameters:

    #@ key = value      set a parameter
    #@ key += words     append to the value so far (inherited or set)
    #@ extends = other  inherit other's fragment and parameters (first)
    #@ kernel = other   a boot-only variant: boot other's kernel (no
                        Kconfig lines of its own)
    CONFIG_X=y / # CONFIG_X is not set / other # comments / blank lines

A suite file, guest-tests/<suite>/suite.conf, holds `key = value` lines.

The series file, patches/series, names one patch per line (its first word;
quilt's options after it are ignored), '#' starts a comment line, blank
lines are skipped. An absent or empty series is valid: it builds the
pristine source.

Everything that needs a variant's parameters, fragments or suites (build,
config, initramfs, the CI files' tests) or the series (prepare-source,
series-check, patches-export, artifacts manifest, artifacts stale) asks
this module: in Python by importing it, in bash through the `config`
subcommand (scripts/pipeline config, `config series` for the series). So
no two stages can disagree about what a variant or the series holds. The
defaults live in PARAMS and SUITE_PARAMS and nowhere else. Adding a
parameter is one line in one of them. The boot side does not read this:
it reads artifacts/<variant>/variant.json, which the build writes from
what this module resolved.

Python 3.11 standard library only (Debian 12).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
from typing import Any

from pipeline import Fail, sha256, testsel
from pipeline.cli import Command

TOP = os.environ.get('TOP') or os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))


def configs_dir() -> str:
    return os.environ.get('CONFIGS') or os.path.join(TOP, 'configs')


def guest_tests_dir() -> str:
    return os.environ.get('GUEST_TESTS') or os.path.join(TOP, 'guest-tests')


def _positive_int(text):
    if not re.fullmatch(r'[0-9]+', text) or int(text) < 1:
        raise ValueError('expected a positive whole number, not %r' % text)
    return int(text)


def _whole(text):
    if not re.fullmatch(r'[0-9]+', text):
        raise ValueError('expected a whole number, not %r' % text)
    return int(text)


def _mem(text):
    if not re.fullmatch(r'[0-9]+[KMGT]?', text):
        raise ValueError('expected a QEMU memory size such as 512M, not %r'
                         % text)
    return text


def _text(text):
    return text


def _words(text):
    return text.split()


def _one_of(first, second):
    """A parser of a parameter that is either @first or @second."""
    def parse(text):
        if text not in (first, second):
            raise ValueError('expected %s or %s, not %r' % (first, second,
                                                             text))
        return text
    return parse


_set = _one_of('quick', 'full')


def _cpu(text):
    if text and not re.fullmatch(r'[A-Za-z0-9][A-Za-z0-9_.-]*', text):
        raise ValueError('expected a QEMU CPU model name such as max, not %r'
                         % text)
    return text


def _source(text):
    if text not in ('series', 'pristine'):
        raise ValueError('expected series (the patched tree) or pristine '
                         '(its tag pristine, no series), not %r' % text)
    return text


def _icount(text):
    if text and not re.fullmatch(r'[a-z]+(=[a-z0-9]+)?(,[a-z]+(=[a-z0-9]+)?)*',
                                 text):
        raise ValueError('expected QEMU -icount options such as '
                         'shift=0,sleep=off (one word), not %r' % text)
    return text


def _config_base(text):
    if text not in ('tiny', 'debian'):
        raise ValueError('expected tiny (tinyconfig + base.config) or debian '
                         "(Debian's own config, package linux-config-*), "
                         'not %r' % text)
    return text


def targets_conf() -> str:
    return os.environ.get('TARGETS_CONF') or os.path.join(
        TOP, 'kselftests', 'targets.conf')


def kselftest_targets() -> list[str]:
    """The kselftest targets the pipeline can build (targets.conf)."""
    path = targets_conf()
    try:
        with open(path, encoding='utf-8') as f:
            return [ln.split()[0] for ln in f
                    if ln.strip() and not ln.lstrip().startswith('#')]
    except OSError as e:
        raise Fail('cannot read the kselftest targets: %s' % e) from None


def _targets(text):
    words = text.split()
    known = kselftest_targets()
    for w in words:
        if w not in known:
            raise ValueError("unknown kselftest target '%s' (%s has: %s)" % (
                w, rel_to_top(targets_conf()), ' '.join(known)))
    return list(dict.fromkeys(words))


def _test_globs(text):
    """Globs over a suite's test ids without the suite part,
    program[/test] (TESTS's characters and components, pipeline/testsel.py)."""
    globs = text.split()
    for g in globs:
        if not testsel.GLOB_RE.fullmatch(g) or g.startswith('/') or \
                '//' in g or g.endswith('/'):
            raise ValueError("expected globs program[/test] over the "
                             "suite's test ids (as TESTS writes them, "
                             "without the suite), not %r" % g)
    return globs


def _yes_no(text):
    if text not in ('yes', 'no'):
        raise ValueError('expected yes or no, not %r' % text)
    return text == 'yes'


# Run parameters of a variant: name -> (parser, default text, meaning).
PARAMS = {
    'smp': (_positive_int, '2', 'QEMU -smp'),
    'mem': (_mem, '512M', 'QEMU -m'),
    'cmdline': (_text, '', 'kernel command line words (after the '
                'harness console=ttyS0 panic=-1)'),
    'qemu_args': (_words, '', 'words appended to the QEMU command line'),
    'suites': (_words, 'smoke', 'guest-test suites run by default'),
    'package_suites': (_words, 'smoke', 'guest-test suites make '
                       'boot-packages runs from the root filesystem its '
                       'packages were installed into (kernels with a 9p '
                       'root; each must be one of the initramfs\'s)'),
    'boot_timeout': (_positive_int, '120', 'seconds to the READY marker'),
    'silence': (_positive_int, '120', 'seconds the console may be quiet'),
    'timeout_scale': (_positive_int, '1', 'factor on every suite timeout'),
    'final': (_text, '', 'guest command after the suites (e.g. '
              'debug-checks)'),
    'kselftests': (_targets, '', 'kernel selftest targets '
                   '(kselftests/targets.conf) the suite kselftest runs'),
    'kselftest_set': (_set, 'quick', 'quick (skip.conf\'s slow tests left '
                      'out) or full; KSELFTEST=quick|full overrides it'),
    'source': (_source, 'series', 'the kernel tree built: series (the '
               'patched tree) or pristine (its tag, no series)'),
    'fragments': (_words, '', 'extra Kconfig fragments of configs/, '
                  'merged after base.config'),
    'config': (_config_base, 'tiny', 'what the fragments are merged onto: '
               'tiny (tinyconfig + base.config) or debian (Debian\'s config '
               'of the pinned source, package linux-config-*)'),
    'default_set': (_yes_no, 'yes', 'built and booted when VARIANTS is not '
                    'given (make, make check CHECK=full, CI jobs); no: only '
                    'when named'),
    'icount': (_icount, '', 'QEMU -icount options (e.g. shift=0,sleep=off): '
               'the guest clock counts instructions, so benchmark times do '
               'not depend on the host; boots single-threaded TCG, never '
               'KVM; empty: off'),
    'tcg_threads': (_one_of('multi', 'single'), 'multi', 'multi (a host thread per vCPU) '
                    'or single (one TCG thread runs every vCPU in turn: '
                    'QEMU 7.2 can keep a stale translation of kernel text '
                    'another vCPU is patching, see docs/usage.md); no effect '
                    'under KVM'),
    'cpu': (_cpu, '', 'the QEMU CPU model under TCG (-cpu), e.g. max: '
            'every feature TCG emulates, AMD SVM with nested paging among '
            'them; empty: QEMU\'s default (qemu64: SVM without nested '
            'paging). Under KVM the host\'s (-cpu host)'),
    'localmodconfig': (_text, '', 'a module list of configs/ (lsmod '
                       'output; # comments) that the kernel\'s make '
                       'localmodconfig cuts Debian\'s modules down to, '
                       'before the fragments are merged: built-in choices '
                       'stay Debian\'s; only with config = debian'),
    'series_check': (_yes_no, 'no', 'make series-check builds its kernel '
                     'from the head of the series: a configuration no '
                     'variant of the default set has (!SMP, PREEMPT_RT) '
                     'still compiles'),
    'check_set': (_set, 'quick', 'the make check set that builds and boots '
                  'it when VARIANTS is not given: quick (every make check) '
                  'or full (only make check CHECK=full)'),
}
# Parameters the environment may override for one run (make VAR=...).
ENV_OVERRIDES = {'kselftest_set': 'KSELFTEST'}
# Keys that shape the variant rather than its run.
STRUCTURE = ('extends', 'kernel')

# Parameters of a suite (suite.conf): name -> (parser, default text, meaning).
SUITE_PARAMS = {
    'timeout': (_positive_int, '300', 'seconds for the whole suite'),
    'silence': (_whole, '0', 'seconds the suite may be quiet '
                '(the larger of this and the variant\'s counts)'),
    'ldlibs': (_words, '', 'extra link flags'),
    'kernel_files': (_words, '', 'kernel build outputs copied to bin/'),
    'all_variants': (_yes_no, 'no', 'built into every variant\'s '
                     'initramfs (run only when SUITES names it)'),
    'kselftest': (_yes_no, 'no', 'its programs are made at build time, one '
                  'per target of the variant\'s #@ kselftests '
                  '(scripts/kselftest-suite); timeout is added to their '
                  'measured budget'),
    'benchmarks': (_test_globs, '', 'tests that only measure (# metric: '
                   'lines, no assertion), globs program[/test] (* the whole '
                   'suite): one that ran to the end is bench in the results, '
                   'not a pass; failed, crashed or missing, as any test'),
}

NAME_RE = re.compile(r'[a-z0-9][a-z0-9_-]*')
# build/<name> holds a variant's objects: these directories are taken.
RESERVED = {'linux', 'src', 'ccache', 'repro', 'initramfs', 'guest-tests',
            'state', 'bisect', 'bisect-run', 'test-results', 'harness-results',
            'accel', 'symbols', 'pristine-src', 'ksft', 'pkg-boot'}

PARAM_RE = re.compile(r'^#@\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\+?=)\s?(.*)$')
KCONFIG_RE = re.compile(
    r'^(CONFIG_[A-Za-z0-9_]+=\S.*|# CONFIG_[A-Za-z0-9_]+ is not set)$')
SUITE_LINE_RE = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$')


def check_name(name: str) -> None:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise Fail("invalid variant name '%s' (use a-z, 0-9, - and _)" % name)
    if name in RESERVED:
        raise Fail("variant name '%s' is reserved" % name)


def default_names() -> list[str]:
    """The variants built and booted when none are named (VARIANTS empty:
    make, make check CHECK=full, the CI jobs): those without
    `#@ default_set = no`."""
    return [n for n in names() if Variant(n).params['default_set']]


def check_names(check_set: str) -> list[str]:
    """The default set as make check's CHECK_SET builds and boots it: the
    quick set leaves out the variants with `#@ check_set = full`."""
    return [n for n in default_names()
            if check_set == 'full' or Variant(n).params['check_set'] == 'quick']


def names() -> list[str]:
    """Every variant name, sorted."""
    d = configs_dir()
    try:
        files = os.listdir(d)
    except OSError as e:
        raise Fail('cannot list variants: %s' % e) from e
    return sorted(f[:-len('.variant')] for f in files
                  if f.endswith('.variant'))


def variant_path(name: str) -> str:
    return os.path.join(configs_dir(), name + '.variant')


def rel_to_top(path: str) -> str:
    """PATH relative to the project when it is inside it."""
    try:
        rel = os.path.relpath(path, TOP)
    except ValueError:
        return path
    return path if rel.startswith('..') else rel


def fragment_label(path: str) -> str:
    """How records name a fragment: configs/<file>, wherever CONFIGS is,
    so that a record does not depend on the checkout's path."""
    return 'configs/' + os.path.basename(path)


class _File:
    """One parsed variant file: its parameter operations and Kconfig."""

    def __init__(self, name):
        check_name(name)
        self.name = name
        self.path = variant_path(name)
        if not os.path.isfile(self.path):
            raise Fail("unknown variant '%s': no %s (known: %s)" % (
                name, rel_to_top(self.path), ' '.join(names()) or 'none'))
        self.ops = []        # (key, op, text, lineno)
        self.kconfig = []    # Kconfig lines in file order
        with open(self.path, encoding='utf-8') as f:
            for n, raw in enumerate(f, 1):
                self._line(raw.rstrip('\n').rstrip(), n)
        self.extends = self._single('extends')
        self.kernel = self._single('kernel')

    def where(self, n):
        return '%s:%d' % (rel_to_top(self.path), n)

    def _line(self, line, n):
        if line.startswith('#@'):
            m = PARAM_RE.match(line)
            if not m:
                raise Fail('%s: expected "#@ key = value" or "#@ key += '
                           'value", got %r' % (self.where(n), line))
            key, op, text = m.groups()
            text = text.strip()
            if key not in PARAMS and key not in STRUCTURE:
                raise Fail("%s: unknown parameter '%s' (known: %s)" % (
                    self.where(n), key, ', '.join(list(PARAMS) +
                                                  list(STRUCTURE))))
            if key in STRUCTURE and op != '=':
                raise Fail("%s: '%s' takes one variant name: use '='" % (
                    self.where(n), key))
            self.ops.append((key, op, text, n))
        elif KCONFIG_RE.match(line):
            self.kconfig.append(line)
        elif line.strip() == '' or line.startswith('#'):
            return
        else:
            raise Fail('%s: not a Kconfig line (CONFIG_X=... or "# CONFIG_X '
                       'is not set"), a #@ parameter or a comment: %r' % (
                           self.where(n), line))

    def _single(self, key):
        vals = [(t, n) for k, _, t, n in self.ops if k == key]
        if not vals:
            return None
        if len(vals) > 1:
            raise Fail("%s: '%s' is set twice in one file" % (
                self.where(vals[1][1]), key))
        text, n = vals[0]
        if text == '':
            return None
        try:
            check_name(text)
        except Fail as e:
            raise Fail('%s: %s' % (self.where(n), e)) from None
        return text


def _chain(name):
    """The variant files NAME is made of, parents first."""
    files = []
    seen = []
    cur = name
    while cur is not None:
        if cur in seen:
            raise Fail("variant '%s': 'extends' loop: %s" % (
                name, ' -> '.join(seen + [cur])))
        seen.append(cur)
        files.append(_File(cur))
        cur = files[-1].extends
    return list(reversed(files))


def _apply(files, table):
    """Fold the '=' / '+=' operations of FILES (parents first) into text."""
    raw = {}
    origin = {}
    for f in files:
        for key, op, text, n in f.ops:
            if key not in table:
                continue
            if op == '=' or key not in raw:
                raw[key] = text
            else:
                raw[key] = ' '.join(x for x in (raw[key], text) if x)
            origin[key] = f.where(n)
    return raw, origin


def _parse_params(raw, origin, table, what):
    out = {}
    for key, (parse, default, _) in table.items():
        text = raw.get(key, default)
        try:
            out[key] = parse(text)
        except ValueError as e:
            raise Fail('%s: %s: %s' % (origin.get(key, what), key, e)) \
                from None
    return out


class Variant:
    """A resolved variant: parameters, kernel, fragments, suites."""
    name: str
    chain: list[str]                # the files it is made of, parents first
    params: dict[str, Any]          # every PARAMS key, parsed
    kernel: str                     # the variant whose kernel it boots
    boot_only: bool                 # kernel is another variant's
    fragment_files: list[str]       # merge_config.sh's inputs, in order
    module_list: str | None         # localmodconfig's lsmod list

    def __init__(self, name: str) -> None:
        self.files = _chain(name)
        self.name = name
        self.chain = [f.name for f in self.files]
        self.module_list = None
        raw, origin = _apply(self.files, PARAMS)
        for key, var in ENV_OVERRIDES.items():
            if os.environ.get(var):
                raw[key] = os.environ[var]
                origin[key] = 'the environment (%s)' % var
        self.params = _parse_params(raw, origin, PARAMS,
                                    'defaults of ' + name)
        kraw, korigin = _apply(self.files, {'kernel': None})
        kernel = kraw.get('kernel') or None
        if kernel is not None:
            leaf = self.files[-1]
            if leaf.kconfig:
                raise Fail("variant '%s' boots the kernel of '%s' (#@ kernel)"
                           " and cannot have Kconfig lines of its own" % (
                               name, kernel))
            if kernel == name:
                raise Fail('%s: a variant cannot boot itself as #@ kernel' %
                           korigin['kernel'])
            kv = Variant(kernel)
            if kv.boot_only:
                raise Fail("%s: '%s' is boot-only itself; name the variant "
                           "whose kernel it boots (%s)" % (
                               korigin['kernel'], kernel, kv.kernel))
            self.kernel = kernel
            self.fragment_files = kv.fragment_files
            self.module_list = kv.module_list
        else:
            self.kernel = name
            extra = []
            for frag in self.params['fragments']:
                path = os.path.join(configs_dir(), frag)
                if '/' in frag or not os.path.isfile(path):
                    raise Fail("%s: fragments: no fragment '%s' in %s" % (
                        origin['fragments'], frag, rel_to_top(configs_dir())))
                extra.append(path)
            lm = self.params['localmodconfig']
            if lm:
                path = os.path.join(configs_dir(), lm)
                if '/' in lm or not os.path.isfile(path):
                    raise Fail("%s: localmodconfig: no module list '%s' in "
                               "%s" % (origin['localmodconfig'], lm,
                                       rel_to_top(configs_dir())))
                if self.params['config'] != 'debian':
                    raise Fail("%s: localmodconfig cuts down Debian's "
                               "modules: it needs '#@ config = debian'" %
                               origin['localmodconfig'])
                self.module_list = path
            # base.config makes tinyconfig a QEMU guest; Debian's config
            # already is a whole machine's.
            base = [os.path.join(configs_dir(), 'base.config')] \
                if self.params['config'] == 'tiny' else []
            self.fragment_files = base + extra + [f.path for f in self.files]
        self.boot_only = kernel is not None
        for s in self.params['suites']:
            if suite_conf(s, 'variant %s' % name)['kselftest'] and \
                    not self.params['kselftests']:
                raise Fail("variant '%s': suite %s needs '#@ kselftests = "
                           "TARGET...' (the targets it runs)" % (name, s))
        # A package_suites line must name suites the variant has; it is
        # inherited through #@ extends, so a variant with fewer suites than
        # the one it extends names its own. (The default, smoke, is
        # checked by boot-packages, the one user, for kernels it boots.)
        if 'package_suites' in origin:
            have = self.initramfs_suites()
            for s in self.params['package_suites']:
                if s not in have:
                    raise Fail("%s: '#@ package_suites' names suite '%s', "
                               "which is not in the initramfs of %s (it "
                               "has: %s)" % (origin['package_suites'], s,
                                             name, ' '.join(have)))

    def kconfig_lines(self) -> list[str]:
        """The Kconfig lines merge_config.sh gets, in its order."""
        # (what they are merged onto is an input of the kernel too)
        out = [] if self.params['config'] == 'tiny' else \
            ['# merged onto: %s' % self.params['config']]
        if self.module_list:
            # the modules localmodconfig keeps decide the config too
            out.append('# localmodconfig: %s' % fragment_label(
                self.module_list))
            out.extend(modules(self.module_list))
        for p in self.fragment_files:
            if p.endswith('.variant'):
                out.extend(_File(os.path.basename(p)[:-8]).kconfig)
            else:
                with open(p, encoding='utf-8') as f:
                    out.extend(ln.rstrip('\n') for ln in f)
        return out

    def kconfig_sha256(self) -> str:
        """One hash over kconfig_lines(): kernel.json records it, and
        `artifacts stale` compares it with the checkout's."""
        text = ''.join(line + '\n' for line in self.kconfig_lines())
        return hashlib.sha256(text.encode()).hexdigest()

    def initramfs_suites(self) -> list[str]:
        """The suites built into this variant's initramfs: its own, then
        every suite marked all_variants, each once."""
        out = list(dict.fromkeys(self.params['suites']))
        for s in suite_names():
            if s not in out and suite_conf(s)['all_variants']:
                out.append(s)
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            'variant': self.name,
            'chain': self.chain,
            'kernel_variant': self.kernel,
            'boot_only': self.boot_only,
            'fragments': [fragment_label(p) for p in self.fragment_files],
            'params': self.params,
            'initramfs_suites': {s: suite_conf(s)
                                 for s in self.initramfs_suites()},
        }


def modules(path: str) -> list[str]:
    """The module names of an lsmod list (its first column; comments, blank
    lines and lsmod's header dropped), sorted, each once: what
    localmodconfig reads of it."""
    try:
        with open(path, encoding='utf-8') as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Fail('cannot read the module list: %s' % e) from None
    names = set()
    for ln in lines:
        words = ln.split()
        if not words or words[0].startswith('#') or words[0] == 'Module':
            continue
        if not re.fullmatch(r'[A-Za-z0-9_-]+', words[0]):
            raise Fail('%s: not an lsmod line: %r' % (rel_to_top(path), ln))
        names.add(words[0].replace('-', '_'))
    return sorted(names)


def suite_names() -> list[str]:
    d = guest_tests_dir()
    try:
        entries = sorted(os.listdir(d))
    except OSError as e:
        raise Fail('cannot list suites: %s' % e) from e
    return [s for s in entries
            if os.path.isfile(os.path.join(d, s, 'suite.conf'))]


_suite_cache = {}


def suite_conf(suite: str, wanted_by: str | None = None) -> dict[str, Any]:
    """The parameters of one suite (guest-tests/SUITE/suite.conf)."""
    if suite in _suite_cache:
        return _suite_cache[suite]
    path = os.path.join(guest_tests_dir(), suite, 'suite.conf')
    if not re.fullmatch(r'[A-Za-z0-9][A-Za-z0-9_.-]*', suite) or \
            not os.path.isfile(path):
        raise Fail("unknown guest-test suite '%s'%s (no %s)" % (
            suite, ' named by %s' % wanted_by if wanted_by else '',
            rel_to_top(path)))
    raw, origin = {}, {}
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            if line.strip() == '' or line.lstrip().startswith('#'):
                continue
            m = SUITE_LINE_RE.match(line)
            where = '%s:%d' % (rel_to_top(path), n)
            if not m:
                raise Fail('%s: expected "key = value", got %r' % (
                    where, line.rstrip('\n')))
            key, text = m.groups()
            if key not in SUITE_PARAMS:
                raise Fail("%s: unknown suite parameter '%s' (known: %s)" % (
                    where, key, ', '.join(SUITE_PARAMS)))
            raw[key] = text
            origin[key] = where
    conf = _parse_params(raw, origin, SUITE_PARAMS, rel_to_top(path))
    _suite_cache[suite] = conf
    return conf


def render(value: Any) -> str:
    """A value as bash reads it: lists as space-separated words."""
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, list):
        return ' '.join(value)
    return str(value)


# The series (patches/series).

def patches_dir() -> str:
    return os.environ.get('PATCHES') or os.path.join(TOP, 'patches')


def series_names(directory: str | None = None) -> list[str]:
    """The patch file names of the series, in order; each must exist."""
    d = directory or patches_dir()
    path = os.path.join(d, 'series')
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding='utf-8') as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith('#'):
                continue
            name = words[0]
            if os.sep in name or name in ('.', '..'):
                raise Fail("patches/series names '%s': a patch is a file in "
                           "patches/ itself" % name)
            if not os.path.isfile(os.path.join(d, name)):
                raise Fail("patches/series names '%s', but patches/%s does "
                           "not exist" % (name, name))
            out.append(name)
    return out


def series_entries(directory: str | None = None) -> list[tuple[str, str]]:
    """[(name, sha256)] in series order."""
    d = directory or patches_dir()
    return [(n, sha256(os.path.join(d, n))) for n in series_names(d)]


def series_hash(directory: str | None = None) -> str:
    """One hash over the series: every patch's name and content, in order
    (the sha256 of the lines "NAME SHA256\\n")."""
    text = ''.join('%s %s\n' % e for e in series_entries(directory))
    return hashlib.sha256(text.encode()).hexdigest()


def series_lines(cmds: list[str]) -> list[str]:
    """What `config series CMDS...` prints: for each of list, paths and
    hash in the order asked, its answer."""
    out = []
    for cmd in cmds:
        if cmd == 'list':
            out += series_names()
        elif cmd == 'paths':
            out += [os.path.join(patches_dir(), n) for n in series_names()]
        else:
            out.append(series_hash())
    return out


# The config subcommand (scripts/pipeline config): what a variant is made of, for
# the shell steps. A call costs a Python start (~40 ms of CPU): a step
# asks per variant once (get NAME KEY..., each, initramfs), not per
# parameter.

CONFIG = """What a variant is made of, for the build scripts (pipeline/config.py).

usage:
  list [--all | --check quick|full]
                                the default set (what VARIANTS="" means: every
                                variant without #@ default_set = no); --all:
                                every variant (configs/*.variant); --check:
                                the default set of make check's set (quick
                                leaves out #@ check_set = full)
  check NAME...                 exit 2 naming the problem unless each resolves
  name NAME...                  exit 2 unless each is a valid variant name
                                (the one rule, also for a downloaded
                                artifact set whose variants configs/ lacks)
  show NAME                     the resolved variant as JSON
  get NAME KEY...               one parameter (lists space-separated), or
                                kernel (the variant whose kernel it boots);
                                a line per KEY
  each KEY NAME...              "NAME VALUE" of KEY (as get) for each NAME:
                                one call for a whole set
  kernels NAME...               the kernels NAMEs boot, each once, in order
  fragments NAME                config fragments for merge_config.sh, in order
  kconfig NAME                  the fragments' Kconfig lines, in order
  modules NAME                  its localmodconfig module list's names (none:
                                empty)
  suites NAME [KEY]             the suites built into its initramfs; with
                                KEY, each as "SUITE VALUE" (one call for
                                every suite)
  suite SUITE KEY               one parameter of guest-tests/SUITE/suite.conf
  initramfs NAME                what scripts/build-initramfs needs, in one
                                call: lines "kernel K", "kselftests T...",
                                "kselftest_set S", "sha256 H" (of `show`),
                                "fragment PATH" each, and per suite in
                                order "suite S KSELFTEST", "kernel_files S
                                FILES..." and "ldlibs S FLAGS..."
  params                        every parameter with its default and meaning
  series COMMAND...             the patch series in patches/ (PATCHES names
                                another directory), for each COMMAND in
                                order (hash list: one call where
                                prepare-source made two):
                                  list   the patch file names, in order (each
                                         must exist)
                                  paths  the same as paths
                                  hash   one sha256 over every patch's name
                                         and content, in order

A call costs a Python start (~40 ms); a build asks per variant once, not
per parameter. Exit 0, or 2 with a message naming the file and line of a
bad input.
"""


def suite_param_text(suite: str, key: str) -> str:
    """One parameter of SUITE as bash reads it."""
    conf = suite_conf(suite)
    if key not in conf:
        raise Fail("unknown suite parameter '%s' (known: %s)" % (
            key, ', '.join(SUITE_PARAMS)))
    return render(conf[key])


def param_text(v: Variant, key: str) -> str:
    """One parameter of resolved variant V as bash reads it, or kernel."""
    if key == 'kernel':
        return v.kernel
    if key in v.params:
        return render(v.params[key])
    raise Fail("unknown parameter '%s' (known: kernel, %s)" % (
        key, ', '.join(PARAMS)))


def show_json(v: Variant) -> str:
    """The resolved variant as JSON (`config show`)."""
    return json.dumps(v.as_dict(), indent=2, sort_keys=True)


def initramfs_facts(v: Variant) -> list[str]:
    """The facts of V scripts/build-initramfs needs, one per line."""
    out = ['kernel %s' % v.kernel,
           'kselftests %s' % param_text(v, 'kselftests'),
           'kselftest_set %s' % param_text(v, 'kselftest_set'),
           # the hash of `config show`'s output, newline included
           'sha256 %s' % hashlib.sha256(
               (show_json(v) + '\n').encode()).hexdigest()]
    out += ['fragment %s' % f for f in v.fragment_files]
    for s in v.initramfs_suites():
        out.append('suite %s %s' % (s, suite_param_text(s, 'kselftest')))
        for key in ('kernel_files', 'ldlibs'):
            out.append('%s %s %s' % (key, s, suite_param_text(s, key)))
    return out


def params_table() -> list[str]:
    """Every parameter with its default and meaning (`config params`)."""
    out = []
    for table, what in ((PARAMS, 'variant'), (SUITE_PARAMS, 'suite')):
        for k, (_, default, meaning) in table.items():
            out.append('%-8s %-14s %-8s %s' % (what, k, default or '""',
                                               meaning))
    return out


def _config_args(ap: argparse.ArgumentParser) -> None:
    sub = ap.add_subparsers(dest='cmd', required=True, metavar='COMMAND')
    p = sub.add_parser('list')
    g = p.add_mutually_exclusive_group()
    g.add_argument('--all', action='store_true')
    g.add_argument('--check', choices=('quick', 'full'))
    sub.add_parser('params')
    sub.add_parser('series').add_argument(
        'cmds', choices=('list', 'paths', 'hash'), nargs='+',
        metavar='COMMAND')
    for cmd in ('check', 'name', 'kernels'):
        sub.add_parser(cmd).add_argument('names', nargs='+', metavar='NAME')
    for cmd in ('show', 'fragments', 'kconfig', 'modules', 'initramfs'):
        sub.add_parser(cmd).add_argument('name', metavar='NAME')
    p = sub.add_parser('suites')
    p.add_argument('name', metavar='NAME')
    p.add_argument('key', metavar='KEY', nargs='?')
    p = sub.add_parser('get')
    p.add_argument('name', metavar='NAME')
    p.add_argument('keys', nargs='+', metavar='KEY')
    p = sub.add_parser('each')
    p.add_argument('key', metavar='KEY')
    p.add_argument('names', nargs='+', metavar='NAME')
    p = sub.add_parser('suite')
    p.add_argument('suite', metavar='SUITE')
    p.add_argument('key', metavar='KEY')


def config_lines(a: argparse.Namespace) -> list[str]:
    """What `config` (scripts/pipeline config) prints for parsed arguments A."""
    if a.cmd == 'list':
        if a.all:
            return names()
        return check_names(a.check) if a.check else default_names()
    if a.cmd == 'params':
        return params_table()
    if a.cmd == 'series':
        return series_lines(a.cmds)
    if a.cmd == 'check':
        for n in a.names:
            Variant(n)
        return []
    if a.cmd == 'name':
        for n in a.names:
            check_name(n)
        return []
    if a.cmd == 'kernels':
        return list(dict.fromkeys(Variant(n).kernel for n in a.names))
    if a.cmd == 'suite':
        return [suite_param_text(a.suite, a.key)]
    if a.cmd == 'each':
        return ['%s %s' % (n, param_text(Variant(n), a.key))
                for n in a.names]
    v = Variant(a.name)
    if a.cmd == 'show':
        return [show_json(v)]
    if a.cmd == 'fragments':
        return v.fragment_files
    if a.cmd == 'kconfig':
        return v.kconfig_lines()
    if a.cmd == 'modules':
        return modules(v.module_list) if v.module_list else []
    if a.cmd == 'suites':
        out = v.initramfs_suites()
        if a.key is not None:
            out = ['%s %s' % (s, suite_param_text(s, a.key)) for s in out]
        return out
    if a.cmd == 'get':
        return [param_text(v, k) for k in a.keys]
    return initramfs_facts(v)


def _config(a: argparse.Namespace) -> int:
    for line in config_lines(a):
        print(line)
    return 0


COMMANDS = [Command('config', CONFIG, _config_args, _config)]
