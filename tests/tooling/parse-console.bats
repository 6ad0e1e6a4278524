#!/usr/bin/env bats
# Tooling tests of the command lines around pipeline/results:
# scripts/pipeline parse (its options, exit status and files),
# scripts/pipeline record-failure and summarize, and of
# pipeline/results/failure-patterns.txt in both regex engines that read it.
# What the classifier makes of each recorded log (kernel reports, KTAP,
# the harness's endings, the plan) is tested in-process:
# tests/unit/test_results.py and test_verdict.py.
#
# Every log under tests/fixtures/console-logs/ is genuine serial console
# output of a real kernel booted in QEMU (its README.md says how each was
# made).

setup() {
    TESTS="$(cd "$(dirname "$BATS_TEST_FILENAME")/.." && pwd)"
    SCRIPTS="$TESTS/../scripts"
    PATTERNS="$TESTS/../pipeline/results/failure-patterns.txt"
    LOGS="$TESTS/fixtures/console-logs"
    OUT="$BATS_TEST_TMPDIR/out"
    # the tests import the pipeline package too: no __pycache__ in the tree
    export PYTHONDONTWRITEBYTECODE=1
}

# j EXPR: a Python expression over results.json (bound to r); strings are
# printed bare, everything else as JSON.
j() {
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(v if isinstance(v, str) else json.dumps(v))' "$OUT/results.json" "$1"
}

# x EXPR: a Python expression over junit.xml's root element (bound to t);
# parsing it at all proves the XML is well-formed.
x() {
    python3 -c 'import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
v = eval(sys.argv[2])
print(v)' "$OUT/junit.xml" "$1"
}

# eq ACTUAL EXPECTED: compare and say what differed.
eq() {
    if [ "$1" != "$2" ]; then
        echo "expected: $2" >&2
        echo "actual:   $1" >&2
        return 1
    fi
}

@test "failure-patterns.txt: every regex compiles in Python re and Tcl (expect)" {
    python3 -c 'import sys; sys.path.insert(0, sys.argv[1])
from pipeline import results
p = results.load_patterns()
assert len(p) > 40, len(p)
kinds = {k for k, _, _ in p}
need = {"panic", "oops", "bug", "kasan", "kfence", "ubsan", "warning",
        "lockdep", "atomic-sleep", "rcu-stall", "hung-task", "soft-lockup",
        "hard-lockup", "kmemleak", "ignore", "end"}
assert need <= kinds, need - kinds' "$TESTS/.."
    # expect reads the same file: each regex must compile in Tcl ARE too
    run tclsh <<EOF
set f [open "$PATTERNS"]
set n 0
foreach line [split [read \$f] "\n"] {
    if {[regexp {^\s*(#|$)} \$line]} continue
    if {![regexp {^(\S+)\s+(.+?)\s*$} \$line -> kind re]} { error "bad line: \$line" }
    regexp -- \$re "probe"
    incr n
}
puts \$n
EOF
    [ "$status" -eq 0 ]
    [ "$output" -gt 40 ]
    # and Tcl finds the same kind as Python on a few real report lines
    run tclsh <<EOF
set f [open "$PATTERNS"]
set pats {}
foreach line [split [read \$f] "\n"] {
    if {[regexp {^\s*(#|$)} \$line]} continue
    regexp {^(\S+)\s+(.+?)\s*$} \$line -> kind re
    lappend pats \$kind \$re
}
foreach s {
    {Kernel panic - not syncing: sysrq triggered crash}
    {BUG: kernel NULL pointer dereference, address: 0000000000000000}
    {Oops: invalid opcode: 0000 [#1] SMP}
    {watchdog: BUG: soft lockup - CPU#0 stuck for 12s! [trigger:50]}
    {rcu: INFO: rcu_sched self-detected stall on CPU}
    {Kernel command line: console=ttyS0 panic=-1 panic_on_warn=1}
} {
    foreach {kind re} \$pats { if {[regexp -- \$re \$s]} { puts \$kind; break } }
}
EOF
    [ "$status" -eq 0 ]
    eq "$(echo "$output" | tr '\n' ' ')" "panic oops bug soft-lockup rcu-stall ignore "
}

# Every recorded log classified, its junit.xml well-formed: in-process,
# tests/unit/test_results.py.
@test "parse-console: --quiet prints nothing; an unreadable log is exit 2" {
    run "$SCRIPTS/pipeline" parse --quiet "$LOGS/clean.log"
    eq "$status" 0
    eq "$output" ""
    run "$SCRIPTS/pipeline" parse "$BATS_TEST_TMPDIR/does-not-exist.log"
    eq "$status" 2
}

@test "parse-console: the exit status is the class; --out, --variant, --harness-status; plan.json next to the log is the plan, --no-plan none, a plan that is not one is exit 2" {
    run "$SCRIPTS/pipeline" parse --out "$OUT" "$LOGS/clean.log"
    eq "$status" 0
    [[ "$output" == "lkdtm: class 0 (pass) - boot 2.05s - 2 passed, 0 failed, 1 skipped, 0 errors"* ]]
    eq "$(j "r['log']")" "$LOGS/clean.log"
    eq "$(x "t.get('tests')")" 4
    grep -qx 'ok 1 basic' "$OUT/demo.ktap"
    run "$SCRIPTS/pipeline" parse --out "$OUT" --variant debug-x "$LOGS/lockdep-circular.log"
    eq "$status" 3
    eq "$(j "r['variant']")" debug-x
    # a harness failure the log does not explain: class 2 in results.json
    # too, not only in the exit status
    run "$SCRIPTS/pipeline" parse --out "$OUT" --harness-status 2 "$LOGS/clean.log"
    eq "$status" 2
    eq "$(j "r['reasons'][0]['reason']")" "the harness exited 2, and the console log does not say why"
    # the plan: a copy of isolated.log whose program sample never began
    sed '/^@@@ TEST-BEGIN isolation\/sample/,/^@@@ TEST-END isolation\/sample/d' "$LOGS/isolated.log" \
        >"$BATS_TEST_TMPDIR/isolated.log"
    run "$SCRIPTS/pipeline" parse --out "$OUT" "$BATS_TEST_TMPDIR/isolated.log"
    eq "$status" 0
    run "$SCRIPTS/pipeline" parse --out "$OUT" --plan "$LOGS/isolated.plan.json" "$BATS_TEST_TMPDIR/isolated.log"
    eq "$status" 2
    cp "$LOGS/isolated.plan.json" "$BATS_TEST_TMPDIR/plan.json"
    run "$SCRIPTS/pipeline" parse --out "$OUT" "$BATS_TEST_TMPDIR/isolated.log"
    eq "$status" 2
    eq "$(j "r['reasons'][0]['reason']")" "test isolation/sample: planned but never began; the console stopped at line 466: [   27.408080] reboot: Power down"
    run "$SCRIPTS/pipeline" parse --out "$OUT" --no-plan "$BATS_TEST_TMPDIR/isolated.log"
    eq "$status" 0
    echo '{"suites": []}' >"$BATS_TEST_TMPDIR/bad.json"
    run "$SCRIPTS/pipeline" parse --plan "$BATS_TEST_TMPDIR/bad.json" "$LOGS/isolated.log"
    eq "$status" 2
    [[ "$output" == *"bad.json is not a plan (kernel-pipeline-plan/1)"* ]]
}

@test "summarize: table, summary.json and highest class over the variants asked for" {
    R="$BATS_TEST_TMPDIR/results"
    "$SCRIPTS/pipeline" parse --quiet --variant default --out "$R/default" "$LOGS/clean.log" || true
    "$SCRIPTS/pipeline" parse --quiet --variant off --out "$R/off" "$LOGS/ktap-missing.log" || true
    "$SCRIPTS/pipeline" parse --quiet --variant debug --out "$R/debug" "$LOGS/oops.log" || true
    run "$SCRIPTS/pipeline" summarize "$R" debug default off
    eq "$status" 3
    [[ "${lines[0]}" == "variant  boot s  passed  failed  regressions  errors  skipped  crashed"* ]]
    [[ "${lines[1]}" == "debug "*"1 (oops)"*"3 kernel-problem" ]]
    [[ "${lines[2]}" == "default  2.0     2       0       -            0       1        no"*"0 pass" ]]
    [[ "${lines[3]}" == "off "*"2       1       -            2       0        no"*"1 test-failure" ]]
    # the closing line make check reads: tests, and one failure per
    # variant that crashed
    eq "${lines[-1]}" "matrix: 4 passed, 5 failed, 1 skipped"
    python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
assert s["exit_class"] == 3, s["exit_class"]
v = {r["variant"]: r for r in s["variants"]}
assert sorted(v) == ["debug", "default", "off"], sorted(v)
assert v["default"]["passed"] == 2 and v["default"]["skipped"] == 1
assert v["off"]["failed"] == 1 and v["off"]["errors"] == 2
assert v["debug"]["crashed"] is True and v["debug"]["kernel_problem_kinds"] == ["oops"]
assert v["default"]["duration_s"] == 5.3' "$R/summary.json"
    # all passed -> 0
    run "$SCRIPTS/pipeline" summarize "$R" default
    eq "$status" 0
    eq "${lines[-1]}" "matrix: 2 passed, 0 failed, 1 skipped"
    # a broken results.json is an infrastructure problem, not a pass
    mkdir -p "$R/broken" && echo '{' > "$R/broken/results.json"
    run "$SCRIPTS/pipeline" summarize "$R" default broken
    eq "$status" 2
    # no variant named: a usage error, not an empty success
    run "$SCRIPTS/pipeline" summarize "$R"
    eq "$status" 2
}

@test "summarize: a variant asked for without results is class 2 in the table, never left out" {
    R="$BATS_TEST_TMPDIR/results"
    "$SCRIPTS/pipeline" parse --quiet --variant off --out "$R/off" "$LOGS/clean.log" || true
    run "$SCRIPTS/pipeline" summarize "$R" default off
    eq "$status" 2
    [[ "${lines[1]}" == "default "*"2 infrastructure" ]]
    [[ "${lines[2]}" == "off "*"0 pass" ]]
    [[ "$output" == *"default: no result: $R/default/results.json does not exist"* ]]
    eq "${lines[-1]}" "matrix: 2 passed, 1 failed, 1 skipped"
    eq "$(jq -r '.variants[0].exit_class' "$R/summary.json")" 2
    # nothing at all to summarize is no success either
    run "$SCRIPTS/pipeline" summarize "$BATS_TEST_TMPDIR/empty-nonexistent" default
    eq "$status" 2
}

@test "summarize: old results of variants not asked for are neither shown nor counted" {
    R="$BATS_TEST_TMPDIR/results"
    "$SCRIPTS/pipeline" parse --quiet --variant default --out "$R/default" "$LOGS/clean.log" || true
    # an old run of debug that crashed, and one of off that passed
    "$SCRIPTS/pipeline" parse --quiet --variant debug --out "$R/debug" "$LOGS/oops.log" || true
    "$SCRIPTS/pipeline" parse --quiet --variant off --out "$R/off" "$LOGS/clean.log" || true
    run "$SCRIPTS/pipeline" summarize "$R" default
    eq "$status" 0
    [[ "$output" != *debug* ]]
    [[ "$output" != *off* ]]
    eq "$(jq -r '[.variants[].variant] | join(" ")' "$R/summary.json")" default
}

@test "record-failure: a run that never booted is class 2 with its reason and log" {
    run "$SCRIPTS/pipeline" record-failure --variant default --out "$OUT" --log /x/initramfs.log \
        "guest tests of default do not build: smoke.c:3:1: error: expected ';'"
    eq "$status" 0
    eq "$(j "r['exit_class']")" 2
    eq "$(j "r['reasons'][0]['reason']")" "guest tests of default do not build: smoke.c:3:1: error: expected ';'"
    eq "$(j "r['log']")" /x/initramfs.log
    eq "$(j "r['booted']")" false
    x "t.find('.//testcase[@name=\"guest tests of default do not build\"]/error') is not None" | grep -qx True
    run "$SCRIPTS/pipeline" summarize "$BATS_TEST_TMPDIR/out/.." out
    eq "$status" 2
}
