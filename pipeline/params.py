"""The parameters' table: every variant parameter (#@ key = value) and
suite parameter (suite.conf) with its parser, default and meaning, and
the kselftest targets a #@ kselftests value may name. The defaults live
here and nowhere else: adding a parameter is one line in PARAMS or
SUITE_PARAMS. pipeline/config.py reads the files against them.

Python 3.11 standard library only (Debian 12).
"""

from __future__ import annotations

import os
import re

from pipeline import Fail, rel_to_top, testsel, top


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
    if text not in ('series', 'pristine', 'tree'):
        raise ValueError('expected series (the patched tree), pristine '
                         '(its tag pristine, no series) or tree (#@ '
                         'kernel_tree), not %r' % text)
    return text


def _abs_path(text):
    # (a path that goes through make, podman's -v and the build's shell)
    if text and not re.fullmatch(r'/[A-Za-z0-9_.,:=/+@%~-]*', text):
        raise ValueError('expected an absolute path of letters, digits and '
                         '_ . , : = / + @ % ~ -, not %r' % text)
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
        top(), 'kselftests', 'targets.conf')


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
               'patched tree), pristine (its tag, no series) or tree '
               '(kernel_tree)'),
    'kernel_tree': (_abs_path, '', 'with source = tree: the kernel git '
                    'tree built, out of tree (KERNEL_TREE, '
                    'pipeline/knobs.py)'),
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
    'insn_profile': (_yes_no, 'no', 'load the instruction profiler, '
                     'tools/insn-profile (a QEMU TCG plugin), into a test '
                     'boot: per kernel function, the instructions of the '
                     'windows the guest program marks '
                     '(guest-tests/lib/insn_profile.h), in insn-profile.tsv '
                     'beside console.log; TCG only, meant for -icount\'s '
                     'single TCG thread'),
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
