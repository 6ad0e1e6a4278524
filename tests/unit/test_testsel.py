"""In-process unit tests of pipeline/testsel.py, the host's reading of
TESTS: globs matched one id component at a time. (Moved from
tests/tooling/select.bats, where it was a python3 process; the guest's
run-suite is held to the same answers there, since that needs sh.)

    python3 -m unittest discover -s tests/unit     (scripts/run-tests runs it)
"""
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', '..'))
from pipeline import testsel as t  # noqa: E402


class Globs(unittest.TestCase):

    def test_globs_match_one_component_at_a_time_ids_escape_to_themselves(
            self):
        self.assertIs(True, t.matches("umcg", "umcg", "x", "y"))
        self.assertIs(True, t.matches("umcg*", "umcg-bench"))
        # the program's name is needed, and was not given
        self.assertIsNone(t.matches("umcg/switch*", "umcg"))
        self.assertIs(True, t.matches("umcg/switch*", "umcg", "switch"))
        self.assertIs(False, t.matches("umcg/switch*", "umcg", "block"))
        # a * never crosses a /
        self.assertIs(False, t.matches("u*h", "umcg", "switch"))
        self.assertIsNone(t.matches("umcg/*/global.a", "umcg", "block"))
        self.assertIs(True, t.matches("umcg/*/global.a", "umcg", "block",
                                      "global.a"))
        self.assertIs(True, t.selects([], "any"))
        g = t.id_glob("s", "p", "fx.a[1]*?")
        self.assertEqual("s/p/fx.a[[]1][*][?]", g)
        self.assertIs(True, t.matches(g, "s", "p", "fx.a[1]*?"))
        self.assertIs(False, t.matches(g, "s", "p", "fx.a1xy"))


if __name__ == '__main__':
    unittest.main()
