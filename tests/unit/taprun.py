"""Run the unit tests (tests/unit/test_*.py) in this Python process and
print one TAP line a test, from unittest's own result objects:

    ok unit: test_x (module.Class.test_x)
    ok unit: test_y (module.Class.test_y) # skip why
    not ok unit: test_z (module.Class.test_z)

then, on stderr, the tracebacks of what failed. Not unittest -v's text:
that puts a test's docstring on the verdict's line, and a reader of it
loses the test. Exit 0 when every test passed, 1 otherwise (a module that
does not import is a failed test, as unittest makes it).

    python3 tests/unit/taprun.py          (scripts/run-tests runs it)
"""
import os
import sys
import unittest


class TapResult(unittest.TestResult):
    """Each verdict as a TAP line on OUT, as it comes."""

    def __init__(self, out):
        super().__init__()
        self.out = out

    def _line(self, ok: bool, test, extra: str = '') -> None:
        print('%s unit: %s%s' % ('ok' if ok else 'not ok', test, extra),
              file=self.out, flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(True, test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(False, test)

    def addError(self, test, err):
        super().addError(test, err)
        self._line(False, test)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(True, test, ' # skip %s' % reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._line(True, test)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._line(False, test)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._line(False, subtest)


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    suite = unittest.defaultTestLoader.discover(here, pattern='test_*.py')
    result = TapResult(sys.stdout)
    suite.run(result)
    for test, text in result.errors + result.failures:
        print('=' * 70, file=sys.stderr)
        print('FAIL: %s' % test, file=sys.stderr)
        print(text, file=sys.stderr)
    return 0 if result.wasSuccessful() else 1


if __name__ == '__main__':
    sys.exit(main())
