"""In-process unit tests of pipeline/knobs.py: the knobs of one run
(KCONFIG_ADD, APPEND, QEMU_ARGS; issue 46) checked before anything is
built or removed, and the run variant they make: a variant of its own
(its own name, artifacts and results), whose kernel is the variant's
unless KCONFIG_ADD gives it one of its own, with every knob recorded.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import os
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_config import Project  # noqa: E402
from pipeline import Fail, config, knobs  # noqa: E402


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


class DeriveTest(unittest.TestCase):

    def setUp(self):
        self.p = Project(self)
        env = mock.patch.dict(os.environ,
                              {'BUILD': os.path.join(self.p.dir, 'build')})
        env.start()
        self.addCleanup(env.stop)
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


if __name__ == '__main__':
    unittest.main()
