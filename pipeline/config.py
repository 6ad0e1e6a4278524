"""The one reader of the pipeline's configuration: variant files, suite
files and the kselftest targets (the patch series is pipeline/series.py).

A variant file, configs/<name>.variant, is a Kconfig fragment plus run
parameters:

    #@ key = value      set a parameter
    #@ key += words     append to the value so far (inherited or set)
    #@ extends = other  inherit other's fragment and parameters (first)
    #@ kernel = other   a boot-only variant: boot other's kernel (no
                        Kconfig lines of its own)
    CONFIG_X=y / # CONFIG_X is not set / other # comments / blank lines

A suite file, guest-tests/<suite>/suite.conf, holds `key = value` lines.

Everything that needs a variant's parameters, fragments or suites (build,
config, initramfs, the CI files' tests) asks this module: in Python by
importing it, in bash through the `config` subcommand (scripts/pipeline
config). So no two stages can disagree about what a variant holds. The
defaults live in PARAMS and SUITE_PARAMS and nowhere else. Adding a
parameter is one line in one of them. The boot side does not read this:
it reads artifacts/<variant>/variant.json, which the build writes from
what this module resolved.

Python 3.11 standard library only (Debian 12).
"""

from __future__ import annotations

import json
import os
import re

from pipeline import Fail, rel_to_top, top
from pipeline.params import ENV_OVERRIDES, PARAMS, STRUCTURE, SUITE_PARAMS


def configs_dir() -> str:
    return os.environ.get('CONFIGS') or os.path.join(top(), 'configs')


def guest_tests_dir() -> str:
    return os.environ.get('GUEST_TESTS') or os.path.join(top(), 'guest-tests')


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


# The run variants the knobs of one run make (pipeline/knobs.py): their
# files are in build/knobs/, never in configs/ (no default set has them).
RUN_NAME_RE = re.compile(r'.+-(knobs|kconfig|tree)-[0-9a-f]{8}')


def knobs_dir() -> str:
    return os.path.join(os.environ.get('BUILD') or os.path.join(
        top(), 'build'), 'knobs')


def variant_path(name: str) -> str:
    path = os.path.join(configs_dir(), name + '.variant')
    if not os.path.isfile(path) and RUN_NAME_RE.fullmatch(name):
        run = os.path.join(knobs_dir(), name + '.variant')
        if os.path.isfile(run):
            return run
    return path


def run_knobs(path: str) -> dict[str, object] | None:
    """The knobs a run variant's file at PATH was made with (its .json
    beside it), or None for a variant of configs/."""
    if os.path.dirname(path) != knobs_dir():
        return None
    try:
        with open(path[:-len('.variant')] + '.json', encoding='utf-8') as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Fail('run variant %s: its knobs cannot be read: %s' % (
            path, e)) from None


def fragment_label(path: str) -> str:
    """How records name a fragment: configs/<file>, wherever CONFIGS is,
    so that a record does not depend on the checkout's path (a run
    variant's: build/knobs/<file>)."""
    where = 'build/knobs/' if os.path.dirname(path) == knobs_dir() else \
        'configs/'
    return where + os.path.basename(path)


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
    params: dict[str, object]       # every PARAMS key, parsed
    kernel: str                     # the variant whose kernel it boots
    boot_only: bool                 # kernel is another variant's
    fragment_files: list[str]       # merge_config.sh's inputs, in order
    module_list: str | None         # localmodconfig's lsmod list
    knobs: dict[str, object] | None # a run variant's knobs (pipeline/knobs.py)

    def __init__(self, name: str) -> None:
        self.files = _chain(name)
        self.name = name
        self.chain = [f.name for f in self.files]
        self.knobs = run_knobs(self.files[-1].path)
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
        if not self.boot_only and self.params['source'] == 'tree' and \
                not self.params['kernel_tree']:
            raise Fail("variant '%s': '#@ source = tree' needs '#@ "
                       "kernel_tree = /path/of/the/tree'" % name)
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
        import hashlib  # (lazily: most calls need no hash)
        return hashlib.sha256(text.encode()).hexdigest()

    def initramfs_suites(self) -> list[str]:
        """The suites built into this variant's initramfs: its own, then
        every suite marked all_variants, each once."""
        out = list(dict.fromkeys(self.params['suites']))
        for s in suite_names():
            if s not in out and suite_conf(s)['all_variants']:
                out.append(s)
        return out

    def as_dict(self) -> dict[str, object]:
        return {
            'variant': self.name,
            'chain': self.chain,
            'kernel_variant': self.kernel,
            'boot_only': self.boot_only,
            'fragments': [fragment_label(p) for p in self.fragment_files],
            'params': self.params,
            'initramfs_suites': {s: suite_conf(s)
                                 for s in self.initramfs_suites()},
            **({'knobs': self.knobs} if self.knobs else {}),
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


def suite_conf(suite: str, wanted_by: str | None = None) -> dict[str, object]:
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


def render(value: object) -> str:
    """A value as bash reads it: lists as space-separated words."""
    if isinstance(value, bool):
        return 'yes' if value else 'no'
    if isinstance(value, list):
        return ' '.join(value)
    return str(value)
