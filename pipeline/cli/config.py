"""The config subcommand (scripts/pipeline config): what a variant is
made of, for the shell steps, from the one reader pipeline/config.py.

A call costs a Python start (~40 ms of CPU): a step asks per variant
once (get NAME KEY..., each, initramfs), not per parameter. This module
imports pipeline.config alone, so that the call stays that cheap.
"""

from __future__ import annotations

import argparse
import json

from pipeline import Fail, cimatrix, config, series
from pipeline.cli import Command

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
  ci-matrix github|gitlab       the CI matrices of the default set
                                (pipeline/cimatrix.py, ci/matrix): github
                                "kernels=JSON" and "boots=JSON" lines for
                                $GITHUB_OUTPUT; gitlab the child pipeline
  knobs NAME...                 the run variant of each NAME with the knobs
                                of the environment (KCONFIG_ADD, APPEND,
                                QEMU_ARGS: pipeline/knobs.py), written to
                                build/knobs/, a name a line; without
                                knobs each NAME itself
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
    conf = config.suite_conf(suite)
    if key not in conf:
        raise Fail("unknown suite parameter '%s' (known: %s)" % (
            key, ', '.join(config.SUITE_PARAMS)))
    return config.render(conf[key])


def param_text(v: config.Variant, key: str) -> str:
    """One parameter of resolved variant V as bash reads it, or kernel."""
    if key == 'kernel':
        return v.kernel
    if key in v.params:
        return config.render(v.params[key])
    raise Fail("unknown parameter '%s' (known: kernel, %s)" % (
        key, ', '.join(config.PARAMS)))


def show_json(v: config.Variant) -> str:
    """The resolved variant as JSON (`config show`)."""
    return json.dumps(v.as_dict(), indent=2, sort_keys=True)


def initramfs_facts(v: config.Variant) -> list[str]:
    """The facts of V scripts/build-initramfs needs, one per line."""
    import hashlib  # (here: the other subcommands need no hash)
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
    for table, what in ((config.PARAMS, 'variant'), (config.SUITE_PARAMS, 'suite')):
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
    sub.add_parser('ci-matrix').add_argument('form',
                                             choices=('github', 'gitlab'))
    sub.add_parser('series').add_argument(
        'cmds', choices=('list', 'paths', 'hash'), nargs='+',
        metavar='COMMAND')
    for cmd in ('check', 'name', 'kernels', 'knobs'):
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
            return config.names()
        return config.check_names(a.check) if a.check else config.default_names()
    if a.cmd == 'params':
        return params_table()
    if a.cmd == 'ci-matrix':
        return cimatrix.github_lines() if a.form == 'github' else \
            [cimatrix.gitlab_child()]
    if a.cmd == 'series':
        return series.series_lines(a.cmds)
    if a.cmd == 'check':
        for n in a.names:
            config.Variant(n)
        return []
    if a.cmd == 'name':
        for n in a.names:
            config.check_name(n)
        return []
    if a.cmd == 'knobs':
        # (imported here: the other commands stay a light import)
        from pipeline import knobs
        k = knobs.from_env()
        return [knobs.derive(n, k) if k else n for n in a.names]
    if a.cmd == 'kernels':
        return list(dict.fromkeys(config.Variant(n).kernel for n in a.names))
    if a.cmd == 'suite':
        return [suite_param_text(a.suite, a.key)]
    if a.cmd == 'each':
        return ['%s %s' % (n, param_text(config.Variant(n), a.key))
                for n in a.names]
    v = config.Variant(a.name)
    if a.cmd == 'show':
        return [show_json(v)]
    if a.cmd == 'fragments':
        return v.fragment_files
    if a.cmd == 'kconfig':
        return v.kconfig_lines()
    if a.cmd == 'modules':
        return config.modules(v.module_list) if v.module_list else []
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
