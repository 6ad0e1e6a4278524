"""The series' system call numbers, read from patches/ (what the pipeline
applies): UMCG's calls exist only in the x86_64 table, right after x32's
range (512-547), a little clear of the numbers mainline hands out in
order and not far above them (the highest number sizes the system call,
tracing and seccomp tables: 1000/1001 doubled them), and no
generic table (scripts/syscall.tbl, asm-generic/unistd.h) or other
architecture's table gets an entry. A generic entry would give every
architecture that uses the generic table a number that mainline reuses
(463 and 464, which earlier versions took, are setxattrat() and
getxattrat() from Linux 6.13 on).

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import glob
import os
import re
import unittest

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
X86_64_TBL = 'arch/x86/entry/syscalls/syscall_64.tbl'
# The highest number of mainline's x86_64 table as last read, with where
# and when, in the umcg suite's data file (the guest's abi test reads the
# same file); the table grows by a handful of numbers a year, so a small
# margin fails this test, and moves the numbers, before mainline reaches
# them.
MAINLINE_SYSCALLS = os.path.join(TOP, 'guest-tests', 'umcg', 'bin',
                                 'mainline-syscalls')
MARGIN = 16
# x32's numbers in the x86_64 table (512-547): UMCG's follow them at once.
X32_LAST = 547


def mainline_syscalls():
    """{key: value} of the data file's 'key = value' lines."""
    out = {}
    with open(MAINLINE_SYSCALLS, encoding='utf-8') as f:
        for line in f:
            if line.startswith('#') or '=' not in line:
                continue
            key, value = line.split('=', 1)
            out[key.strip()] = value.strip()
    return out


def added_lines(path):
    """{file: [added line, ...]} of one patch in git format-patch form."""
    files, cur = {}, None
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = re.match(r'^\+\+\+ b/(\S+)', line)
            if m:
                cur = files.setdefault(m.group(1), [])
            elif cur is not None and line.startswith('+') and \
                    not line.startswith('+++'):
                cur.append(line[1:].rstrip('\n'))
    return files


def series_additions():
    """{file: [added line, ...]} over every patch of patches/series."""
    out = {}
    with open(os.path.join(TOP, 'patches', 'series')) as f:
        names = [n.strip() for n in f if n.strip() and not n.startswith('#')]
    for name in names:
        for path, lines in added_lines(os.path.join(TOP, 'patches', name)).items():
            out.setdefault(path, []).extend(lines)
    return out


def table_entries(lines):
    """(number, abi, name) of the syscall table lines among LINES."""
    out = []
    for line in lines:
        m = re.match(r'^(\d+)\s+(\S+)\s+(\S+)', line)
        if m:
            out.append((int(m.group(1)), m.group(2), m.group(3)))
    return out


class SeriesSyscalls(unittest.TestCase):
    def setUp(self):
        self.added = series_additions()

    def test_mainline_data_says_what_where_and_when(self):
        data = mainline_syscalls()
        self.assertGreaterEqual(int(data['x86_64_last']), 471,
                                'mainline has had 471 rseq_slice_yield')
        self.assertTrue(data.get('x86_64_last_name'))
        self.assertTrue(data.get('read_from'))
        self.assertRegex(data.get('read_on', ''), r'^\d{4}-\d{2}-\d{2}$')

    def test_umcg_only_in_the_x86_64_table_out_of_mainline_range(self):
        mainline_last = int(mainline_syscalls()['x86_64_last'])
        entries = [e for e in table_entries(self.added.get(X86_64_TBL, []))
                   if e[2].startswith('umcg_')]
        self.assertEqual(['umcg_ctl', 'umcg_wait'], sorted(e[2] for e in entries))
        for nr, abi, name in entries:
            self.assertGreater(nr, mainline_last + MARGIN,
                               '%s is %d: inside the range mainline hands out'
                               % (name, nr))
            # x32 would need its own compat entries and is not tested
            self.assertEqual('64', abi, '%s has ABI %s' % (name, abi))
        # NR_syscalls is the highest number + 1: no gap above x32's range
        self.assertEqual([X32_LAST + 1, X32_LAST + 2],
                         sorted(e[0] for e in entries),
                         'UMCG is not right after x32: %s' % entries)

    def test_no_generic_or_other_architecture_table(self):
        tables = [p for p in self.added
                  if p != X86_64_TBL and (
                      p in ('scripts/syscall.tbl',
                            'include/uapi/asm-generic/unistd.h') or
                      re.match(r'^arch/.*syscall.*\.tbl$', p))]
        for path in tables:
            self.assertEqual([], [ln for ln in self.added[path] if 'umcg' in ln],
                             '%s gets UMCG entries' % path)

    def test_the_patches_exist(self):
        # guards the two tests above against an empty or unreadable series
        self.assertTrue(glob.glob(os.path.join(TOP, 'patches', '*.patch')))
        self.assertIn(X86_64_TBL, self.added)


if __name__ == '__main__':
    unittest.main()
