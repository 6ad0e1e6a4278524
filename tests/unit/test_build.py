"""In-process unit tests of pipeline/build.py, the build side: the config
check (what scripts/pipeline build check-config prints: which fragment option survived
olddefconfig with which value).

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
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
from pipeline import artifacts, build, cli, config, describe  # noqa: E402


def run_cli(argv):
    """cli.main(ARGV): (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(argv)
    return rc, out.getvalue(), err.getvalue()


class Files:
    """Scratch files of one test."""

    def __init__(self, test):
        d = tempfile.TemporaryDirectory()
        test.addCleanup(d.cleanup)
        self.dir = d.name

    def __call__(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
        return path


class ConfigCheck(unittest.TestCase):
    """The fragments' options against the .config olddefconfig wrote."""

    def test_the_last_fragment_wins_in_the_order_first_asked(self):
        w = build.wanted_options([
            ('f1', 'CONFIG_A=y\nCONFIG_B=y\n# a comment\n'),
            ('f2', '# CONFIG_B is not set\nCONFIG_C="x y"\nCONFIG_A=m\n')])
        self.assertEqual([build.Wanted('CONFIG_A', 'm', 'f2'),
                          build.Wanted('CONFIG_B', 'n', 'f2'),
                          build.Wanted('CONFIG_C', '"x y"', 'f2')], w)
        self.assertEqual(['CONFIG_A=m', '# CONFIG_B is not set',
                          'CONFIG_C="x y"'], build.option_lines(w))

    def test_an_option_missing_from_the_config_is_n(self):
        w = build.wanted_options([('frag', 'CONFIG_A=y\n# CONFIG_B is not '
                                   'set\nCONFIG_C=y\n')])
        have = build.config_values('CONFIG_A=y\n# CONFIG_C is not set\n')
        self.assertEqual({'CONFIG_A': 'y'}, have)
        self.assertEqual([build.Dropped(w[2], None)],
                         build.dropped_options(w, have))

    def test_the_report_names_each_option_and_what_it_became(self):
        w = build.wanted_options([('frag', 'CONFIG_B=y\n# CONFIG_C is not '
                                   'set\n')])
        d = build.dropped_options(w, {'CONFIG_C': 'y'})
        self.assertEqual([
            'error: options the config fragments ask for did not survive '
            'olddefconfig:',
            '  CONFIG_B=y (from frag) became not set (missing dependency?)',
            '  CONFIG_C=n (from frag) became CONFIG_C=y'],
            build.dropped_report(d))
        self.assertEqual([], build.dropped_report([]))

    # (moved from tests/tooling/pipeline.bats, which ran scripts/pipeline build check-config)
    def test_an_option_dropped_by_olddefconfig_is_named_with_what_it_became(
            self):
        f = Files(self)
        frag = f('frag', 'CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n'
                 'CONFIG_D="x"\n')
        cfg = f('.config', 'CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=y\n'
                'CONFIG_D="x"\n')
        rc, out, err = run_cli(['build', 'check-config', cfg, frag])
        self.assertEqual(2, rc)
        self.assertEqual('', out)
        self.assertIn('CONFIG_B=y (from frag) became not set', err)
        self.assertIn('CONFIG_C=n (from frag) became CONFIG_C=y', err)
        self.assertNotIn('CONFIG_A', err)
        self.assertNotIn('CONFIG_D', err)

    # (moved from tests/tooling/pipeline.bats)
    def test_the_last_fragment_wins_and_a_config_that_has_everything_passes(
            self):
        f = Files(self)
        f1 = f('f1', 'CONFIG_A=y\nCONFIG_B=y\n')
        f2 = f('f2', '# CONFIG_B is not set\n')
        cfg = f('.config', 'CONFIG_A=y\n')
        self.assertEqual((0, '', ''),
                         run_cli(['build', 'check-config', cfg, f1, f2]))
        self.assertEqual((0, 'CONFIG_A=y\n# CONFIG_B is not set\n', ''),
                         run_cli(['build', 'check-config', '--list', f1, f2]))

    def test_missing_files_and_usage_errors_are_2(self):
        f = Files(self)
        frag = f('frag', 'CONFIG_A=y\n')
        for argv, msg in (
                ([], 'usage'),
                ([frag], 'usage'),
                (['--list'], 'usage'),
                ([os.path.join(f.dir, 'nope'), frag], 'nope does not exist'),
                ([frag, os.path.join(f.dir, 'gone')],
                 'config fragment %s does not exist'
                 % os.path.join(f.dir, 'gone'))):
            rc, out, err = run_cli(['build', 'check-config'] + argv)
            self.assertEqual(2, rc, argv)
            self.assertIn(msg, err, argv)

    def test_build_answers_help(self):
        rc, out, _ = run_cli(['build', '--help'])
        self.assertEqual(0, rc)
        self.assertTrue(out.startswith('usage: pipeline build'), out)
        self.assertIn('check-config', out)
        rc, out, _ = run_cli(['build', 'check-config', '--help'])
        self.assertEqual(0, rc)
        self.assertTrue(out.startswith('usage: pipeline build check-config'),
                        out)
        rc, out, _ = run_cli(['--help'])
        self.assertIn('build', out)
        for sub in ('kernel', 'expected', 'variant'):
            rc, out, _ = run_cli(['build', 'describe-artifacts', sub,
                                  '--help'])
            self.assertEqual(0, rc, sub)
            self.assertTrue(out.startswith(
                'usage: pipeline build describe-artifacts ' + sub), out)



class GuestFactsTest(unittest.TestCase):
    """The initramfs's /etc/pipeline: expected (what the smoke suite
    checks the running kernel against) and options (the fragments'
    options), written by one call of build-initramfs."""

    def test_expected_and_options_in_one_call(self):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from test_config import Project
        p = Project(self)
        p.variant('default', '#@ cmdline = a=1', 'CONFIG_X=y',
                  '# CONFIG_Y is not set')
        kdir = os.path.join(p.dir, 'artifacts', 'default')
        obj = os.path.join(p.dir, 'build', 'default')
        p.write('build/default/include/config/kernel.release', '6.12.0-x\n')
        for f in ('config', 'bzImage', 'headers.tar.xz'):
            p.write('artifacts/default/' + f, f)
        describe.write_kernel_json('default', obj, kdir, 'on', [], None)
        etc = os.path.join(p.dir, 'etc')
        os.makedirs(etc)
        rc, out, err = run_cli(['build', 'describe-artifacts', 'etc',
                                'default', kdir, etc])
        self.assertEqual((0, '', ''), (rc, out, err))
        with open(os.path.join(etc, 'expected'), encoding='utf-8') as f:
            self.assertEqual(describe.expected_lines('default', kdir),
                             f.read().splitlines())
        with open(os.path.join(etc, 'options'), encoding='utf-8') as f:
            self.assertEqual('CONFIG_BASE=y\nCONFIG_X=y\n'
                             '# CONFIG_Y is not set\n', f.read())
        self.assertEqual(['CONFIG_BASE=y', 'CONFIG_X=y',
                          '# CONFIG_Y is not set'],
                         build.fragment_options(config.Variant('default')))
        # what build-kernel hashes: the same as the fragments' --list
        frags = config.Variant('default').fragment_files
        self.assertEqual(run_cli(['build', 'check-config', '--list']
                                 + frags),
                         run_cli(['build', 'check-config', '--list',
                                  '--variant', 'default']))
        rc, _, err = run_cli(['build', 'check-config', '--variant',
                              'default'])
        self.assertEqual(2, rc)
        self.assertIn('usage', err)



class DonorTest(unittest.TestCase):
    """`build donor` (pipeline/donor.py) with build-kernel's arguments,
    on fake object directories: .config lines and .o.cmd files naming the
    symbols each object depends on (the whole rule, process and all:
    tests/integration/build-speed.bats)."""

    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.src = d.name
        self.obj('new', None, 'CONFIG_A=y\nCONFIG_B=y\n')

    def obj(self, name, commit, config_text, *deps):
        """SRC/.obj-NAME: its .config, a build record from COMMIT (None:
        none) and one object per DEPS (symbols, space-separated)."""
        d = os.path.join(self.src, '.obj-' + name)
        os.makedirs(d)
        with open(os.path.join(d, '.config'), 'w', encoding='utf-8') as f:
            f.write(config_text)
        if commit:
            with open(os.path.join(d, '.pipeline-built'), 'w',
                      encoding='utf-8') as f:
                f.write('{"commit": "%s", "toolchain": "gcc 12"}' % commit)
        for i, symbols in enumerate(deps):
            os.makedirs(os.path.join(d, 'dir%d' % i))
            with open(os.path.join(d, 'dir%d' % i, '.f%d.o.cmd' % i), 'w',
                      encoding='utf-8') as f:
                f.writelines('  $(wildcard include/config/%s) \\\n' % s
                             for s in symbols.split())

    def donor(self, toolchain='gcc 12'):
        return run_cli(['build', 'donor', self.src, 'new', '--commit', 'c1',
                        '--toolchain', toolchain])

    def test_the_most_reusable_objects_win(self):
        self.obj('near', 'c1', 'CONFIG_A=y\n', 'B', 'A B', 'A', '')
        self.obj('far', 'c1', '', 'B', 'A', 'A B', '')
        self.obj('old', 'c0', 'CONFIG_A=y\nCONFIG_B=y\n', '')
        rc, out, err = self.donor()
        self.assertEqual((0, 'near 2 4 1\n'), (rc, out), err)
        self.assertIn('donor far: candidate (1 of 4 objects reusable, 2 '
                      'symbols differ)', err)
        self.assertIn('donor old: not taken (built from another commit)',
                      err)
        rc, out, err = self.donor('gcc 13')
        self.assertEqual((0, ''), (rc, out))
        self.assertIn('donor near: not taken (built with another '
                      'toolchain)', err)

    def test_without_its_own_config_it_is_an_error(self):
        os.remove(os.path.join(self.src, '.obj-new', '.config'))
        rc, out, err = self.donor()
        self.assertEqual((2, ''), (rc, out))
        self.assertIn('pipeline build donor: error: ', err)
        self.assertIn('run the config step first', err)
        rc, _, err = run_cli(['build', 'donor', self.src, 'new'])
        self.assertEqual(2, rc)
        self.assertIn('usage: pipeline build donor', err)


if __name__ == '__main__':
    unittest.main()
