#!/usr/bin/env bats
# Tooling tests of scripts/ktap.py, the nested KTAP parser, on real output:
# tests/ktap/*.ktap are program outputs copied from serial console logs of
# kselftest runs in the pipeline's guest (tests/ktap/README.md), and the
# KTAP specification's own example. Each test asserts concrete ids,
# statuses, reasons and counts.

setup() {
    TESTS="$(cd "$(dirname "$BATS_TEST_FILENAME")" && pwd)"
    KTAP="$TESTS/../scripts/ktap.py"
    DATA="$TESTS/ktap"
    export PYTHONDONTWRITEBYTECODE=1
}

# q FILE EXPR: a Python expression over the parsed tests of FILE (bound to
# t, a list of flatten() dicts; leaves = the leaf ones); strings are
# printed bare, everything else as JSON.
q() {
    python3 -c 'import json, sys
sys.path.insert(0, sys.argv[1])
import ktap
with open(sys.argv[2]) as f:
    t = ktap.flatten(ktap.parse(f.read()))
leaves = [x for x in t if x["leaf"]]
by = {x["id"]: x for x in t}
v = eval(sys.argv[3])
print(v if isinstance(v, str) else json.dumps(v))' "$(dirname "$KTAP")" "$DATA/$1" "$2"
}

# eq ACTUAL EXPECTED: compare and say what differed.
eq() {
    if [ "$1" != "$2" ]; then
        echo "expected: $2" >&2
        echo "actual:   $1" >&2
        return 1
    fi
}

@test "ktap: the specification's example (indentation nesting) gives its hierarchy" {
    eq "$(q spec-example.ktap "[x['id'] for x in t]")" \
        '["main_test", "main_test/example_test_1", "main_test/example_test_1/test_1", "main_test/example_test_2", "main_test/example_test_2/test_1", "main_test/example_test_2/test_2", "main_test/example_test_3", "main_test/example_test_3/test_1", "main_test/example_test_3/test_2", "main_test/example_test_3/test_3"]'
    eq "$(q spec-example.ktap "[x['status'] for x in t]")" \
        '["fail", "pass", "pass", "pass", "skip", "pass", "fail", "pass", "fail", "skip"]'
    eq "$(q spec-example.ktap "by['main_test/example_test_2/test_1']['reason']")" 'test_1 skipped'
    eq "$(q spec-example.ktap "[x['depth'] for x in t]")" '[0, 1, 2, 1, 2, 2, 1, 2, 2, 2]'
    # a test's excerpt is its own output, up to its result line
    eq "$(q spec-example.ktap "by['main_test/example_test_3/test_2']['excerpt']")" \
        "$(printf '    # test_2: FAIL\n    not ok 2 test_2')"
}

@test "ktap: kselftest's '# ' nesting, three documents deep (futex run.sh, real)" {
    # runner.sh result -> functional/run.sh -> one TAP document per program
    eq "$(q noopts-futex.ktap "[x['id'] for x in t if x['depth'] == 0]")" '["run.sh"]'
    eq "$(q noopts-futex.ktap "[by['run.sh'][k] for k in ('status', 'reason', 'collection', 'duration_ms')]")" \
        '["fail", "exit=1", "futex", 12865.0]'
    eq "$(q noopts-futex.ktap "len(leaves)")" 39
    eq "$(q noopts-futex.ktap "sorted({x['status'] for x in leaves})")" '["pass"]'
    # futex_wait and futex_waitv died on shmget() (no SYSVIPC): their plans
    # announced 3 + 7 results, 2 came
    eq "$(q noopts-futex.ktap "by['run.sh']['missing']")" 8
    # the same program run twice with the same arguments: unique ids
    eq "$(q noopts-futex.ktap "[x['id'] for x in t if 'locked=1 owner=0 timeout=5000ns' in x['id'] and 'broadcast=0' in x['id']]")" \
        '["run.sh/futex-requeue-pi broadcast=0 locked=1 owner=0 timeout=5000ns", "run.sh/futex-requeue-pi broadcast=0 locked=1 owner=0 timeout=5000ns#2"]'
}

@test "ktap: subtests pass, fail and skip with reasons under each program (clone3, real)" {
    eq "$(q noopts-clone3.ktap "[(x['id'], x['status'], x['reason']) for x in t if x['depth'] == 0]")" \
        '[["clone3", "fail", "exit=1"], ["clone3_clear_sighand", "pass", null], ["clone3_set_tid", "fail", "exit=1"], ["clone3_cap_checkpoint_restore", "fail", "exit=1"]]'
    eq "$(q noopts-clone3.ktap "ktap.counts([x for x in t if x['path'][0] == 'clone3'])")" \
        '{"pass": 15, "fail": 3, "skip": 1, "error": 0}'
    eq "$(q noopts-clone3.ktap "[x['reason'] for x in leaves if x['status'] == 'skip']")" '["New time NS"]'
    eq "$(q noopts-clone3.ktap "by['clone3/clone3() in a new PID_NS']['status']")" fail
    # a kselftest_harness.h program nested under runner.sh
    eq "$(q noopts-clone3.ktap "by['clone3_cap_checkpoint_restore/global.clone3_cap_checkpoint_restore']['status']")" fail
}

@test "ktap: runner.sh's result glued to a program's unterminated last line (sched, real)" {
    eq "$(q noopts-sched.ktap "[(x['id'], x['status'], x['reason']) for x in t]")" \
        '[["cs_prctl_test", "fail", "exit=1"]]'
    eq "$(q noopts-sched.ktap "'FAILED: get_cs_cookie(0) == 0' in by['cs_prctl_test']['excerpt']")" true
}

@test "ktap: output that ends inside a program: its results kept under an error" {
    # noopts-futex.ktap without runner.sh's last two lines (duration, result)
    eq "$(q noopts-futex-cut.ktap "[(x['id'], x['status'], x['subtests']) for x in t if x['depth'] == 0]")" \
        '[["run.sh", "error", 39]]'
    eq "$(q noopts-futex-cut.ktap "by['run.sh']['reason']")" 'no result line for this test (its output ended)'
}

@test "ktap.py: JSON lines with --prefix; a missing file is exit 2" {
    run python3 "$KTAP" --prefix kselftest/05-sched "$DATA/noopts-sched.ktap"
    [ "$status" -eq 0 ]
    eq "$(printf '%s\n' "$output" | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["id"])')" \
        kselftest/05-sched/cs_prctl_test
    run python3 "$KTAP" "$DATA/nonexistent.ktap"
    [ "$status" -eq 2 ]
    [[ "$output" == *"nonexistent.ktap"* ]]
}

@test "ktap: one test matched across two runs by key when its name carries the outcome (futex, real)" {
    # futex_requeue prints "futex_requeue many succeeds" or "futex_requeue
    # many returned: 11 ..." (twice): ids differ, the key is the position
    eq "$(q futex-pass.ktap "[(x['key'], x['status']) for x in t if x['name'].startswith('futex_requeue many')]")" \
        '[["1.1/28.2", "pass"]]'
    eq "$(q futex-requeue-fail.ktap "[(x['key'], x['status']) for x in t if x['name'].startswith('futex_requeue many')]")" \
        '[["1.1/28.2", "fail"], ["1.1/28.3", "fail"]]'
    # documents at one depth are counted: the 28th program's TAP document
    eq "$(q futex-pass.ktap "by['run.sh/futex_requeue simple succeeds']['key']")" 1.1/28.1
}
