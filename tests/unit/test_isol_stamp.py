"""The task isolation series' pass stamp on 32-bit: sync_vmstat_pagesets()
runs vmstat_update's per-cpu pass when vmstat_isol_pass_due(stamp) says
so, and the per-CPU stamp starts at 0. jiffies starts 5 minutes before the
wrap (INITIAL_JIFFIES), so on 32-bit a plain time_after_eq(jiffies, stamp +
interval) is false for the first 5 minutes after boot, and no pass runs.

A 32-bit boot of the pipeline costs too much here, so this checks the
arithmetic: the function's body is taken from patches/ as the pipeline
applies it, and compiled with the kernel's jiffies comparisons
(include/linux/jiffies.h) at the widths of a 32-bit kernel (unsigned long
and long are 32 bits there), then run on the cases that matter.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
PATCH_GLOB = 'task_isolation-sync-vmstats-on-return-to-userspace.patch'
SIGNATURE = '+static bool vmstat_isol_pass_due(unsigned long last)'

# The kernel's definitions (include/linux/jiffies.h) with a 32-bit long.
HARNESS = r'''
#include <stdint.h>
#include <stdio.h>

#define time_after_eq(a, b)	((int32_t)((uint32_t)(a) - (uint32_t)(b)) >= 0)
#define time_before_eq(a, b)	time_after_eq(b, a)
#define time_in_range(a, b, c)	(time_after_eq(a, b) && time_before_eq(a, c))
#define HZ			250
#define INITIAL_JIFFIES		((uint32_t)(unsigned int)(-300 * HZ))

typedef int bool;
static uint32_t jiffies;
static int sysctl_stat_interval = HZ;

@BODY@

static int fails;

static void expect(const char *what, uint32_t j, uint32_t last, int interval,
		   int due)
{
	jiffies = j;
	sysctl_stat_interval = interval;
	if (!!vmstat_isol_pass_due(last) != due) {
		printf("FAIL %s: jiffies %u, stamp %u, interval %d: due %d, want %d\n",
		       what, j, last, interval, !due, due);
		fails++;
	}
}

int main(void)
{
	uint32_t j = INITIAL_JIFFIES;

	/* the stamp has never been set: the first pass is due at once */
	expect("boot, stamp 0", j, 0, HZ, 1);
	expect("boot + 1 s, stamp 0", j + HZ, 0, HZ, 1);
	/* within the interval after a pass: not due; one interval later: due */
	expect("just after a pass", j + 10, j + 10, HZ, 0);
	expect("interval - 1 after", j + 10 + HZ - 1, j + 10, HZ, 0);
	expect("interval after", j + 10 + HZ, j + 10, HZ, 1);
	/* across the wrap of jiffies */
	expect("before the wrap", 0xffffff00u + 100, 0xffffff00u, HZ, 0);
	expect("after the wrap", 0xffffff00u + HZ + 5, 0xffffff00u, HZ, 1);
	/* a stamp older than half the range is not taken for a recent one */
	expect("stamp 2^31 old", 0x80000010u, 0x10u, HZ, 1);
	/* vm.stat_interval 0: a pass on every call, as vmstat_update requeues */
	expect("interval 0", j + 5, j + 5, 0, 1);
	return fails ? 1 : 0;
}
'''


def function_body(patch_text):
    """The added lines of vmstat_isol_pass_due() in PATCH_TEXT, unprefixed."""
    lines = patch_text.splitlines()
    start = lines.index(SIGNATURE)
    body = []
    for line in lines[start:]:
        body.append(line[1:])
        if line == '+}':
            return '\n'.join(body)
    raise ValueError('vmstat_isol_pass_due() does not end in the patch')


def thirty_two_bit(c_text):
    """The C text with the widths of a 32-bit kernel."""
    return re.sub(r'\bunsigned long\b', 'uint32_t', c_text)


def run_harness(body):
    """(exit status, output) of the harness around BODY."""
    tmp = tempfile.mkdtemp()
    try:
        src = os.path.join(tmp, 'stamp.c')
        exe = os.path.join(tmp, 'stamp')
        with open(src, 'w') as f:
            f.write(HARNESS.replace('@BODY@', thirty_two_bit(body)))
        cc = subprocess.run(['gcc', '-O2', '-Wall', '-Werror', '-o', exe, src],
                            capture_output=True, text=True)
        if cc.returncode:
            raise AssertionError('the harness does not compile:\n' + cc.stderr)
        r = subprocess.run([exe], capture_output=True, text=True)
        return r.returncode, r.stdout
    finally:
        shutil.rmtree(tmp)


class PassStamp32(unittest.TestCase):
    def patch_text(self):
        names = [n for n in os.listdir(os.path.join(TOP, 'patches'))
                 if n.endswith(PATCH_GLOB)]
        self.assertEqual(1, len(names), 'patch 2 of the series: %r' % names)
        with open(os.path.join(TOP, 'patches', names[0])) as f:
            return f.read()

    def test_pass_due_on_32_bit(self):
        status, out = run_harness(function_body(self.patch_text()))
        self.assertEqual(0, status, out)

    def test_the_harness_catches_the_old_comparison(self):
        # round 2's test, kept as the harness's own proof that it can fail
        old = ('static bool vmstat_isol_pass_due(unsigned long last)\n{\n'
               '\treturn time_after_eq(jiffies, last + sysctl_stat_interval);\n}')
        status, out = run_harness(old)
        self.assertEqual(1, status)
        self.assertIn('FAIL boot, stamp 0', out)


if __name__ == '__main__':
    unittest.main()
