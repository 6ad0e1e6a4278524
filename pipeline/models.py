"""The typed results of a boot: a test's outcome, a reason for the exit
class, the whole boot's result, and the enums of status and class.

pipeline.results makes them; the writers turn them into results.json,
whose format stays what the rest of the pipeline (summarize, compare,
report, CI) and older results already have: to_dict() gives every field
its results.json name, order and plain JSON value.

Python 3.11 standard library only (Debian 12).
"""

import dataclasses
import enum


class Status(enum.StrEnum):
    """A test's outcome."""
    PASS = 'pass'
    FAIL = 'fail'
    SKIP = 'skip'
    # no outcome: the test never reported (its program crashed, hung, or
    # never ran), or its result was not a result
    ERROR = 'error'
    # a benchmark (suite.conf's `benchmarks`) that ran to the end: it
    # measured, and checked nothing, so it is no pass
    BENCH = 'bench'


# what a test ends with when it did not do its job
BAD = (Status.FAIL, Status.ERROR)
# what a test that did its job ends with: passed, or (a benchmark) ran
GOOD = (Status.PASS, Status.BENCH)


class ExitClass(enum.IntEnum):
    """A boot's exit class (expect-scripts/PROTOCOL.md): the exit status
    of parse-console and make; the highest of its reasons (how they
    combine: pipeline/classes.py).

    Class 2 has two names: INFRASTRUCTURE, the machinery failed (no boot,
    a timeout, QEMU died, the log is not whole), and INCOMPLETE, something
    planned has no outcome (a program that never began, results missing
    at exit 0, a debug checker off, a TESTS glob that matched nothing).
    Both are the number 2 (exit 2, results.json's exit_class 2: nothing
    outside changes) and equal as numbers; they differ by name
    (exit_class_name, the summary's table). ExitClass(2) is
    INFRASTRUCTURE."""

    def __new__(cls, code, label):
        obj = int.__new__(cls, code)
        obj._value_ = label
        return obj

    PASS = 0, 'pass'
    TEST_FAILURE = 1, 'test-failure'
    INFRASTRUCTURE = 2, 'infrastructure'
    INCOMPLETE = 2, 'incomplete'
    KERNEL_PROBLEM = 3, 'kernel-problem'

    @classmethod
    def _missing_(cls, value):
        # by number (results.json, the class rules) or by name
        for c in cls:
            if isinstance(value, int) and not isinstance(value, bool) \
                    and int(c) == value:
                return c
        return None

    @property
    def label(self):
        """results.json's exit_class_name: 'test-failure', ..."""
        return self._value_

    def __repr__(self):
        return '<ExitClass.%s: %d>' % (self.name, int(self))

    def __str__(self):
        return str(int(self))

    def __format__(self, spec):
        return format(int(self), spec)


# each number's name when nothing else is known of it (class 2 of a
# results.json read back: INFRASTRUCTURE's, unless it names itself)
CLASS_NAMES = {int(c): c.label for c in ExitClass
               if c is not ExitClass.INCOMPLETE}


class Layout(enum.Enum):
    """The results.json fields of a test result, in their order, by where
    the result came from (results.json keeps the order it always had);
    'flaky' and 'explained_by' follow when the result has them."""
    # a result line of a program whose output has no nested tests, and a
    # program's exit-status result
    RESULT = ('id', 'suite', 'program', 'name', 'number', 'status',
              'duration_ms', 'skip_reason', 'note', 'line', 'excerpt',
              'metrics')
    # a planned test or program without a result
    MISSING = ('id', 'suite', 'program', 'name', 'number', 'status',
               'missing', 'duration_ms', 'skip_reason', 'note', 'line',
               'excerpt', 'metrics')
    # a nested result (kselftest's runner)
    NESTED = ('id', 'key', 'suite', 'program', 'name', 'number', 'status',
              'duration_ms', 'missing', 'skip_reason', 'note', 'line',
              'depth', 'junit_suite', 'excerpt', 'metrics')
    # results a runner's plan announced that never came
    NESTED_MISSING = ('id', 'key', 'suite', 'program', 'name', 'number',
                      'status', 'missing', 'duration_ms', 'skip_reason',
                      'note', 'line', 'junit_suite', 'excerpt', 'metrics')


@dataclasses.dataclass
class TestResult:
    """One test's outcome in one boot."""
    id: str                     # suite/program/name, unique in the boot
    suite: str
    program: str
    name: str
    number: int | None          # its KTAP number; None: it has no line
    status: Status
    layout: Layout = Layout.RESULT
    duration_ms: int | float | None = None
    skip_reason: str | None = None
    note: str | None = None
    line: int | None = None     # of its result line in the console log
    excerpt: str = ''
    metrics: dict = dataclasses.field(default_factory=dict)
    missing: bool = False       # planned, and no result came
    key: str | None = None      # nested: its place (pipeline/ktap.py)
    depth: int | None = None
    junit_suite: str | None = None
    explained_by: list | None = None    # kernel report kinds
    flaky: list | None = None   # the first run's failures it replaced
    # What the verdict reads and results.json does not hold: whether its
    # program ended, and whether that program said it failed; for a
    # nested result the runner's test and its own description; the
    # kernel reports made while its program ran.
    program_ended: bool = False
    program_failed: bool = False
    head: str | None = None
    leaf: str | None = None
    reports: list | None = None

    def to_dict(self):
        """The test as results.json has it."""
        d = {k: getattr(self, k) for k in self.layout.value}
        d['status'] = self.status.value
        if self.flaky is not None:
            d['flaky'] = self.flaky
        if self.explained_by is not None:
            d['explained_by'] = self.explained_by
        return d

    def snapshot(self):
        """What a later run's result keeps of this one (its 'flaky')."""
        return {'id': self.id, 'name': self.name,
                'status': self.status.value, 'note': self.note,
                'line': self.line, 'excerpt': self.excerpt}


@dataclasses.dataclass
class Reason:
    """One reason for a boot's exit class."""
    cls: ExitClass
    text: str

    def __post_init__(self):
        # (the class rules name classes by their numbers, as
        # PROTOCOL.md does)
        self.cls = ExitClass(self.cls)

    def to_dict(self):
        return {'class': int(self.cls), 'reason': self.text}


@dataclasses.dataclass
class BootResult:
    """Everything one boot's console log (and plan) says: results.json.
    The parts that are records of the log as it was (the boot's facts,
    kernel reports, suites and programs, the harness's events, the plan
    and the debug checkers' reports) stay dicts, as results.json has
    them."""
    variant: str
    exit_class: ExitClass
    reasons: list               # of Reason, the highest class first
    tests: list                 # of TestResult
    counts: dict
    log: str | None = None
    kernel_release: str | None = None
    kernel_cmdline: str | None = None
    boot: dict = dataclasses.field(default_factory=dict)
    duration_s: float | None = None
    accel: dict | None = None
    kernel_problems: list = dataclasses.field(default_factory=list)
    kernel_problems_total: int = 0
    plan: dict | None = None
    checks: dict = dataclasses.field(default_factory=dict)
    suites: list = dataclasses.field(default_factory=list)
    harness: dict = dataclasses.field(default_factory=dict)
    booted: bool | None = None  # False: the run never got to boot
    schema: int = 1

    @property
    def exit_class_name(self):
        return self.exit_class.label

    def to_dict(self):
        """The boot's results.json, as it has always been written."""
        d = {
            'schema': self.schema,
            'log': self.log,
            'variant': self.variant,
            'kernel_release': self.kernel_release,
            'kernel_cmdline': self.kernel_cmdline,
            'boot': self.boot,
            'duration_s': self.duration_s,
            'accel': self.accel,
            'exit_class': int(self.exit_class),
            'exit_class_name': self.exit_class_name,
            'reasons': [r.to_dict() for r in self.reasons],
            'kernel_problems': self.kernel_problems,
            'kernel_problems_total': self.kernel_problems_total,
            'counts': self.counts,
            'plan': self.plan,
            'checks': self.checks,
            'tests': [t.to_dict() for t in self.tests],
            'suites': self.suites,
            'harness': self.harness,
        }
        if self.booted is not None:
            d['booted'] = self.booted
        return d
