"""In-process unit tests of pipeline/boot.py: a boot planned from a
variant.json alone (QEMU's command line, the accelerator's arguments,
scaled timeouts, the root filesystem of a packages boot, the plan of
what must run). scripts/pipeline boot plan prints these; tests/integration/artifacts.bats
holds it to a real build.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
import unittest.mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_config  # noqa: E402,F401 (it puts the package on the path)
from pipeline import Fail, artifacts, boot, cli, sha256  # noqa: E402


class Artifacts:
    """A one-variant artifact set 'v' in a temporary directory."""

    def __init__(self, test, config='CONFIG_X=y\n', **params):
        d = tempfile.TemporaryDirectory()
        test.addCleanup(d.cleanup)
        self.dir = d.name
        os.makedirs(os.path.join(self.dir, 'v'))
        files = {'bzImage': 'kernel', 'initramfs.cpio.gz': 'initramfs',
                 'config': config}
        for name, text in files.items():
            with open(self.path(name), 'w', encoding='utf-8') as f:
                f.write(text)
        p = {'smp': 2, 'mem': '512M', 'cmdline': 'nokaslr', 'qemu_args': [],
             'suites': ['smoke'], 'boot_timeout': 120, 'silence': 120,
             'timeout_scale': 1, 'final': ''}
        p.update(params)
        self.v = {'variant': 'v', 'params': p,
                  'kernel': {'variant': 'v', 'release': '6.12.0',
                             'bzImage_sha256': sha256(self.path('bzImage')),
                             'config_sha256': sha256(self.path('config'))},
                  'initramfs': {'file': 'initramfs.cpio.gz',
                                'sha256': sha256(
                                    self.path('initramfs.cpio.gz'))},
                  'suites': {'smoke': {'timeout': 300, 'silence': 0,
                                       'programs': ['ok', 'two'],
                                       'tests': {'two': ['a', 'b']}},
                             'extra': {'timeout': 10, 'silence': 900,
                                       'programs': ['x']}}}

    def path(self, name):
        return os.path.join(self.dir, 'v', name)


class AccelTest(unittest.TestCase):

    def test_known_accelerators(self):
        self.assertEqual(['-accel', 'kvm', '-cpu', 'host'],
                         boot.accel_of('kvm')['args'])
        with self.assertRaises(Fail):
            boot.accel_of('hvf')

    def test_timeouts_scale_with_the_accelerator(self):
        self.assertEqual(300, boot.scaled(300, 'tcg'))
        self.assertEqual(150, boot.scaled(300, 'kvm'))
        self.assertEqual(1, boot.scaled(1, 'kvm'))

    def test_icount_forces_single_threaded_tcg(self):
        a = Artifacts(self, icount='shift=0')
        accel, args, why = boot.accel_plan(a.v, 'kvm', 'probed')
        self.assertEqual('tcg', accel)
        self.assertEqual(['-accel', 'tcg,thread=single', '-icount',
                          'shift=0'], args)
        self.assertTrue(why.endswith('; probed'), why)

    def test_tcg_threads_and_cpu(self):
        a = Artifacts(self, tcg_threads='single', cpu='max')
        _, args, why = boot.accel_plan(a.v, 'tcg')
        self.assertEqual(['-accel', 'tcg,thread=single', '-cpu', 'max'], args)
        self.assertIn('nested paging', why)
        accel, args, why = boot.accel_plan(a.v, 'kvm')
        self.assertEqual(['-accel', 'kvm', '-cpu', 'host'], args)
        self.assertIn('is not used: under KVM', why)

    def test_an_old_variant_json_without_the_parameters(self):
        a = Artifacts(self)
        self.assertEqual(('tcg', ['-accel', 'tcg,thread=multi'], ''),
                         boot.accel_plan(a.v, 'tcg'))


class QemuTest(unittest.TestCase):

    def test_command_line(self):
        a = Artifacts(self, qemu_args=['-device', 'x'])
        q = boot.qemu(a.dir, a.v, 'tcg')
        self.assertEqual('qemu-system-x86_64', q[0])
        self.assertEqual(['-device', 'x'], q[-2:])
        self.assertEqual('console=ttyS0 panic=-1 nokaslr',
                         q[q.index('-append') + 1])
        self.assertEqual(a.path('bzImage'), q[q.index('-kernel') + 1])
        self.assertIn('-no-reboot', q)

    def test_another_kernel_is_refused(self):
        a = Artifacts(self)
        with open(a.path('bzImage'), 'w', encoding='utf-8') as f:
            f.write('another')
        with self.assertRaises(Fail):
            boot.qemu(a.dir, a.v)

    def test_rootfs(self):
        a = Artifacts(self)
        with tempfile.TemporaryDirectory() as r:
            os.makedirs(os.path.join(r, 'boot'))
            for name, text in (('boot/vmlinuz-6.12.0', 'kernel'),
                               ('boot/initrd.img-6.12.0', 'initrd'),
                               ('pipeline-init', '')):
                with open(os.path.join(r, name), 'w', encoding='utf-8') as f:
                    f.write(text)
            q = boot.qemu(a.dir, a.v, 'tcg', r)
            self.assertIn('root=kproot', q[q.index('-append') + 1])
            self.assertIn('init=/pipeline-init', q[q.index('-append') + 1])
            self.assertTrue(q[q.index('-virtfs') + 1].startswith(
                'local,path=%s,mount_tag=kproot' % r))
            with open(os.path.join(r, 'boot/vmlinuz-6.12.0'), 'w',
                      encoding='utf-8') as f:
                f.write('another')
            with self.assertRaises(Fail):
                boot.qemu(a.dir, a.v, 'tcg', r)


class PlanTest(unittest.TestCase):

    def test_suites(self):
        a = Artifacts(self)
        self.assertEqual(['smoke'], boot.selected_suites(a.v, [], []))
        self.assertEqual(['extra'], boot.selected_suites(a.v, ['extra'], []))
        self.assertEqual(['extra'],
                         boot.selected_suites(a.v, [], ['extra/x']))
        with self.assertRaises(Fail):
            boot.selected_suites(a.v, ['nosuch'], [])
        with self.assertRaises(Fail):
            boot.selected_suites(a.v, [], ['nosuch/*'])

    def test_plan_lists_programs_and_tests(self):
        a = Artifacts(self)
        p = boot.plan(a.dir, a.v, ['smoke'], ['smoke/two/a'])
        s = p['suites'][0]
        # two lists 'a': it must run (issue 42: it was optional)
        self.assertEqual(['two'], s['programs'])
        self.assertEqual([], s['optional'])
        self.assertEqual({'two': ['a']}, s['tests'])
        # a glob into every program: ok lists nothing (it runs whole),
        # none of two's tests matches (run-suite leaves it out)
        s = boot.plan(a.dir, a.v, ['smoke'], ['smoke/*/c'])['suites'][0]
        self.assertEqual((['ok'], ['two'], {'two': []}),
                         (s['programs'], s['optional'], s['tests']))

    def test_debug_checkers_need_the_final_command(self):
        a = Artifacts(self, config='CONFIG_PROVE_LOCKING=y\nCONFIG_KASAN=y\n')
        with self.assertRaises(Fail) as e:
            boot.checkers(a.dir, a.v)
        self.assertIn('its final command must be debug-checks',
                      str(e.exception))
        a.v['params']['final'] = 'debug-checks'
        self.assertEqual(['kasan', 'lockdep'], boot.checkers(a.dir, a.v))

    def test_a_verdict_boot_whose_console_hides_warnings_is_refused(self):
        # (issue 42: quiet or a loglevel below 5 hides the reports the
        # verdict looks for; make boot, a shell, is not refused)
        for cmdline in ('quiet', 'loglevel=4', 'loglevel=7 quiet'):
            a = Artifacts(self, cmdline=cmdline)
            with self.assertRaises(Fail) as e:
                boot.harness(a.dir, a.v, '/x.log', ['smoke'])
            self.assertIn('keeps warnings off the console', str(e.exception))
            boot.qemu(a.dir, a.v, 'tcg')
        for cmdline in ('quiet loglevel=5', 'quiet ignore_loglevel', 'debug'):
            a = Artifacts(self, cmdline=cmdline)
            boot.harness(a.dir, a.v, '/x.log', ['smoke'])

    def test_harness_silence_is_the_largest(self):
        a = Artifacts(self)
        h = boot.harness(a.dir, a.v, '/x.log', ['smoke', 'extra'])
        i = h.index('v')    # LOG VARIANT BOOT_TIMEOUT SILENCE SPEC
        self.assertEqual(['/x.log', 'v', '120', '900', 'smoke:300 extra:10'],
                         h[i - 1:i + 4])
        self.assertTrue(h[0].endswith('expect-scripts/boot-and-test.exp'))
        self.assertEqual('--', h[h.index('qemu-system-x86_64') - 1])


class ProfilerTest(unittest.TestCase):
    """#@ insn_profile = yes: the plugin of tools/insn-profile on QEMU's
    command line, with the kernel's System.map and the table beside the
    console log."""

    def setUp(self):
        self.a = Artifacts(self, insn_profile=True,
                           icount='shift=0,sleep=off')
        with open(self.a.path('System.map'), 'w', encoding='utf-8') as f:
            f.write('ffffffff81000000 T _stext\n')
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.so = os.path.join(d.name, 'insn-profile', 'insn_profile.so')
        os.makedirs(os.path.dirname(self.so))
        with open(self.so, 'w', encoding='utf-8') as f:
            f.write('plugin')
        env = unittest.mock.patch.dict(os.environ, {'BUILD': d.name})
        env.start()
        self.addCleanup(env.stop)

    def test_the_plugin_comes_last(self):
        h = boot.harness(self.a.dir, self.a.v, '/r/v/console.log', ['smoke'])
        self.assertEqual('-plugin', h[-2])
        self.assertEqual('%s,map=%s,out=/r/v/insn-profile.tsv' % (
            self.so, self.a.path('System.map')), h[-1])
        # under -icount: one TCG thread, as the plugin's counters need
        self.assertIn('tcg,thread=single', h)

    def test_commas_in_paths_are_doubled(self):
        h = boot.harness(self.a.dir, self.a.v, '/r/a,b/console.log',
                         ['smoke'])
        self.assertTrue(h[-1].endswith(',out=/r/a,,b/insn-profile.tsv'),
                        h[-1])

    def test_not_without_the_parameter(self):
        self.a.v['params']['insn_profile'] = False
        h = boot.harness(self.a.dir, self.a.v, '/x.log', ['smoke'])
        self.assertNotIn('-plugin', h)
        # an old variant.json, written before the parameter existed
        del self.a.v['params']['insn_profile']
        self.assertNotIn('-plugin',
                         boot.harness(self.a.dir, self.a.v, '/x.log',
                                      ['smoke']))

    def test_a_missing_plugin_or_map_is_refused(self):
        os.remove(self.so)
        with self.assertRaises(Fail) as e:
            boot.harness(self.a.dir, self.a.v, '/x.log', ['smoke'])
        self.assertIn('scripts/insn-profile build', str(e.exception))
        with open(self.so, 'w', encoding='utf-8') as f:
            f.write('plugin')
        os.remove(self.a.path('System.map'))
        with self.assertRaises(Fail) as e:
            boot.harness(self.a.dir, self.a.v, '/x.log', ['smoke'])
        self.assertIn('System.map', str(e.exception))

    def test_kvm_is_refused(self):
        # a TCG plugin; without icount the variant may boot under KVM
        del self.a.v['params']['icount']
        self.a.v['params']['tcg_threads'] = 'single'
        with self.assertRaises(Fail) as e:
            boot.harness(self.a.dir, self.a.v, '/x.log', ['smoke'],
                         accel='kvm')
        self.assertIn('cannot boot under kvm', str(e.exception))
        boot.harness(self.a.dir, self.a.v, '/x.log', ['smoke'])

    def test_one_tcg_thread_is_required(self):
        # the counters are not atomic: multi-threaded TCG would race
        del self.a.v['params']['icount']
        with self.assertRaises(Fail) as e:
            boot.harness(self.a.dir, self.a.v, '/x.log', ['smoke'])
        self.assertIn('need one TCG thread', str(e.exception))


class CommandLineTest(unittest.TestCase):
    """`python3 -m pipeline boot plan` (scripts/pipeline boot plan) in-process."""

    def plan(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            rc = cli.main(['boot', 'plan'] + list(argv))
        return rc, out.getvalue().split('\n')[:-1], err.getvalue()

    def setUp(self):
        self.a = Artifacts(self)
        with open(self.a.path('variant.json'), 'w', encoding='utf-8') as f:
            json.dump(dict(self.a.v, format=artifacts.VARIANT_FORMAT), f)

    def test_qemu_harness_list_and_accel_args_one_argument_a_line(self):
        rc, out, _ = self.plan('list', self.a.dir)
        self.assertEqual((0, ['v']), (rc, out))
        rc, out, _ = self.plan('accel-args', 'kvm')
        self.assertEqual((0, boot.accel_of('kvm')['args']), (rc, out))
        rc, out, _ = self.plan('--accel', 'kvm', 'qemu', self.a.dir, 'v')
        self.assertEqual(0, rc)
        self.assertEqual(boot.qemu(self.a.dir, self.a.v, 'kvm', ''), out)
        plan = os.path.join(self.a.dir, 'plan.json')
        rc, out, _ = self.plan('--plan-out', plan, 'harness', self.a.dir,
                               'v', '/x.log', 'smoke')
        self.assertEqual(0, rc)
        self.assertIn('/x.log', out)
        with open(plan, encoding='utf-8') as f:
            self.assertEqual(['smoke'],
                             [s['name'] for s in json.load(f)['suites']])

    def test_the_harness_command_as_json_carries_any_argument_whole(self):
        # (QEMU's words in the accelerator's reason may span lines)
        why = 'probed: KVM aborts:\nqemu: error: no KVM'
        cmd = os.path.join(self.a.dir, 'boot.json')
        rc, out, err = self.plan('--accel', 'tcg', '--accel-reason', why,
                                 '--argv-out', cmd, 'harness', self.a.dir,
                                 'v', '/x.log', 'smoke')
        self.assertEqual((0, []), (rc, out), err)
        with open(cmd, encoding='utf-8') as f:
            got = json.load(f)
        self.assertEqual(boot.harness(self.a.dir, self.a.v, '/x.log',
                                      ['smoke'], (), 'tcg', why),
                         got['argv'])
        self.assertEqual(('tcg', why), (got['accel'], got['accel_reason']))

    def test_the_qemu_command_as_json_carries_any_argument_whole(self):
        # (boot-interactive, boot-packages: `boot run` runs it) an
        # artifact set under a path with a space and a newline
        top = os.path.join(self.a.dir, 'a b\nc')
        os.makedirs(top)
        os.rename(os.path.join(self.a.dir, 'v'), os.path.join(top, 'v'))
        cmd = os.path.join(self.a.dir, 'boot.json')
        rc, out, err = self.plan('--accel', 'kvm', '--accel-reason',
                                 'probed', '--argv-out', cmd, 'qemu', top,
                                 'v')
        self.assertEqual((0, []), (rc, out), err)
        with open(cmd, encoding='utf-8') as f:
            got = json.load(f)
        self.assertEqual(boot.qemu(top, self.a.v, 'kvm', ''), got['argv'])
        self.assertIn(os.path.join(top, 'v', 'bzImage'), got['argv'])
        self.assertEqual(('kvm', 'probed'),
                         (got['accel'], got['accel_reason']))
        # one argument a line cannot say it
        rc, _, err = self.plan('qemu', top, 'v')
        self.assertEqual(2, rc)
        self.assertIn('contains a newline', err)
        # the accelerator as the variant makes it (#@ icount: TCG), and why
        a = Artifacts(self, icount='shift=0')
        with open(a.path('variant.json'), 'w', encoding='utf-8') as f:
            json.dump(dict(a.v, format=artifacts.VARIANT_FORMAT), f)
        rc, _, err = self.plan('--accel', 'kvm', '--accel-reason', 'probed',
                               '--argv-out', cmd, 'qemu', a.dir, 'v')
        self.assertEqual(0, rc, err)
        with open(cmd, encoding='utf-8') as f:
            got = json.load(f)
        self.assertEqual(boot.accel_plan(a.v, 'kvm', 'probed')[::2],
                         (got['accel'], got['accel_reason']))
        self.assertEqual('tcg', got['accel'])
        self.assertIn('-icount', got['argv'])

    def test_tests_lists_the_plans_test_ids_without_booting(self):
        # (issue 46: make list-tests) a program that lists its tests
        # gives one id per test the globs select; one that lists none
        # runs whole: its id is suite/program
        rc, out, _ = self.plan('tests', self.a.dir, 'v')
        self.assertEqual((0, ['smoke/ok', 'smoke/two/a', 'smoke/two/b']),
                         (rc, out))
        rc, out, _ = self.plan('--tests', 'smoke/two/b extra', 'tests',
                               self.a.dir, 'v')
        self.assertEqual((0, ['smoke/two/b', 'extra/x']), (rc, out))
        rc, out, _ = self.plan('tests', self.a.dir, 'v', 'extra')
        self.assertEqual((0, ['extra/x']), (rc, out))
        # the same plan as a boot's: the same refusals
        rc, _, err = self.plan('--tests', 'nosuch', 'tests', self.a.dir, 'v')
        self.assertEqual(2, rc)
        self.assertIn("selects none of the suites of v", err)

    def test_bad_input_and_usage_errors_are_2(self):
        for argv, msg in ((('qemu', self.a.dir, '../x'),
                           "invalid variant name '../x'"),
                          (('--accel', 'hvf', 'list', self.a.dir), 'hvf'),
                          (('qemu', self.a.dir, 'nosuch'),
                           'variant nosuch is not built'),
                          ((), 'usage')):
            rc, _, err = self.plan(*argv)
            self.assertEqual(2, rc, argv)
            self.assertIn(msg, err, argv)
        rc, out, _ = self.plan('--help')
        self.assertEqual(0, rc)
        self.assertEqual('usage: pipeline boot plan', out[0][:25])


if __name__ == '__main__':
    unittest.main()
