"""In-process unit tests of tools/insn-profile/table.py: the instruction
profiler's table (tests/fixtures/insn-profile/insn-profile.tsv, in the
plugin's format) per round trip, as the Markdown of docs/series.md.

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import contextlib
import importlib.util
import io
import os
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FIXTURE = os.path.join(TOP, 'tests', 'fixtures', 'insn-profile',
                       'insn-profile.tsv')
_spec = importlib.util.spec_from_file_location(
    'insn_profile_table', os.path.join(TOP, 'tools', 'insn-profile',
                                       'table.py'))
table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(table)


class WindowTest(unittest.TestCase):

    def test_switch_bench_numbering(self):
        # 1 + case * 3 + mechanism (futex, pipe, umcg)
        self.assertEqual(1, table.window_of('futex_1cpu'))
        self.assertEqual(3, table.window_of('umcg_1cpu'))
        self.assertEqual(7, table.window_of('futex_shared'))
        self.assertEqual(12, table.window_of('umcg_shared8'))
        with self.assertRaises(ValueError):
            table.window_of('umcg_4cpu')


class TableTest(unittest.TestCase):

    def test_per_round_trip(self):
        lines = table.table(table.read(FIXTURE), ['umcg_1cpu', 'futex_1cpu'],
                            10)
        self.assertEqual(['| function | umcg 1cpu | futex 1cpu |',
                          '|---|---:|---:|',
                          '| `__schedule` | 2000.0 | 3000.0 |',
                          '| `[user]` | - | 2000.0 |',
                          '| `umcg_wait` | 1995.0 | - |',
                          '| `do_futex` | - | 190.0 |',
                          '| 2 other functions, each < 10 | 5.0 | 10.0 |',
                          '| **total** | **4000.0** | **5200.0** |',
                          '| round trips counted (runs) | 200 (2) | 100 (2) |'],
                         lines)

    def test_a_window_without_round_trips_is_an_error(self):
        with self.assertRaises(ValueError) as e:
            table.table(table.read(FIXTURE), ['umcg_shared'], 10)
        self.assertIn('window 9', str(e.exception))

    def test_a_malformed_line_names_its_place(self):
        with tempfile.NamedTemporaryFile('w', suffix='.tsv') as f:
            f.write('window\t1\truns\t1\tround_trips\t1\tinstructions\t1\n'
                    '2\tx\t5\n')
            f.flush()
            with self.assertRaises(ValueError) as e:
                table.read(f.name)
        self.assertIn(':2:', str(e.exception))

    def test_main_prints_markdown_or_fails_with_2(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(2, table.main([FIXTURE, '--columns', 'x_1cpu']))
        self.assertIn("unknown column 'x_1cpu'", err.getvalue())


if __name__ == '__main__':
    unittest.main()
