"""How exit classes combine: every rule that turns classes, and what a
run observed beside them, into a class or a run's exit status. A boot's
own observations become classed reasons in results/verdict.py; from
there on, the boot's class, the summary's, compare's "regressed", the
main job's status, a CI job's, make check's extra failures and git
bisect's answer are decided here and nowhere else (the shell steps ask
through `scripts/pipeline class`; tests/unit/test_layers.py holds that
no other module computes one).

The bottom layer: it imports only models. Python 3.11 standard library
only (Debian 12).
"""

from .models import ExitClass

# git bisect run's answers
GOOD, BAD, SKIP = 0, 1, 125


def recorded(res: dict) -> int:
    """The class a results.json (RES, as read) records; one that records
    none is no whole run's result: class 2."""
    return res.get('exit_class', int(ExitClass.INFRASTRUCTURE))


def named(number: int, name: str | None) -> ExitClass:
    """The class a results.json records as NUMBER and NAME (class 2 is
    infrastructure or incomplete); a name that is not one of NUMBER's
    is ignored."""
    for c in ExitClass:
        if int(c) == number and c.label == name:
            return c
    return ExitClass(number)


def green(cls) -> bool:
    """A run of class CLS passed: nothing to run again, fit for a
    baseline, no reason to show."""
    return cls == ExitClass.PASS


def of_reasons(classes) -> ExitClass:
    """A boot's class: the highest of its reasons' classes (none: pass).
    A class 2 is INCOMPLETE when every class-2 reason is (something
    planned has no outcome), INFRASTRUCTURE when any is (the machinery
    failed, which explains more)."""
    classes = [ExitClass(c) for c in classes]
    top = max((int(c) for c in classes), default=int(ExitClass.PASS))
    if top == ExitClass.INCOMPLETE and all(
            c is ExitClass.INCOMPLETE for c in classes if c == top):
        return ExitClass.INCOMPLETE
    return ExitClass(top)


def raised(current, cls) -> ExitClass:
    """CURRENT raised to at least CLS (a reason added after the fact)."""
    return ExitClass(max(int(current), int(cls)))


# how the harness (expect-scripts/boot-and-test.exp) can end
HARNESS_OUTCOMES = ('ended', 'panic', 'timeout', 'eof', 'qemu-failed',
                    'interrupted')


def harness_status(outcome: str) -> int:
    """The harness's exit status for how it ended (HARNESS_OUTCOMES): 0
    when QEMU ended by itself with status 0 after poweroff, 3 when it
    saw a kernel panic, 2 for every other end (a timeout, silence, QEMU
    gone early or failing, an interrupt). The run's class is parse's;
    this status is what it holds the log against (harness_unexplained)."""
    if outcome not in HARNESS_OUTCOMES:
        raise ValueError('unknown harness outcome %r' % outcome)
    if outcome == 'ended':
        return int(ExitClass.PASS)
    if outcome == 'panic':
        return int(ExitClass.KERNEL_PROBLEM)
    return int(ExitClass.INFRASTRUCTURE)


def harness_unexplained(current, harness_status) -> bool:
    """The harness exited non-zero (HARNESS_STATUS, None: unknown) and the
    log's class CURRENT does not say why (below infrastructure)."""
    return harness_status not in (None, 0) and \
        int(current) < ExitClass.INFRASTRUCTURE


def not_booted() -> ExitClass:
    """A run that never got to boot (no kernel, no initramfs, no
    artifacts, a log that could not be classified)."""
    return ExitClass.INFRASTRUCTURE


def counts_as_failure(cls) -> bool:
    """A variant whose class is this is one more failure in the matrix
    line, beside its tests' (it did not run, or did not run whole)."""
    return int(cls) >= ExitClass.INFRASTRUCTURE


def summary(row_classes, lost: bool) -> ExitClass:
    """A set of boots' class: the highest; a LOST test (not accepted)
    makes a set that is otherwise green a test failure."""
    worst = of_reasons(row_classes)
    if worst == ExitClass.PASS and lost:
        return ExitClass.TEST_FAILURE
    return worst


def worse(class_a, class_b) -> bool:
    """B's class is worse than A's."""
    return int(class_b) > int(class_a)


def regressed(class_a, class_b, new_failures: int, lost: int,
              new_kernel_problems: int) -> bool:
    """compare: B regressed from A in one variant: a worse class, a new
    kernel problem, a new failure or a LOST test not accepted."""
    return worse(class_a, class_b) or new_kernel_problems > 0 or \
        new_failures > 0 or lost > 0


def compare_status(regressed_variants) -> int:
    """compare's exit status: 1 when any variant regressed (or is
    missing in B), else 0."""
    return int(ExitClass.TEST_FAILURE) if regressed_variants else 0


def baseline_status(lost: int) -> int:
    """baseline check's exit status: 1 when a test of the baseline was
    lost."""
    return int(ExitClass.TEST_FAILURE) if lost else 0


def matrix(summary_status: int, build_failed: bool) -> int:
    """The main job's (build-and-boot's) exit status: the summary's class,
    at least 2 when anything failed to build."""
    if build_failed:
        return max(summary_status, int(ExitClass.INFRASTRUCTURE))
    return summary_status


def job(build_status: int, boot_class: int) -> int:
    """A CI variant job's exit status: the worse of its build's and its
    boot's class. A build that failed is class 2 whatever status it ended
    with (container-build can end 1, a tool's own status under set -e:
    no test failed)."""
    build = int(ExitClass.INFRASTRUCTURE) if build_status else 0
    return max(build, boot_class)


def main_job_failures(rc: int, summary_failed: int | None,
                      build_failed: bool) -> list[str]:
    """What make check counts as failures of the main job beyond its
    summary's counts: 'build' when something failed to build; 'main-job'
    when the job exited RC != 0 and its summary (SUMMARY_FAILED, None:
    no summary, counted as a failure already) counts no failure (a
    summarize that died after writing summary.json, a class 1 with no
    failing test behind it)."""
    out = []
    if build_failed:
        out.append('build')
    elif rc != 0 and summary_failed == 0:
        out.append('main-job')
    return out


def bisect(cls: int) -> tuple[str, int]:
    """git bisect run's answer for a boot of class CLS: good (0) for a
    pass, bad (1) for a test failure or a kernel problem, skip (125) for
    a run that tells nothing (class 2, or an unknown status)."""
    if cls == ExitClass.PASS:
        return 'good', GOOD
    if cls in (ExitClass.TEST_FAILURE, ExitClass.KERNEL_PROBLEM):
        return 'bad', BAD
    return 'skip', SKIP
