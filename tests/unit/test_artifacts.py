"""In-process unit tests of pipeline/artifacts.py: the artifact contract's
loaders and the one "is this kernel current" rule, which the build
(scripts/build-kernel, through `artifacts stale --build`) and the boot
(scripts/pipeline artifacts stale) both ask.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_config import Project  # noqa: E402 (it puts the package on the path)
from pipeline import Fail, artifacts, cli, config, describe, series, sha256  # noqa: E402
from pipeline.artifacts import KernelInputs  # noqa: E402

BUILD = KernelInputs(kconfig_sha256='k1', commit='c1', tools_sha256='t1',
                     toolchain='gcc 12', timestamp='ts', tree='/src')


class RuleTest(unittest.TestCase):

    def test_equal_inputs_are_current(self):
        self.assertEqual([], artifacts.changes('default', BUILD, BUILD))

    def test_each_input_that_differs_is_named(self):
        now = KernelInputs(kconfig_sha256='k2', commit='c2', tools_sha256='t2',
                           toolchain='gcc 13', timestamp='ts2', tree='/other')
        why = artifacts.changes('default', BUILD, now)
        self.assertEqual(6, len(why), why)
        self.assertIn('its Kconfig lines changed since it was built '
                      '(`scripts/pipeline config kconfig default`)', why)
        self.assertIn('the kernel tree is at c2, it was built from c1', why)

    def test_an_input_one_side_does_not_know_is_not_judged(self):
        # a boot knows only the series and the Kconfig lines
        boot = KernelInputs(kconfig_sha256='k1', series=(('p', 'h'),))
        self.assertEqual([], artifacts.changes('default', BUILD, boot))
        old = KernelInputs()        # an older kernel.json recorded nothing
        self.assertEqual([], artifacts.changes('default', old, BUILD))

    def test_series_changes_for_people(self):
        built = KernelInputs(series=(('a', '1'), ('b', '2'), ('c', '3')))
        now = KernelInputs(series=(('a', '1'), ('b', '9'), ('d', '4')))
        self.assertEqual(['patches/ changed since it was built: b (changed), '
                          'd (new), c (gone)'],
                         artifacts.changes('k', built, now))
        swapped = KernelInputs(series=(('b', '2'), ('a', '1'), ('c', '3')))
        self.assertEqual(['patches/ changed since it was built: the order '
                          'of patches/series'],
                         artifacts.changes('k', built, swapped))

    def test_recorded_reads_kernel_json_and_the_build_record(self):
        k = {'source': 'series', 'kconfig_sha256': 'k1',
             'series': [{'name': 'p', 'sha256': 'h'}]}
        r = artifacts.recorded(k, BUILD.to_dict())
        self.assertEqual((('p', 'h'),), r.series)
        self.assertEqual('c1', r.commit)
        # a pristine kernel has no series to hold a boot to
        self.assertIsNone(artifacts.recorded(dict(k, source='pristine')).series)

    def test_inputs_round_trip(self):
        i = KernelInputs(series=(('p', 'h'),), commit='c')
        self.assertEqual(i, KernelInputs.from_dict(
            json.loads(json.dumps(i.to_dict()))))
        # a key a later version adds is ignored, not an error
        self.assertEqual(i, KernelInputs.from_dict(dict(i.to_dict(), new=1)))


class BuildSideTest(unittest.TestCase):

    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.out = d.name
        for f in artifacts.KERNEL_FILES:
            with open(os.path.join(self.out, f), 'w', encoding='utf-8') as fh:
                fh.write('{}' if f == 'kernel.json' else f)

    def test_current_after_record(self):
        self.assertEqual('no record of its inputs',
                         artifacts.build_reason('default', self.out, BUILD))
        artifacts.write_inputs(self.out, BUILD)
        self.assertIsNone(artifacts.build_reason('default', self.out, BUILD))
        now = KernelInputs(**dict(BUILD.to_dict(), commit='c2'))
        self.assertIn('c2', artifacts.build_reason('default', self.out, now))

    def test_a_missing_file_or_an_old_record(self):
        artifacts.write_inputs(self.out, BUILD)
        os.remove(os.path.join(self.out, 'bzImage'))
        self.assertEqual('no bzImage',
                         artifacts.build_reason('default', self.out, BUILD))
        with open(os.path.join(self.out, 'bzImage'), 'w') as f:
            f.write('x')
        # what build-kernel wrote before: one hash, not JSON
        with open(os.path.join(self.out, artifacts.INPUTS_FILE), 'w') as f:
            f.write('0123abcd\n')
        self.assertEqual('no record of its inputs',
                         artifacts.build_reason('default', self.out, BUILD))


class BootSideTest(unittest.TestCase):
    """stale_reason(): the checkout's series and Kconfig lines against
    kernel.json."""

    def setUp(self):
        self.p = Project(self)
        self.dir = self.p.dir
        self.write = self.p.write
        self.write('configs/default.variant', 'CONFIG_X=y\n')
        self.write('configs/crash.variant', '#@ kernel = default\n')
        self.write('patches/1.patch', 'one\n')
        self.write('patches/series', '1.patch\n')
        self.artifacts = os.path.join(self.dir, 'a')

    def kernel_json(self, **over):
        k = {'source': 'series',
             'kconfig_sha256': config.Variant('default').kconfig_sha256(),
             'series': [{'name': '1.patch', 'sha256': sha256(
                 os.path.join(self.dir, 'patches/1.patch'))}]}
        k.update(over)
        self.write('a/default/kernel.json', json.dumps(k))

    def test_nothing_built_is_not_judged(self):
        self.assertIsNone(artifacts.stale_reason('default', self.artifacts))

    def test_current_then_a_patch_then_a_kconfig_line(self):
        self.kernel_json()
        self.assertIsNone(artifacts.stale_reason('crash', self.artifacts))
        self.write('patches/1.patch', 'edited\n')
        why = artifacts.stale_reason('crash', self.artifacts)
        self.assertEqual('the kernel in artifacts/default is not the one '
                         'this checkout builds: patches/ changed since it '
                         'was built: 1.patch (changed)', why)
        self.kernel_json()
        self.write('configs/default.variant', 'CONFIG_X=y\nCONFIG_Y=y\n')
        self.assertIn('its Kconfig lines changed',
                      artifacts.stale_reason('default', self.artifacts))

    def test_a_run_parameter_is_not_a_kernel_input(self):
        self.kernel_json()
        self.write('configs/default.variant', 'CONFIG_X=y\n#@ smp = 4\n')
        self.assertIsNone(artifacts.stale_reason('default', self.artifacts))

    def test_a_pristine_kernel_ignores_a_broken_series(self):
        self.kernel_json(source='pristine', series=None)
        self.write('patches/series', 'gone.patch\n')
        self.assertIsNone(artifacts.stale_reason('default', self.artifacts))


class VariantJsonTest(unittest.TestCase):

    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.dir = d.name

    def put(self, variant, v):
        os.makedirs(os.path.join(self.dir, variant), exist_ok=True)
        with open(os.path.join(self.dir, variant, 'variant.json'), 'w',
                  encoding='utf-8') as f:
            json.dump(v, f)

    def test_load_and_list(self):
        self.put('b', {'format': artifacts.VARIANT_FORMAT, 'variant': 'b'})
        self.put('a', {'format': artifacts.VARIANT_FORMAT, 'variant': 'a'})
        os.makedirs(os.path.join(self.dir, 'kernel-only'))
        self.assertEqual(['a', 'b'], artifacts.variants_in(self.dir))
        self.assertEqual('a', artifacts.load_variant(self.dir, 'a')['variant'])
        self.assertEqual([], artifacts.variants_in(
            os.path.join(self.dir, 'nosuch')))

    def test_refusals(self):
        with self.assertRaises(Fail) as e:
            artifacts.load_variant(self.dir, '../x')
        self.assertIn("invalid variant name '../x'", str(e.exception))
        with self.assertRaises(Fail) as e:
            artifacts.load_variant(self.dir, 'a')
        self.assertIn('variant a is not built', str(e.exception))
        self.put('old', {'format': 'kernel-pipeline-variant/0',
                         'variant': 'old'})
        with self.assertRaises(Fail) as e:
            artifacts.load_variant(self.dir, 'old')
        self.assertIn('rebuild it with this checkout', str(e.exception))
        self.put('other', {'format': artifacts.VARIANT_FORMAT,
                           'variant': 'x'})
        with self.assertRaises(Fail):
            artifacts.load_variant(self.dir, 'other')

    def test_boot_files_are_checked_against_their_hashes(self):
        os.makedirs(os.path.join(self.dir, 'k'))
        bz = os.path.join(self.dir, 'k', 'bzImage')
        initrd = os.path.join(self.dir, 'k', 'initramfs.cpio.gz')
        for path in (bz, initrd):
            with open(path, 'w', encoding='utf-8') as f:
                f.write(path)
        v = {'variant': 'k',
             'kernel': {'variant': 'k', 'bzImage_sha256': sha256(bz)},
             'initramfs': {'file': 'initramfs.cpio.gz',
                           'sha256': sha256(initrd)}}
        self.assertEqual((bz, initrd), artifacts.boot_files(self.dir, v))
        with open(bz, 'w', encoding='utf-8') as f:
            f.write('another kernel')
        with self.assertRaises(Fail) as e:
            artifacts.boot_files(self.dir, v)
        self.assertIn('is not the kernel k was built with', str(e.exception))
        os.remove(initrd)
        v['kernel']['bzImage_sha256'] = sha256(bz)
        with self.assertRaises(Fail) as e:
            artifacts.boot_files(self.dir, v)
        self.assertIn('the initramfs of k is missing', str(e.exception))


class ManifestTest(unittest.TestCase):
    """manifest.json and SHA256SUMS over a kernel variant and a boot-only
    one; an older file in ARTIFACTS is not covered."""

    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.dir = d.name
        self.put('k/bzImage', 'kernel')
        self.put('k/kernel.json', json.dumps({'files': ['bzImage',
                                                       'kernel.json']}))
        self.put('k/initramfs.cpio.gz', 'k initramfs')
        self.put('k/variant.json', json.dumps({'variant': 'k',
                                               'kernel': {'variant': 'k'}}))
        self.put('b/initramfs.cpio.gz', 'b initramfs')
        self.put('b/variant.json', json.dumps({'variant': 'b',
                                               'kernel': {'variant': 'k'}}))
        self.put('old/variant.json', '{}')

    def put(self, rel, text):
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)

    def test_a_boot_only_variant_brings_its_kernel_files(self):
        m, sums = artifacts.manifest(self.dir, ['b'], {'format': 'x'})
        self.assertEqual(['b/initramfs.cpio.gz', 'b/variant.json',
                          'k/bzImage', 'k/kernel.json'], sorted(sums))
        self.assertEqual('x', m['format'])
        self.assertEqual(['b'], list(m['variants']))
        self.assertEqual(sums['k/bzImage'],
                         m['kernels']['k']['artifacts']['bzImage'])
        artifacts.write_manifest(self.dir, m, sums)
        with open(os.path.join(self.dir, 'SHA256SUMS'),
                  encoding='utf-8') as f:
            lines = f.read().splitlines()
        self.assertEqual(5, len(lines))
        self.assertEqual('%s  manifest.json' % sha256(
            os.path.join(self.dir, 'manifest.json')), lines[-1])

    def test_a_variant_json_of_another_variant_is_refused(self):
        self.put('b/variant.json', json.dumps({'variant': 'k',
                                               'kernel': {'variant': 'k'}}))
        with self.assertRaises(Fail):
            artifacts.manifest(self.dir, ['b'], {})


class WritersTest(unittest.TestCase):
    """kernel.json and variant.json, the contract's two files the build
    writes (scripts/pipeline build describe-artifacts, `pipeline build
    describe-artifacts`), and the smoke suite's expected facts."""

    def setUp(self):
        self.p = Project(self)
        self.p.variant('default', '#@ suites = smoke', '#@ cmdline = a=1',
                       'CONFIG_X=y')
        self.p.variant('crash', '#@ extends = default', '#@ kernel = default')
        self.p.suite('smoke', 'timeout = 7', 'silence = 3')
        self.art = os.path.join(self.p.dir, 'artifacts')
        self.obj = os.path.join(self.p.dir, 'build', 'default')
        self.kdir = os.path.join(self.art, 'default')
        self.p.write('build/default/include/config/kernel.release',
                     '6.12.0-x\n')
        for f, text in (('config', 'CONFIG_X=y\n'), ('bzImage', 'bz'),
                        ('headers.tar.xz', 'h'), ('.hidden', '')):
            self.p.write('artifacts/default/' + f, text)

    def kernel(self, **kw):
        args = dict(ccache='on', durations=['build=1.5', 'config=0'],
                    series_sha256=None)
        args.update(kw)
        describe.write_kernel_json('default', self.obj, self.kdir, **args)
        return artifacts.read_json(os.path.join(self.kdir, 'kernel.json'))

    def test_kernel_json(self):
        k = self.kernel()
        self.assertEqual(artifacts.KERNEL_FORMAT, k['format'])
        self.assertEqual('6.12.0-x', k['release'])
        self.assertEqual({'build': 1.5, 'config': 0.0}, k['durations_s'])
        self.assertEqual(['bzImage', 'config', 'headers.tar.xz',
                          'kernel.json'], k['files'])
        self.assertEqual(sha256(os.path.join(self.kdir, 'bzImage')),
                         k['bzImage_sha256'])
        self.assertEqual(config.Variant('default').kconfig_sha256(),
                         k['kconfig_sha256'])
        self.assertEqual(['configs/base.config', 'configs/default.variant'],
                         [f['path'] for f in k['fragments']])
        self.assertIsNone(k['series'])
        self.assertEqual('on', k['ccache'])
        # the series only when the tree holds the one patches/ has now
        self.assertEqual([], self.kernel(
            series_sha256=series.series_hash())['series'])

    def test_kernel_json_refusals(self):
        with self.assertRaises(Fail) as e:
            describe.write_kernel_json('crash', self.obj, self.kdir, 'on',
                                        [], None)
        self.assertIn("variant 'crash' is boot-only", str(e.exception))
        with self.assertRaises(Fail) as e:
            self.kernel(durations=['build'])
        self.assertIn('--duration build: expected NAME=SECONDS',
                      str(e.exception))
        os.remove(os.path.join(self.obj, 'include/config/kernel.release'))
        with self.assertRaises(Fail) as e:
            self.kernel()
        self.assertIn('no kernel release', str(e.exception))

    def test_expected_and_variant_json(self):
        self.kernel()
        self.assertEqual([
            'variant=crash', 'release=6.12.0-x',
            'config_sha256=%s' % sha256(os.path.join(self.kdir, 'config')),
            'cmdline=a=1', 'smp=2'],
            describe.expected_lines('crash', self.kdir))
        out = os.path.join(self.art, 'crash')
        self.p.write('artifacts/crash/guest-tests/smoke/ok', '#!/bin/sh\n')
        self.p.write('artifacts/crash/initramfs.cpio.gz', 'cpio')
        describe.write_variant_json('crash', out, self.kdir)
        v = artifacts.load_variant(self.art, 'crash')
        self.assertEqual('default', v['kernel']['variant'])
        self.assertTrue(v['boot_only'])
        self.assertEqual({'smoke': {'timeout': 7, 'silence': 3,
                                    'programs': ['ok']}}, v['suites'])
        self.assertEqual(sha256(os.path.join(out, 'initramfs.cpio.gz')),
                         v['initramfs']['sha256'])

    def test_a_kernel_json_of_another_kernel_is_refused(self):
        k = self.kernel()
        k['variant'] = 'other'
        with open(os.path.join(self.kdir, 'kernel.json'), 'w',
                  encoding='utf-8') as f:
            json.dump(k, f)
        with self.assertRaises(Fail) as e:
            describe.expected_lines('crash', self.kdir)
        self.assertIn('kernel.json is not the kernel of default',
                      str(e.exception))
        os.remove(os.path.join(self.kdir, 'kernel.json'))
        with self.assertRaises(Fail) as e:
            describe.expected_lines('crash', self.kdir)
        self.assertIn('the kernel of crash (default)', str(e.exception))


def run_cli(*argv):
    """scripts/pipeline ARGV in-process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(list(argv))
    return rc, out.getvalue(), err.getvalue()


class StaleCommandTest(unittest.TestCase):
    """`artifacts stale` (scripts/pipeline artifacts stale): the boot's
    and the build's side, with the arguments test-variant,
    boot-interactive and build-kernel give it."""

    def setUp(self):
        self.p = Project(self)
        self.p.variant('default', 'CONFIG_X=y')
        self.p.write('patches/1.patch', 'one\n')
        self.p.write('patches/series', '1.patch\n')
        self.art = os.path.join(self.p.dir, 'artifacts')
        env = mock.patch.dict(os.environ, {'ARTIFACTS': self.art})
        env.start()
        self.addCleanup(env.stop)

    def test_the_boot_side_exit_0_silent_then_1_saying_why(self):
        self.assertEqual((0, '', ''), run_cli('artifacts', 'stale',
                                              'default'))
        self.p.write('artifacts/default/kernel.json', json.dumps({
            'source': 'series',
            'kconfig_sha256': config.Variant('default').kconfig_sha256(),
            'series': [{'name': '1.patch', 'sha256': 'old'}]}))
        rc, out, _ = run_cli('artifacts', 'stale', 'default')
        self.assertEqual(1, rc)
        self.assertEqual('the kernel in artifacts/default is not the one this '
                         'checkout builds: patches/ changed since it was '
                         'built: 1.patch (changed)\n', out)

    def test_bad_input_is_2_named_as_test_variant_reads_it(self):
        rc, _, err = run_cli('artifacts', 'stale', 'a b')
        self.assertEqual(2, rc)
        # (scripts/test-variant takes the reason from after this prefix)
        self.assertIn("pipeline artifacts stale: error: invalid variant name "
                      "'a b'", err)
        rc, _, err = run_cli('artifacts', 'stale', '--build', 'default')
        self.assertEqual(2, rc)
        self.assertIn('--build needs --out, --commit', err)
        rc, _, err = run_cli('artifacts', 'stale')
        self.assertEqual(2, rc)
        self.assertIn('usage: pipeline artifacts stale', err)

    def test_the_build_side_records_then_is_current(self):
        out = os.path.join(self.art, 'default')
        inputs = ['--build', '--out', out, '--commit', 'c1',
                  '--tools-sha256', 't1', '--toolchain', 'gcc 12',
                  '--timestamp', 'ts', '--tree', '/src']
        rc, why, _ = run_cli('artifacts', 'stale', *inputs, 'default')
        self.assertEqual(1, rc)
        self.assertTrue(why.startswith('no bzImage, '), why)
        for f in artifacts.KERNEL_FILES:
            self.p.write('artifacts/default/' + f,
                         '{}' if f == 'kernel.json' else f)
        self.assertEqual((0, '', ''), run_cli('artifacts', 'stale', *inputs,
                                              '--record', 'default'))
        self.assertTrue(os.path.isfile(os.path.join(out,
                                                    artifacts.INPUTS_FILE)))
        self.assertEqual((0, '', ''), run_cli('artifacts', 'stale', *inputs,
                                              'default'))
        inputs[inputs.index('c1')] = 'c2'
        rc, why, _ = run_cli('artifacts', 'stale', *inputs, 'default')
        self.assertEqual((1, 'the kernel tree is at c2, it was built from '
                          'c1\n'), (rc, why))


class ManifestCommandTest(unittest.TestCase):
    """`artifacts manifest` (scripts/pipeline artifacts manifest): its
    arguments, and --update, which keeps what the manifest said about the
    build (a first manifest runs the toolchain and git:
    tests/tooling/pipeline.bats)."""

    # ManifestTest's artifacts (its tests are not run again here)
    put = ManifestTest.put

    def setUp(self):
        ManifestTest.setUp(self)
        env = mock.patch.dict(os.environ, {'ARTIFACTS': self.dir})
        env.start()
        self.addCleanup(env.stop)

    def test_update_keeps_the_build_record_and_the_variants_listed(self):
        m, sums = artifacts.manifest(self.dir, ['k'], {'format': 'x',
                                                      'source': 's'})
        artifacts.write_manifest(self.dir, m, sums)
        rc, out, err = run_cli('artifacts', 'manifest', '--update', 'b')
        self.assertEqual(0, rc, err)
        self.assertIn('manifest.json + SHA256SUMS', err)
        self.assertIn('ok (2 variants, 1 kernels)', err)
        m = artifacts.read_json(os.path.join(self.dir, 'manifest.json'))
        self.assertEqual(('x', 's', ['b', 'k']),
                         (m['format'], m['source'], sorted(m['variants'])))

    def test_no_variant_or_a_missing_one_is_2(self):
        rc, _, err = run_cli('artifacts', 'manifest')
        self.assertEqual(2, rc)
        self.assertIn('usage: pipeline artifacts manifest', err)
        m, sums = artifacts.manifest(self.dir, ['k'], {'format': 'x'})
        artifacts.write_manifest(self.dir, m, sums)
        rc, _, err = run_cli('artifacts', 'manifest', '--update', 'nosuch')
        self.assertEqual(2, rc)
        self.assertIn('pipeline artifacts manifest: error: ', err)
        self.assertIn('nosuch/variant.json', err)


if __name__ == '__main__':
    unittest.main()
