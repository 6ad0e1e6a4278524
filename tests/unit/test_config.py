"""In-process unit tests of pipeline/config.py, the one reader of variant
files, suite files, the kselftest targets and the series: what
scripts/pipeline config (and config series) print, without a process per
call.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.dont_write_bytecode = True
TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   '..', '..'))
sys.path.insert(0, TOP)
from pipeline import Fail, cli, config, series  # noqa: E402


class Project:
    """A scratch configs/, guest-tests/ and patches/ (CONFIGS, GUEST_TESTS,
    PATCHES point there for the test)."""

    def __init__(self, test):
        d = tempfile.TemporaryDirectory()
        test.addCleanup(d.cleanup)
        self.dir = d.name
        for sub in ('configs', 'guest-tests', 'patches'):
            os.makedirs(os.path.join(self.dir, sub))
        env = mock.patch.dict(os.environ, {
            'CONFIGS': os.path.join(self.dir, 'configs'),
            'GUEST_TESTS': os.path.join(self.dir, 'guest-tests'),
            'PATCHES': os.path.join(self.dir, 'patches')})
        env.start()
        test.addCleanup(env.stop)
        # suite.conf is cached per process: each test its own
        config._suite_cache.clear()
        test.addCleanup(config._suite_cache.clear)
        self.write('configs/base.config', 'CONFIG_BASE=y\n')
        self.suite('smoke')

    def write(self, rel, text):
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
        return path

    def variant(self, name, *lines):
        return self.write('configs/%s.variant' % name,
                          ''.join(ln + '\n' for ln in lines))

    def suite(self, name, *lines):
        self.write('guest-tests/%s/suite.conf' % name,
                   ''.join(ln + '\n' for ln in lines))


class NameTest(unittest.TestCase):
    """The variant-name rule, the one every script asks (variant name)."""

    def test_good_names(self):
        for n in ('default', 'debug-isolated', 'a_b', '0x'):
            config.check_name(n)

    def test_bad_names_say_why(self):
        for n in ('', '../x', 'a b', 'A', '-x', '_x', 'a/b'):
            with self.assertRaises(Fail) as e:
                config.check_name(n)
            self.assertIn("invalid variant name '%s'" % n, str(e.exception))

    def test_reserved_names(self):
        for n in ('linux', 'ccache', 'accel'):
            with self.assertRaises(Fail) as e:
                config.check_name(n)
            self.assertIn('reserved', str(e.exception))


class VariantTest(unittest.TestCase):

    def setUp(self):
        self.p = Project(self)

    def test_defaults_extends_and_append(self):
        self.p.variant('default', '#@ cmdline = a=1', 'CONFIG_X=y')
        self.p.variant('debug', '#@ extends = default', '#@ cmdline += b=2',
                       '#@ smp = 4', 'CONFIG_Y=y')
        v = config.Variant('debug')
        self.assertEqual(['default', 'debug'], v.chain)
        self.assertEqual('a=1 b=2', v.params['cmdline'])
        self.assertEqual(4, v.params['smp'])
        self.assertEqual('512M', v.params['mem'])
        self.assertEqual('debug', v.kernel)
        self.assertFalse(v.boot_only)
        self.assertEqual(['base.config', 'default.variant', 'debug.variant'],
                         [os.path.basename(f) for f in v.fragment_files])
        self.assertEqual(['CONFIG_BASE=y', 'CONFIG_X=y', 'CONFIG_Y=y'],
                         v.kconfig_lines())
        self.assertEqual(hashlib.sha256(
            b'CONFIG_BASE=y\nCONFIG_X=y\nCONFIG_Y=y\n').hexdigest(),
            v.kconfig_sha256())

    def test_boot_only_boots_the_other_kernel(self):
        self.p.variant('default', 'CONFIG_X=y')
        self.p.variant('crash', '#@ extends = default', '#@ kernel = default',
                       '#@ cmdline = fake=panic')
        v = config.Variant('crash')
        self.assertTrue(v.boot_only)
        self.assertEqual('default', v.kernel)
        self.assertEqual(config.Variant('default').fragment_files,
                         v.fragment_files)

    def test_bad_input_names_file_and_line(self):
        self.p.variant('a', '#@ smp = 2', '#@ smp = none')
        with self.assertRaises(Fail) as e:
            config.Variant('a')
        self.assertIn('configs/a.variant:2: smp:', str(e.exception))
        self.p.variant('b', '#@ nosuch = 1')
        with self.assertRaises(Fail) as e:
            config.Variant('b')
        self.assertIn("b.variant:1: unknown parameter 'nosuch'",
                      str(e.exception))

    def test_extends_loop(self):
        self.p.variant('a', '#@ extends = b')
        self.p.variant('b', '#@ extends = a')
        with self.assertRaises(Fail) as e:
            config.Variant('a')
        self.assertIn("'extends' loop: a -> b -> a", str(e.exception))

    def test_unknown_variant(self):
        self.p.variant('default')
        with self.assertRaises(Fail) as e:
            config.Variant('nosuch')
        self.assertIn("unknown variant 'nosuch'", str(e.exception))

    def test_sets(self):
        self.p.variant('default')
        self.p.variant('slow', '#@ check_set = full')
        self.p.variant('named', '#@ default_set = no')
        self.assertEqual(['default', 'named', 'slow'], config.names())
        self.assertEqual(['default', 'slow'], config.default_names())
        self.assertEqual(['default'], config.check_names('quick'))
        self.assertEqual(['default', 'slow'], config.check_names('full'))

    def test_environment_override(self):
        self.p.variant('default')
        with mock.patch.dict(os.environ, {'KSELFTEST': 'full'}):
            self.assertEqual('full',
                             config.Variant('default').params['kselftest_set'])

    def test_initramfs_suites_and_suite_conf(self):
        self.p.suite('every', 'all_variants = yes', 'timeout = 7')
        self.p.variant('default', '#@ suites = smoke')
        self.assertEqual(['smoke', 'every'],
                         config.Variant('default').initramfs_suites())
        self.assertEqual(7, config.suite_conf('every')['timeout'])
        self.assertEqual(300, config.suite_conf('smoke')['timeout'])
        with self.assertRaises(Fail):
            config.suite_conf('nosuch')

    def test_render(self):
        self.assertEqual('yes', config.render(True))
        self.assertEqual('a b', config.render(['a', 'b']))
        self.assertEqual('2', config.render(2))


class SeriesTest(unittest.TestCase):

    def setUp(self):
        self.p = Project(self)

    def test_no_series_is_the_pristine_source(self):
        self.assertEqual([], series.series_names())
        self.assertEqual(hashlib.sha256(b'').hexdigest(),
                         series.series_hash())

    def test_names_entries_and_hash(self):
        a = self.p.write('patches/0001-a.patch', 'one\n')
        self.p.write('patches/0002-b.patch', 'two\n')
        self.p.write('patches/series',
                     '# comment\n0001-a.patch -p1\n\n0002-b.patch\n')
        self.assertEqual(['0001-a.patch', '0002-b.patch'],
                         series.series_names())
        with open(a, 'rb') as f:
            ha = hashlib.sha256(f.read()).hexdigest()
        self.assertEqual(('0001-a.patch', ha), series.series_entries()[0])
        text = ''.join('%s %s\n' % e for e in series.series_entries())
        self.assertEqual(hashlib.sha256(text.encode()).hexdigest(),
                         series.series_hash())

    def test_a_missing_patch_or_a_path_is_an_error(self):
        self.p.write('patches/series', 'gone.patch\n')
        with self.assertRaises(Fail) as e:
            series.series_names()
        self.assertIn('patches/gone.patch does not exist', str(e.exception))
        self.p.write('patches/series', 'sub/x.patch\n')
        with self.assertRaises(Fail):
            series.series_names()

    def test_config_series_answers_in_the_order_asked(self):
        # prepare-source asks `hash list` in one call, patches-export and
        # build-packages `hash`
        self.p.write('patches/0001-a.patch', 'one\n')
        self.p.write('patches/series', '0001-a.patch\n')
        h = series.series_hash()
        self.assertEqual(h + '\n0001-a.patch',
                         Vout('series', 'hash', 'list'))
        self.assertEqual(os.path.join(self.p.dir, 'patches', '0001-a.patch'),
                         Vout('series', 'paths'))
        self.p.write('patches/series', 'gone.patch\n')
        rc, out, err = V('series', 'list')
        self.assertEqual((2, ''), (rc, out))
        self.assertIn('pipeline config: error: patches/series names '
                      "'gone.patch'", err)
        for bad in ((), ('nosuch',)):
            rc, _, err = V('series', *bad)
            self.assertEqual(2, rc)
            self.assertIn('usage: pipeline config series', err)

    def test_localmodconfig_module_list(self):
        """A module list of configs/ is read as localmodconfig reads it
        (first column, no header or comments, - as _), and it is an input of
        the kernel: another list is another kconfig hash."""
        self.p.write('configs/vm.lsmod', '# made by hand\n'
                     'Module                  Size  Used by\n'
                     'virtio_pci             24576  0\n'
                     '9pnet-virtio           20480  1\n\n')
        self.p.variant('vm', '#@ config = debian',
                       '#@ localmodconfig = vm.lsmod', 'CONFIG_X=y')
        v = config.Variant('vm')
        self.assertEqual(['9pnet_virtio', 'virtio_pci'],
                         config.modules(v.module_list))
        self.assertIn('# localmodconfig: configs/vm.lsmod', v.kconfig_lines())
        before = v.kconfig_sha256()
        self.p.write('configs/vm.lsmod', 'virtio_pci 1 0\n')
        self.assertNotEqual(before, config.Variant('vm').kconfig_sha256())
        self.p.variant('boot', '#@ kernel = vm')
        self.assertEqual(v.module_list, config.Variant('boot').module_list)

    def test_localmodconfig_bad_input(self):
        self.p.variant('a', '#@ config = debian',
                       '#@ localmodconfig = none.lsmod')
        with self.assertRaises(Fail) as e:
            config.Variant('a')
        self.assertIn("a.variant:2: localmodconfig: no module list "
                      "'none.lsmod'", str(e.exception))
        self.p.write('configs/vm.lsmod', 'virtio_pci 1 0\n')
        self.p.variant('b', '#@ localmodconfig = vm.lsmod')
        with self.assertRaises(Fail) as e:
            config.Variant('b')
        self.assertIn("needs '#@ config = debian'", str(e.exception))
        self.p.write('configs/bad.lsmod', 'virtio pci 1 0\nfoo/bar 1 0\n')
        self.p.variant('c', '#@ config = debian',
                       '#@ localmodconfig = bad.lsmod')
        with self.assertRaises(Fail) as e:
            config.modules(config.Variant('c').module_list)
        self.assertIn("configs/bad.lsmod: not an lsmod line: 'foo/bar 1 0'",
                      str(e.exception))


class RealConfigsTest(unittest.TestCase):
    """The checkout's own configs/ and guest-tests/ resolve."""

    def test_every_variant_resolves(self):
        with mock.patch.dict(os.environ):
            for var in ('CONFIGS', 'GUEST_TESTS', 'PATCHES', 'KSELFTEST'):
                os.environ.pop(var, None)
            for n in config.names():
                v = config.Variant(n)
                self.assertEqual(n, v.name)
                config.Variant(v.kernel)
            series.series_names()


def V(*argv):
    """`python3 -m pipeline config ARGV` (scripts/pipeline config) in-process:
    (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(['config'] + list(argv))
    return rc, out.getvalue(), err.getvalue()


def Vout(*argv):
    """What V(ARGV) prints, without its last newline; it must succeed."""
    rc, out, err = V(*argv)
    if rc != 0:
        raise AssertionError('config %s: exit %d: %s' % (
            ' '.join(argv), rc, err))
    return out[:-1] if out.endswith('\n') else out


def real_configs(test):
    """The checkout's own configs/ and guest-tests/ for TEST."""
    env = mock.patch.dict(os.environ)
    env.start()
    test.addCleanup(env.stop)
    for var in ('CONFIGS', 'GUEST_TESTS', 'PATCHES', 'KSELFTEST'):
        os.environ.pop(var, None)
    config._suite_cache.clear()
    test.addCleanup(config._suite_cache.clear)


class RealCommandLineTest(unittest.TestCase):
    """The config subcommand over the checkout's configs/ (moved from
    tests/tooling/project.bats, which ran scripts/pipeline config per call)."""

    def setUp(self):
        real_configs(self)

    def test_every_variant_resolves_its_parameters_and_suites(self):
        vs = Vout('list', '--all').split('\n')
        self.assertGreaterEqual(len(vs), 3)
        for v in vs:
            self.assertEqual((0, '', ''), V('check', v))
            self.assertTrue(Vout('get', v, 'smp'))
            self.assertTrue(Vout('get', v, 'mem'))
            for s in Vout('suites', v).split('\n'):
                self.assertTrue(Vout('suite', s, 'timeout'))

    def test_extends_inherits_and_an_unknown_variant_is_a_clear_error(self):
        self.assertEqual(['default', 'debug'],
                         json.loads(Vout('show', 'debug'))['chain'])
        self.assertIn('panic_on_warn=1', Vout('get', 'debug', 'cmdline'))
        self.assertEqual(Vout('get', 'default', 'smp'),
                         Vout('get', 'debug', 'smp'))
        self.assertEqual('default', Vout('get', 'isolated', 'kernel'))
        self.assertEqual('default\ndebug',
                         Vout('kernels', 'isolated', 'debug', 'default'))
        rc, _, err = V('get', 'nosuch', 'smp')
        self.assertEqual(2, rc)
        self.assertIn("unknown variant 'nosuch'", err)
        rc, _, err = V('check', 'a b')
        self.assertEqual(2, rc)
        self.assertIn('invalid variant name', err)

    def test_suites_key_is_one_line_per_suite_as_suite_says(self):
        # build-initramfs asks this for every variant on every build
        for v in Vout('list', '--all').split('\n'):
            if Vout('get', v, 'kernel') != v:
                continue
            for key in ('kernel_files', 'kselftest'):
                want = '\n'.join('%s %s' % (s, Vout('suite', s, key))
                                 for s in Vout('suites', v).split('\n'))
                self.assertEqual(want, Vout('suites', v, key), (v, key))
        rc, _, err = V('suites', 'default', 'nosuchkey')
        self.assertEqual(2, rc)
        self.assertIn("unknown suite parameter 'nosuchkey'", err)


class CommandLineTest(unittest.TestCase):
    """The config subcommand over scratch variants (moved from
    tests/tooling/project.bats)."""

    def setUp(self):
        self.p = Project(self)

    def cfg(self, *specs):
        """Variant files NAME:LINE|LINE... (project.bats's cfg)."""
        for spec in specs:
            name, _, lines = spec.partition(':')
            self.p.variant(name, *lines.split('|'))

    def fails(self, text, *argv):
        rc, out, err = V(*argv)
        self.assertEqual(2, rc, (argv, out))
        self.assertIn(text, err)

    def test_an_extends_loop_is_an_error_naming_the_loop(self):
        self.cfg('a:#@ extends = b|#@ smp = 3', 'b:#@ extends = a')
        self.fails("'extends' loop: a -> b -> a", 'get', 'a', 'smp')
        self.cfg('a:#@ extends = a')
        self.fails('loop: a -> a', 'get', 'a', 'smp')

    def test_defaults_assign_then_append_and_boot_only_rules(self):
        self.cfg('p:#@ cmdline = a|CONFIG_P=y',
                 'c:#@ extends = p|#@ cmdline += b|#@ cmdline += c|'
                 '#@ qemu_args = -numa node',
                 'b:#@ extends = c|#@ kernel = c|#@ smp = 4',
                 'bad:#@ kernel = p|CONFIG_X=y', 'bb:#@ kernel = b')
        self.assertEqual('2', Vout('get', 'p', 'smp'))
        self.assertEqual('512M', Vout('get', 'p', 'mem'))
        self.assertEqual('smoke', Vout('get', 'p', 'suites'))
        self.assertEqual('a b c', Vout('get', 'c', 'cmdline'))
        self.assertEqual('-numa node', Vout('get', 'c', 'qemu_args'))
        self.assertEqual('c', Vout('get', 'b', 'kernel'))
        self.assertEqual('4', Vout('get', 'b', 'smp'))
        self.assertEqual(['base.config', 'p.variant', 'c.variant'],
                         [os.path.basename(f) for f in
                          Vout('fragments', 'b').split('\n')])
        self.assertEqual('CONFIG_BASE=y\nCONFIG_P=y', Vout('kconfig', 'c'))
        self.fails('cannot have Kconfig lines of its own', 'get', 'bad',
                   'smp')
        self.fails("'b' is boot-only itself", 'get', 'bb', 'smp')

    def test_bad_input_is_2_naming_the_file_and_line(self):
        self.cfg('x:# fine|#@ smpp = 2')
        self.fails("configs/x.variant:2: unknown parameter 'smpp'",
                   'get', 'x', 'smp')
        self.cfg('x:#@ smp = two')
        self.fails("configs/x.variant:1: smp: expected a positive whole "
                   "number, not 'two'", 'get', 'x', 'smp')
        self.cfg('x:#@ mem 512M')
        self.fails('configs/x.variant:1: expected "#@ key = value"',
                   'get', 'x', 'mem')
        self.cfg('x:CONFIG_A=y|oops')
        self.fails('configs/x.variant:2: not a Kconfig line', 'kconfig', 'x')
        self.cfg('x:#@ suites = smoke nosuchsuite')
        self.fails("unknown guest-test suite 'nosuchsuite' named by "
                   "variant x", 'get', 'x', 'suites')

    def test_several_keys_and_names_in_one_call(self):
        self.cfg('p:#@ smp = 3|CONFIG_P=y', 'q:#@ extends = p|#@ kernel = p')
        self.assertEqual('3\np\nsmoke', Vout('get', 'q', 'smp', 'kernel',
                                              'suites'))
        self.assertEqual('p p\nq p', Vout('each', 'kernel', 'p', 'q'))
        self.assertEqual('p', Vout('kernels', 'q', 'p'))
        self.fails("unknown parameter 'nope'", 'get', 'p', 'nope')
        lines = Vout('initramfs', 'q').split('\n')
        self.assertEqual(['kernel p', 'kselftests ', 'kselftest_set quick'],
                         lines[:3])
        self.assertTrue(lines[3].startswith('sha256 '))
        self.assertEqual(['suite smoke no', 'kernel_files smoke ',
                          'ldlibs smoke '], lines[-3:])

    def test_usage_errors_are_2_and_it_answers_help(self):
        for argv in ((), ('get', 'p'), ('nosuchcommand',)):
            rc, _, err = V(*argv)
            self.assertEqual(2, rc, argv)
            self.assertIn('usage', err)
        rc, out, _ = V('--help')
        self.assertEqual(0, rc)
        self.assertTrue(out.startswith('usage: pipeline config'), out)
        self.assertIn('initramfs NAME', out)


if __name__ == '__main__':
    unittest.main()


class StartCost(unittest.TestCase):
    """scripts/pipeline config runs hundreds of times a build and a test
    run: its start imports nothing it does not use. dataclasses (through
    inspect), typing and hashlib were about 40 ms of CPU of a 130 ms call
    (7 December 2026)."""

    def test_config_imports_no_heavy_module_it_does_not_use(self):
        import subprocess
        r = subprocess.run(
            ['/usr/bin/python3', '-X', 'importtime',
             os.path.join(TOP, 'scripts', 'pipeline'), 'config', 'get',
             'default', 'kernel'],
            capture_output=True, text=True, check=True)
        self.assertEqual('default\n', r.stdout)
        imported = {line.split('|')[-1].strip()
                    for line in r.stderr.splitlines()
                    if line.startswith('import time:')}
        self.assertIn('pipeline.config', imported)
        for heavy in ('dataclasses', 'inspect', 'typing', 'hashlib'):
            self.assertNotIn(heavy, imported)
