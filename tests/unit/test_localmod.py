"""In-process unit tests of localmodconfig's rule in pipeline/build.py
(only modules may go; every change is listed).

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import argparse
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   '..', '..'))
sys.path.insert(0, TOP)
from pipeline import build  # noqa: E402
from pipeline.cli import build as build_cli  # noqa: E402

DEBIAN = """#
# Automatically generated file; DO NOT EDIT.
CONFIG_SMP=y
CONFIG_E1000=m
CONFIG_E1000E=m
CONFIG_E1000E_HWTS=y
CONFIG_9P_FS=m
# CONFIG_FOO is not set
CONFIG_LOCALVERSION=""
"""


class LocalmodTest(unittest.TestCase):

    def write(self, text):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        path = os.path.join(d.name, '.config')
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
        return path

    def read(self, text):
        return build.config_values(text)

    def test_an_unset_option_is_n(self):
        before = self.read(DEBIAN)
        self.assertEqual(['CONFIG_FOO: n -> y'], [str(c) for c in
                         build.config_changes(before,
                                              dict(before, CONFIG_FOO='y'))])

    def test_modules_dropped_and_what_went_with_them(self):
        before = self.read(DEBIAN)
        after = dict(before, CONFIG_E1000E='n')
        del after['CONFIG_E1000E_HWTS']    # olddefconfig drops it
        lines, bad = build.localmod_report(before, after)
        self.assertEqual([], bad)
        self.assertEqual(
            ["localmodconfig: 2 of Debian's 3 modules kept, 1 dropped; "
             '1 other options changed with them:',
             '  CONFIG_E1000E_HWTS: y -> n'], lines)

    def test_a_tristate_flip_is_an_error(self):
        before = self.read(DEBIAN)
        after = dict(before, CONFIG_SMP='m', CONFIG_9P_FS='y')
        _, bad = build.localmod_report(before, after)
        self.assertEqual(['CONFIG_9P_FS: m -> y', 'CONFIG_SMP: y -> m'],
                         [str(c) for c in bad])

    def test_command_writes_every_change_and_fails_on_a_flip(self):
        deb = self.write(DEBIAN)
        now = self.write(DEBIAN.replace('CONFIG_E1000=m',
                                        '# CONFIG_E1000 is not set'))
        out = os.path.join(os.path.dirname(now), 'changes')
        run = lambda *a: build_cli._localmod_diff(argparse.Namespace(
            debian=a[0], now=a[1], changes=out))
        with contextlib.redirect_stdout(io.StringIO()) as o:
            self.assertEqual(0, run(deb, now))
        self.assertIn("2 of Debian's 3 modules kept, 1 dropped", o.getvalue())
        with open(out, encoding='utf-8') as f:
            self.assertEqual('CONFIG_E1000: m -> n\n', f.read())
        flip = self.write(DEBIAN.replace('CONFIG_SMP=y', 'CONFIG_SMP=m'))
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()) as e:
            self.assertEqual(2, run(deb, flip))
        self.assertIn('CONFIG_SMP: y -> m', e.getvalue())

if __name__ == '__main__':
    unittest.main()
