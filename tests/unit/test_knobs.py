"""In-process unit tests of pipeline/knobs.py: the knobs of one run
(KCONFIG_ADD, APPEND, QEMU_ARGS; issue 46) checked before anything is
built or removed, and the run variant they make: a variant of its own
(its own name, artifacts and results), whose kernel is the variant's
unless KCONFIG_ADD gives it one of its own, with every knob recorded.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import os
import subprocess
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_config import Project  # noqa: E402
from pipeline import Fail, config, kerneltree, knobs  # noqa: E402


class ParseTest(unittest.TestCase):

    def bad(self, msg, **env):
        with self.assertRaises(Fail) as e:
            knobs.from_env(env)
        self.assertIn(msg, str(e.exception))

    def test_no_knobs_is_none(self):
        self.assertIsNone(knobs.from_env({}))
        self.assertIsNone(knobs.from_env({'KCONFIG_ADD': ' ', 'APPEND': ''}))

    def test_the_knobs_as_recorded(self):
        k = knobs.from_env({'KCONFIG_ADD': 'CONFIG_A=y  CONFIG_B=n CONFIG_C=0x10'
                                           ' CONFIG_D="x"',
                            'APPEND': 'nohz_full=1 foo.bar=2',
                            'QEMU_ARGS': '-name knobbed'})
        self.assertEqual({'kconfig_add': ['CONFIG_A=y', 'CONFIG_B=n',
                                          'CONFIG_C=0x10', 'CONFIG_D="x"'],
                          'append': 'nohz_full=1 foo.bar=2',
                          'qemu_args': '-name knobbed'}, k)

    def test_bad_input_is_named(self):
        self.bad("KCONFIG_ADD: 'FOO=y' is not CONFIG_NAME=VALUE",
                 KCONFIG_ADD='FOO=y')
        self.bad("KCONFIG_ADD: 'CONFIG_A' is not CONFIG_NAME=VALUE",
                 KCONFIG_ADD='CONFIG_A')
        self.bad("KCONFIG_ADD: 'CONFIG_A=' is not", KCONFIG_ADD='CONFIG_A=')
        self.bad('KCONFIG_ADD sets CONFIG_A twice',
                 KCONFIG_ADD='CONFIG_A=y CONFIG_A=n')
        # the verdict needs the kernel's warnings on the console
        self.bad('APPEND: quiet keeps warnings off the console',
                 APPEND='quiet')
        self.bad('keeps warnings off the console', APPEND='loglevel=3')
        self.bad("APPEND: console= is the harness's", APPEND='console=tty0')
        self.bad("APPEND: 'a\"b' has a character", APPEND='a"b')
        self.bad("QEMU_ARGS: -kernel is the harness's",
                 QEMU_ARGS='-kernel /x')
        self.bad("QEMU_ARGS: 'a$b' has a character", QEMU_ARGS='a$b')


class ProjectCase(unittest.TestCase):
    """A project of its own, its build/ the one BUILD names."""

    def setUp(self):
        self.p = Project(self)
        env = mock.patch.dict(os.environ,
                              {'BUILD': os.path.join(self.p.dir, 'build')})
        env.start()
        self.addCleanup(env.stop)


class DeriveTest(ProjectCase):

    def setUp(self):
        super().setUp()
        self.p.variant('default', '#@ cmdline = a=1', 'CONFIG_X=y')
        self.p.variant('iso', '#@ extends = default', '#@ kernel = default',
                       '#@ cmdline += b=2')

    def test_append_and_qemu_args_boot_the_variants_kernel(self):
        k = {'kconfig_add': [], 'append': 'c=3', 'qemu_args': '-name q'}
        name = knobs.derive('iso', k)
        self.assertRegex(name, r'^iso-knobs-[0-9a-f]{8}$')
        config.check_name(name)
        v = config.Variant(name)
        self.assertEqual('default', v.kernel)
        self.assertEqual('a=1 b=2 c=3', v.params['cmdline'])
        self.assertEqual(['-name', 'q'], v.params['qemu_args'])
        self.assertEqual(dict(k, variant='iso'), v.as_dict()['knobs'])
        # not a variant of configs/: never in a default set
        self.assertNotIn(name, config.names())
        # the same knobs, the same name; others, another
        self.assertEqual(name, knobs.derive('iso', k))
        self.assertNotEqual(name, knobs.derive('iso', dict(k, append='c=4')))

    def test_kconfig_add_makes_a_kernel_of_its_own(self):
        k = {'kconfig_add': ['CONFIG_Y=y', 'CONFIG_Z=n'], 'append': '',
             'qemu_args': ''}
        name = knobs.derive('iso', k)
        v = config.Variant(name)
        self.assertRegex(v.kernel, r'^default-kconfig-[0-9a-f]{8}$')
        kv = config.Variant(v.kernel)
        self.assertFalse(kv.boot_only)
        lines = kv.kconfig_lines()
        self.assertIn('CONFIG_X=y', lines)
        self.assertEqual(['CONFIG_Y=y', '# CONFIG_Z is not set'], lines[-2:])
        # its own identity: another Kconfig hash than the variant's kernel
        self.assertNotEqual(config.Variant('default').kconfig_sha256(),
                            kv.kconfig_sha256())
        self.assertEqual({'variant': 'default', 'kconfig_add': k['kconfig_add'],
                          'append': '', 'qemu_args': ''},
                         kv.as_dict()['knobs'])
        self.assertNotIn('knobs', config.Variant('default').as_dict())


class TreeTest(ProjectCase):
    """KERNEL_TREE (pipeline/kerneltree.py): the tree's kernel, the
    series' options it lacks stated off, its state."""

    def setUp(self):
        super().setUp()
        self.p.variant('default', 'CONFIG_X=y', 'CONFIG_SER=y')
        self.p.variant('iso', '#@ extends = default', '#@ kernel = default')
        self.p.write('patches/0001-a.patch', '+++ b/k/Kconfig\n+config SER\n'
                     '+\tbool\n+menuconfig SER_MENU\n config OLD\n')
        self.p.write('patches/series', '0001-a.patch\n')
        self.tree = os.path.join(self.p.dir, 'tree')
        self.p.write('tree/Makefile', 'all:\n')
        self.p.write('tree/scripts/kconfig/merge_config.sh', '')
        self.p.write('tree/k/Kconfig', 'config OLD\n\tbool\n')
        git = ['git', '-C', self.tree, '-c', 'user.name=t',
               '-c', 'user.email=t@t']
        subprocess.run(git + ['init', '-q'], check=True)
        subprocess.run(git + ['add', '-A'], check=True)
        subprocess.run(git + ['commit', '-qm', 'x'], check=True)

    def test_the_series_options(self):
        self.assertEqual(['CONFIG_SER', 'CONFIG_SER_MENU'],
                         kerneltree.series_options())
        self.assertEqual(['CONFIG_SER', 'CONFIG_SER_MENU'],
                         kerneltree.series_options_absent(self.tree))
        self.p.write('tree/k/Kconfig.ser', 'menuconfig SER_MENU\n')
        self.assertEqual(['CONFIG_SER'],
                         kerneltree.series_options_absent(self.tree))

    def test_from_env_checks_the_tree(self):
        k = knobs.from_env({'KERNEL_TREE': self.tree})
        self.assertEqual(self.tree, k['kernel_tree'])
        # without it, the records stay as they were
        self.assertNotIn('kernel_tree', knobs.from_env({'APPEND': 'a=1'}))
        for path, msg in ((self.tree + '/nosuch', 'is not a directory'),
                          ('tree', 'is not an absolute path'),
                          (self.p.dir + '/patches', 'is not a kernel tree'),
                          (self.tree + '/k', 'is not a kernel tree')):
            with self.assertRaises(Fail) as e:
                knobs.from_env({'KERNEL_TREE': path})
            self.assertIn(msg, str(e.exception))

    def test_a_kernel_of_its_own_with_the_missing_options_off(self):
        k = knobs.from_env({'KERNEL_TREE': self.tree, 'APPEND': 'a=1'})
        v = config.Variant(knobs.derive('iso', k))
        self.assertRegex(v.kernel, r'^default-tree-[0-9a-f]{8}$')
        kv = config.Variant(v.kernel)
        self.assertFalse(kv.boot_only)
        self.assertEqual('tree', kv.params['source'])
        self.assertEqual(self.tree, kv.params['kernel_tree'])
        self.assertEqual(['# CONFIG_SER is not set',
                          '# CONFIG_SER_MENU is not set'],
                         kv.kconfig_lines()[-2:])
        self.assertEqual(['CONFIG_SER', 'CONFIG_SER_MENU'],
                         kv.knobs['series_options_off'])
        self.assertEqual(self.tree, v.knobs['kernel_tree'])

    def test_source_tree_needs_its_tree(self):
        self.p.variant('bad', '#@ extends = default', '#@ source = tree')
        with self.assertRaises(Fail) as e:
            config.Variant('bad')
        self.assertIn("'#@ source = tree' needs '#@ kernel_tree", str(
            e.exception))

    def test_the_state_follows_the_tree(self):
        d0, s0 = kerneltree.state(self.tree)
        self.assertNotIn('dirty', d0)
        self.assertEqual((d0, s0), kerneltree.state(self.tree))
        self.p.write('tree/new.c', 'x')
        d1, s1 = kerneltree.state(self.tree)
        self.assertNotEqual(s0, s1)
        self.p.write('tree/new.c', 'y')
        self.assertNotEqual(s1, kerneltree.state(self.tree)[1])
        os.remove(os.path.join(self.tree, 'new.c'))
        self.assertEqual(s0, kerneltree.state(self.tree)[1])
        self.p.write('tree/Makefile', 'all: x\n')
        d2, s2 = kerneltree.state(self.tree)
        self.assertTrue(d2.endswith('-dirty'))
        self.assertNotEqual(s0, s2)


if __name__ == '__main__':
    unittest.main()
