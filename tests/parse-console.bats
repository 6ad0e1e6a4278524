#!/usr/bin/env bats
# Tooling tests of scripts/parse-console, pipeline/results (and its
# failure-patterns.txt) and scripts/summarize.
#
# Every log under console-logs/ is genuine serial console output of a real
# kernel booted in QEMU (console-logs/README.md says how each was made), so
# these tests check the classifier against what kernels really print, not
# against imitations. Each test asserts concrete values: exit class, problem
# kinds, test ids/statuses, and fields of results.json and junit.xml.

setup() {
    TESTS="$(cd "$(dirname "$BATS_TEST_FILENAME")" && pwd)"
    SCRIPTS="$TESTS/../scripts"
    PATTERNS="$TESTS/../pipeline/results/failure-patterns.txt"
    LOGS="$TESTS/console-logs"
    OUT="$BATS_TEST_TMPDIR/out"
    # the tests import the pipeline package too: no __pycache__ in the tree
    export PYTHONDONTWRITEBYTECODE=1
}

# parse LOG [ARGS...]: run parse-console with --out; $status is the class.
parse() {
    local log=$1
    shift
    run "$SCRIPTS/parse-console" --out "$OUT" "$@" "$LOGS/$log"
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

# kinds: the distinct kernel problem kinds, in order, comma-separated.
kinds() {
    j "','.join(dict.fromkeys(p['kind'] for p in r['kernel_problems']))"
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

@test "clean boot with a passing KTAP stream: class 0 and every field" {
    parse clean.log
    eq "$status" 0
    [[ "$output" == "lkdtm: class 0 (pass) - boot 2.05s - 2 passed, 0 failed, 1 skipped, 0 errors"* ]]
    eq "$(j "r['variant']")" lkdtm
    eq "$(j "r['kernel_release']")" 6.12.118-pipeline+
    eq "$(j "r['exit_class_name']")" pass
    eq "$(j "r['boot']['ready_uptime_s']")" 2.05
    eq "$(j "r['boot']['ready_elapsed_s']")" 4.5
    eq "$(j "r['duration_s']")" 5.3
    # the command line carries panic=-1: no false panic
    [[ "$(j "r['kernel_cmdline']")" == *"panic=-1"* ]]
    eq "$(j "r['kernel_problems']")" "[]"
    eq "$(j "[t['id'] for t in r['tests']]")" \
        '["demo/basic/global.uname_is_linux", "demo/basic/global.cpus_online", "demo/basic/global.needs_nohz_full"]'
    eq "$(j "[t['status'] for t in r['tests']]")" '["pass", "pass", "skip"]'
    eq "$(j "r['tests'][2]['skip_reason']")" "nohz_full not on the command line"
    eq "$(j "r['tests'][0]['duration_ms']")" 10
    # metrics from ksft_print_msg and from TH_LOG
    eq "$(j "r['tests'][0]['metrics']")" '{"release_len": 18}'
    eq "$(j "r['tests'][1]['metrics']")" '{"cpus": 2}'
    eq "$(j "r['tests'][1]['excerpt'].splitlines()[0]")" "#  RUN           global.cpus_online ..."
    eq "$(j "r['tests'][1]['excerpt'].splitlines()[-1]")" "ok 2 global.cpus_online"
    eq "$(j "[(s['name'], s['rc'], s['complete']) for s in r['suites']]")" '[["demo", 0, true]]'
    # junit: well-formed, counts, one suite per suite plus harness
    eq "$(x "t.get('tests'), t.get('failures'), t.get('errors'), t.get('skipped')")" "('4', '0', '0', '1')"
    eq "$(x "[s.get('name') for s in t.iter('testsuite')]")" "['harness', 'demo']"
    # the suite's KTAP file, markers stripped
    [ -f "$OUT/demo.ktap" ]
    run grep -c '@@@' "$OUT/demo.ktap"
    eq "$output" 0
    grep -qx '    ok 1 global.uname_is_linux' "$OUT/demo.ktap"
    grep -qx 'ok 1 basic' "$OUT/demo.ktap"
}

@test "KTAP plan with missing results (runner SIGKILLed) and a failing test: class 1, the missing ones lost to the kill" {
    parse ktap-missing.log
    eq "$status" 1
    [[ "$(j "[x['reason'] for x in r['reasons'] if x['class'] == 1]")" == *"broken/killed/test-3: no result in the console log (program exited rc=137)"* ]]
    eq "$(kinds)" ""
    eq "$(j "[(t['id'], t['status']) for t in r['tests']]")" \
        '[["broken/fails/global.pid_is_positive", "pass"], ["broken/fails/global.one_is_two", "fail"], ["broken/killed/global.first_passes", "pass"], ["broken/killed/global.second_kills_runner", "error"], ["broken/killed/test-3", "error"]]'
    eq "$(j "r['tests'][3]['missing']")" true
    [[ "$(j "r['tests'][3]['note']")" == *"rc=137"* ]]
    [[ "$(j "r['tests'][1]['excerpt']")" == *"Expected 2 (2) == one (1)"* ]]
    eq "$(j "[(p['name'], p['plan'], p['results'], p['rc']) for p in r['suites'][0]['programs']]")" \
        '[["fails", 2, 2, 1], ["killed", 3, 1, 137]]'
    eq "$(x "t.get('tests'), t.get('failures'), t.get('errors')")" "('6', '1', '2')"
    eq "$(x "[c.get('name') for c in t.iter('testcase') if c.find('error') is not None]")" \
        "['global.second_kills_runner', 'test-3']"
}

@test "panic from echo c > /proc/sysrq-trigger: class 3, panic with its text" {
    parse panic-sysrq.log
    eq "$status" 3
    eq "$(kinds)" panic
    eq "$(j "r['kernel_problems'][0]['first_line']")" "Kernel panic - not syncing: sysrq triggered crash"
    eq "$(j "r['kernel_problems'][0]['during']")" lkdtm/trigger
    [[ "$(j "r['kernel_problems'][0]['excerpt']")" == *"sysrq_handle_crash"* ]]
    # the program died with the kernel: its result is missing, not passed
    eq "$(j "[(t['status'], t['explained_by']) for t in r['tests']]")" '[["error", ["panic"]]]'
    eq "$(x "[c.find('failure').get('message') for c in t.iter('testcase') if c.get('classname') == 'kernel']")" \
        "['Kernel panic - not syncing: sysrq triggered crash']"
}

@test "panic from LKDTM PANIC: class 3" {
    parse panic-lkdtm.log
    eq "$status" 3
    eq "$(kinds)" panic
    eq "$(j "r['kernel_problems'][0]['first_line']")" "Kernel panic - not syncing: dumptest"
    eq "$(j "r['harness']['qemu_exit_status']")" 1
}

@test "oops (LKDTM EXCEPTION): class 3, one report from the BUG: line to end trace" {
    parse oops.log
    eq "$status" 3
    eq "$(kinds)" oops
    eq "$(j "r['kernel_problems_total']")" 1
    eq "$(j "r['kernel_problems'][0]['first_line']")" "BUG: kernel NULL pointer dereference, address: 0000000000000000"
    [[ "$(j "r['kernel_problems'][0]['excerpt'].splitlines()[0]")" == *"BUG: kernel NULL pointer dereference"* ]]
    [[ "$(j "r['kernel_problems'][0]['excerpt']")" == *"Oops: Oops: 0002 [#1] SMP"* ]]
    [[ "$(j "r['kernel_problems'][0]['excerpt'].splitlines()[-1]")" == *"---[ end trace 0000000000000000 ]---" ]]
    # KTAP lines the program printed in the middle of the splat stay out of it
    [[ "$(j "r['kernel_problems'][0]['excerpt']")" != *"TAP version"* ]]
    eq "$(j "r['tests'][0]['id']")" lkdtm/trigger/lkdtm.EXCEPTION
    eq "$(j "r['tests'][0]['status']")" error
}

@test "BUG() (LKDTM BUG): class 3, kind bug from 'kernel BUG at', excerpt from cut here" {
    parse bug.log
    eq "$status" 3
    eq "$(kinds)" bug
    eq "$(j "r['kernel_problems'][0]['first_line']")" "kernel BUG at drivers/misc/lkdtm/bugs.c:105!"
    [[ "$(j "r['kernel_problems'][0]['excerpt'].splitlines()[0]")" == *"------------[ cut here ]------------" ]]
    [[ "$(j "r['kernel_problems'][0]['excerpt']")" == *"Oops: invalid opcode"* ]]
    eq "$(j "r['tests'][0]['explained_by']")" '["bug"]'
}

@test "WARNING fails the boot although every test passed: class 3" {
    parse warning.log
    eq "$status" 3
    eq "$(kinds)" warning
    eq "$(j "r['counts']")" '{"pass": 3, "fail": 0, "skip": 1, "error": 0, "bench": 0, "total": 4, "flaky": 0}'
    eq "$(j "r['kernel_problems'][0]['first_line']")" \
        "WARNING: CPU: 1 PID: 50 at drivers/misc/lkdtm/bugs.c:112 lkdtm_WARNING+0xc/0xf"
    eq "$(j "r['kernel_problems'][0]['during']")" lkdtm/trigger
    [[ "$(j "r['kernel_problems'][0]['excerpt'].splitlines()[-1]")" == *"---[ end trace 0000000000000000 ]---" ]]
    [[ "$(j "r['kernel_problems'][0]['excerpt']")" != *"RUN"* ]]
    eq "$(x "[c.get('name') for c in t.iter('testcase') if c.get('classname') == 'kernel']")" "['warning']"
    eq "$(x "t.get('failures')")" 1
}

@test "UBSAN report, kernel text cut into the middle of a KTAP plan line" {
    parse ubsan.log
    eq "$status" 3
    eq "$(kinds)" ubsan
    [[ "$(j "r['kernel_problems'][0]['first_line']")" == "UBSAN: array-index-out-of-bounds in "*"lkdtm/bugs.c:406:16" ]]
    # "1..1[    3.130472] index 8 ..." in the log: the plan is still found
    eq "$(j "r['suites'][0]['programs'][0]['plan']")" 1
    [[ "$(j "r['kernel_problems'][0]['excerpt']")" == *"index 8 is out of range for type 'char [8]'"* ]]
    eq "$(j "[(t['id'], t['status']) for t in r['tests']]")" '[["lkdtm/trigger/lkdtm.ARRAY_BOUNDS", "pass"]]'
}

@test "KFENCE use-after-free: class 3, excerpt framed by the ==== lines" {
    parse kfence.log
    eq "$status" 3
    eq "$(kinds)" kfence
    [[ "$(j "r['kernel_problems'][0]['first_line']")" == "BUG: KFENCE: use-after-free read in lkdtm_KFENCE_READ_AFTER_FREE"* ]]
    [[ "$(j "r['kernel_problems'][0]['excerpt'].splitlines()[0]")" == *"=================="* ]]
    [[ "$(j "r['kernel_problems'][0]['excerpt'].splitlines()[-1]")" == *"=================="* ]]
}

@test "soft lockup with RCU stalls and a suite timeout: class 3 beats 2" {
    parse softlockup.log
    eq "$status" 3
    eq "$(kinds)" rcu-stall,soft-lockup
    eq "$(j "r['kernel_problems'][1]['first_line']")" "watchdog: BUG: soft lockup - CPU#0 stuck for 12s! [trigger:50]"
    eq "$(j "r['kernel_problems'][0]['during']")" lkdtm/trigger/lkdtm.SOFTLOCKUP
    [[ "$(j "r['kernel_problems'][0]['excerpt'].splitlines()[-1]")" == *"</TASK>" ]]
    [[ "$(j "[x['reason'] for x in r['reasons'] if x['class'] == 2]")" == *"suite lkdtm timed out after 40s"* ]]
    eq "$(j "r['suites'][0]['timed_out']")" true
}

@test "hung task: class 3, attributed to the running test" {
    parse hung-task.log
    eq "$status" 3
    eq "$(kinds)" hung-task
    eq "$(j "r['kernel_problems'][0]['first_line']")" "INFO: task trigger:49 blocked for more than 3 seconds."
    eq "$(j "r['kernel_problems'][0]['during']")" lkdtm/trigger/lkdtm.HUNG_TASK
    eq "$(j "r['tests'][0]['status']")" error
}

@test "KASAN slab-use-after-free: class 3" {
    parse kasan.log
    eq "$status" 3
    eq "$(kinds)" kasan
    [[ "$(j "r['kernel_problems'][0]['first_line']")" == "BUG: KASAN: slab-use-after-free in lkdtm_READ_AFTER_FREE"* ]]
    [[ "$(j "r['kernel_problems'][0]['excerpt']")" == *"Freed by task"* ]]
    [[ "$(j "r['kernel_problems'][0]['excerpt'].splitlines()[-1]")" == *"=================="* ]]
}

@test "KASAN double free: class 3" {
    parse kasan-double-free.log
    eq "$status" 3
    eq "$(kinds)" kasan
    [[ "$(j "r['kernel_problems'][0]['first_line']")" == "BUG: KASAN: double-free in "* ]]
}

@test "lockdep: lock held when returning to user space (LKDTM SPINLOCKUP), then atomic sleep" {
    parse lockdep.log
    eq "$status" 3
    eq "$(kinds)" lockdep,atomic-sleep
    eq "$(j "[p['first_line'] for p in r['kernel_problems']]")" \
        '["WARNING: lock held when returning to user space!", "BUG: sleeping function called from invalid context at fs/file_table.c:452", "BUG: scheduling while atomic: trigger/47/0x00000002"]'
    # the lockdep report prints no stack: it must stop before the next one
    eq "$(j "len(r['kernel_problems'][0]['excerpt'].splitlines())")" 7
    [[ "$(j "r['kernel_problems'][0]['excerpt'].splitlines()[0]")" == *"================================================" ]]
    # tests after it still pass, the boot still fails
    eq "$(j "r['counts']['pass']")" 3
}

@test "lockdep circular locking dependency (mutex ABBA): class 3" {
    parse lockdep-circular.log --variant debug-x
    eq "$status" 3
    eq "$(kinds)" lockdep
    eq "$(j "r['kernel_problems_total']")" 1
    eq "$(j "r['kernel_problems'][0]['first_line']")" "WARNING: possible circular locking dependency detected"
    [[ "$(j "r['kernel_problems'][0]['excerpt']")" == *"*** DEADLOCK ***"* ]]
    [[ "$(j "r['kernel_problems'][0]['excerpt'].splitlines()[-1]")" == *"</TASK>" ]]
    eq "$(j "r['variant']")" debug-x
}

@test "suspicious RCU usage: class 3, kind lockdep" {
    parse rcu-suspicious.log
    eq "$status" 3
    eq "$(kinds)" lockdep
    eq "$(j "r['kernel_problems'][0]['first_line']")" "WARNING: suspicious RCU usage"
    [[ "$(j "r['kernel_problems'][0]['excerpt']")" == *"suspicious rcu_dereference_check() usage!"* ]]
}

@test "sleeping in atomic context (preempt_disable + msleep): class 3, atomic-sleep" {
    parse atomic-sleep.log
    eq "$status" 3
    eq "$(kinds)" atomic-sleep,lockdep
    eq "$(j "r['kernel_problems'][0]['first_line']")" "BUG: scheduling while atomic: trigger/49/0x00000002"
}

@test "kmemleak: class 3, and KTAP version line cut by kernel text still parsed" {
    parse kmemleak.log
    eq "$status" 3
    eq "$(kinds)" kmemleak
    eq "$(j "r['kernel_problems'][0]['first_line']")" \
        "kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"
    eq "$(j "r['kernel_problems'][0]['during']")" shell
    # "TAP version 13[    3.489491] lkdtm: ..." in the log
    eq "$(j "r['suites'][0]['programs'][0]['ktap'][0]")" "TAP version 13"
    eq "$(j "[(t['id'], t['status']) for t in r['tests']]")" '[["lkdtm/trigger/lkdtm.KMEMLEAK", "pass"]]'
}

@test "kernel text interleaved in the middle of @@@ marker lines: markers still parsed" {
    parse interleaved.log
    eq "$status" 0
    eq "$(j "r['counts']")" '{"pass": 16, "fail": 0, "skip": 8, "error": 0, "bench": 0, "total": 24, "flaky": 0}'
    eq "$(j "len(r['suites'])")" 8
    eq "$(j "all(s['complete'] and s['rc'] == 0 for s in r['suites'])")" true
    eq "$(j "all(p['complete'] and p['rc'] == 0 for s in r['suites'] for p in s['programs'])")" true
    eq "$(j "len(set(t['id'] for t in r['tests']))")" 24
    # the 8 runs of suite demo share one KTAP file
    eq "$(grep -c '^ok [0-9]* basic$' "$OUT/demo.ktap")" 8
    eq "$(sed -n 3p "$OUT/demo.ktap")" "1..8"
}

@test "split_records: a user line cut mid-text by kernel text is rejoined" {
    # Unit test of the join rule alone. The recorded logs only show kernel
    # text landing before a user line's newline ("1..1[ 3.13] index 8 ..."
    # in ubsan.log); a program writing a partial line can be cut anywhere.
    run python3 -c 'import sys; sys.path.insert(0, sys.argv[1])
from pipeline import results as c
t = ("@@@ TEST-E[    5.000001] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x1\n"
     "ND s/p rc=0 uptime=5.1\n"
     "ok 1 glo[    5.000002] ---[ end trace 0000000000000000 ]---\n"
     "bal.x\n"
     "abc@@@ SUITE-END s rc=0 uptime=5.2\n")
for r in c.split_records(t):
    print(r)' "$TESTS/.."
    eq "$status" 0
    eq "${lines[0]}" "(1, 'k', '[    5.000001] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x1')"
    eq "${lines[1]}" "(1, 'u', '@@@ TEST-END s/p rc=0 uptime=5.1')"
    eq "${lines[2]}" "(3, 'k', '[    5.000002] ---[ end trace 0000000000000000 ]---')"
    eq "${lines[3]}" "(3, 'u', 'ok 1 global.x')"
    eq "${lines[4]}" "(5, 'u', 'abc')"
    eq "${lines[5]}" "(5, 'u', '@@@ SUITE-END s rc=0 uptime=5.2')"
}

@test "truncated log (cut inside a KTAP line): class 2, missing results are errors" {
    parse truncated.log
    eq "$status" 2
    eq "$(j "[(t['name'], t['status']) for t in r['tests']]")" \
        '[["global.uname_is_linux", "pass"], ["global.cpus_online", "error"], ["test-3", "error"]]'
    [[ "$(j "[x['reason'] for x in r['reasons']]")" == *"log truncated"* ]]
    eq "$(j "r['suites'][0]['complete']")" false
}

@test "truncated log cut inside an oops: class 3 with the partial splat" {
    parse truncated-oops.log
    eq "$status" 3
    eq "$(kinds)" oops
    [[ "$(j "r['kernel_problems'][0]['excerpt'].splitlines()[-1]")" == *"direc" ]]
}

@test "log without any @@@ markers (test binary as init): KTAP and panic found" {
    parse no-markers.log --variant raw
    eq "$status" 3
    eq "$(j "r['variant']")" raw
    eq "$(j "r['boot']['ready']")" false
    eq "$(kinds)" panic
    eq "$(j "r['kernel_problems'][0]['first_line']")" \
        "Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000000"
    eq "$(j "[(t['id'], t['status']) for t in r['tests']]")" \
        '[["ktap/program1/global.uname_is_linux", "pass"], ["ktap/program1/global.cpus_online", "pass"], ["ktap/program1/global.needs_nohz_full", "skip"]]'
}

@test "no false positives: panic_on_warn/oops=panic on the command line, failure text from user space and in test names" {
    parse false-positives.log
    eq "$status" 0
    eq "$(j "r['kernel_problems']")" "[]"
    [[ "$(j "r['kernel_cmdline']")" == *"panic_on_warn=1 oops=panic"* ]]
    eq "$(j "[t['name'] for t in r['tests']]")" '["global.kernel_BUG_at_is_only_a_name", "global.WARNING_in_a_name"]'
    # the same log is still parsed for real problems: proof the scan ran
    grep -q 'Kernel panic - not syncing: userspace text' "$LOGS/false-positives.log"
}

@test "parse-console: --quiet, unreadable log, and every recorded log is classified" {
    run "$SCRIPTS/parse-console" --quiet "$LOGS/clean.log"
    eq "$status" 0
    eq "$output" ""
    run "$SCRIPTS/parse-console" "$BATS_TEST_TMPDIR/does-not-exist.log"
    eq "$status" 2
    for f in "$LOGS"/*.log; do
        run "$SCRIPTS/parse-console" --out "$BATS_TEST_TMPDIR/all/$(basename "$f" .log)" "$f"
        [ "$status" -le 3 ]
        python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' \
            "$BATS_TEST_TMPDIR/all/$(basename "$f" .log)/junit.xml"
        [ "$(wc -c < "$f")" -lt 204800 ]
    done
}

@test "summarize: table, summary.json and highest class over the variants asked for" {
    R="$BATS_TEST_TMPDIR/results"
    "$SCRIPTS/parse-console" --quiet --variant default --out "$R/default" "$LOGS/clean.log" || true
    "$SCRIPTS/parse-console" --quiet --variant off --out "$R/off" "$LOGS/ktap-missing.log" || true
    "$SCRIPTS/parse-console" --quiet --variant debug --out "$R/debug" "$LOGS/oops.log" || true
    run "$SCRIPTS/summarize" "$R" debug default off
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
    run "$SCRIPTS/summarize" "$R" default
    eq "$status" 0
    eq "${lines[-1]}" "matrix: 2 passed, 0 failed, 1 skipped"
    # a broken results.json is an infrastructure problem, not a pass
    mkdir -p "$R/broken" && echo '{' > "$R/broken/results.json"
    run "$SCRIPTS/summarize" "$R" default broken
    eq "$status" 2
    # no variant named: a usage error, not an empty success
    run "$SCRIPTS/summarize" "$R"
    eq "$status" 2
}

@test "summarize: a variant asked for without results is class 2 in the table, never left out" {
    R="$BATS_TEST_TMPDIR/results"
    "$SCRIPTS/parse-console" --quiet --variant off --out "$R/off" "$LOGS/clean.log" || true
    run "$SCRIPTS/summarize" "$R" default off
    eq "$status" 2
    [[ "${lines[1]}" == "default "*"2 infrastructure" ]]
    [[ "${lines[2]}" == "off "*"0 pass" ]]
    [[ "$output" == *"default: no result: $R/default/results.json does not exist"* ]]
    eq "${lines[-1]}" "matrix: 2 passed, 1 failed, 1 skipped"
    eq "$(jq -r '.variants[0].exit_class' "$R/summary.json")" 2
    # nothing at all to summarize is no success either
    run "$SCRIPTS/summarize" "$BATS_TEST_TMPDIR/empty-nonexistent" default
    eq "$status" 2
}

@test "summarize: old results of variants not asked for are neither shown nor counted" {
    R="$BATS_TEST_TMPDIR/results"
    "$SCRIPTS/parse-console" --quiet --variant default --out "$R/default" "$LOGS/clean.log" || true
    # an old run of debug that crashed, and one of off that passed
    "$SCRIPTS/parse-console" --quiet --variant debug --out "$R/debug" "$LOGS/oops.log" || true
    "$SCRIPTS/parse-console" --quiet --variant off --out "$R/off" "$LOGS/clean.log" || true
    run "$SCRIPTS/summarize" "$R" default
    eq "$status" 0
    [[ "$output" != *debug* ]]
    [[ "$output" != *off* ]]
    eq "$(jq -r '[.variants[].variant] | join(" ")' "$R/summary.json")" default
}

# A log as the harness writes it when it stops a run itself (expect's
# output, the guest part from a clean boot).
harness_log() { # EVENT-LINE
    sed -n '1,/^@@@ HARNESS SEND poweroff -f/p' "$LOGS/clean.log" >"$BATS_TEST_TMPDIR/h.log"
    printf '%s\n' "$@" >>"$BATS_TEST_TMPDIR/h.log"
}

@test "parse-console: POWEROFF-TIMEOUT is the reason (class 2), not 'QEMU killed'" {
    grep -q '^@@@ HARNESS SEND poweroff -f' "$LOGS/clean.log"
    harness_log '@@@ HARNESS POWEROFF-TIMEOUT after=60' '@@@ HARNESS QEMU-EXIT status=killed' \
        '@@@ HARNESS END elapsed=70.1'
    run "$SCRIPTS/parse-console" --out "$OUT" "$BATS_TEST_TMPDIR/h.log"
    eq "$status" 2
    eq "$(j "r['reasons'][0]['reason']")" "QEMU did not end within 60s of poweroff -f"
    eq "$(j "len(r['reasons'])")" 1
    eq "$(j "[e['event'] for e in r['harness']['events']][-3]")" POWEROFF-TIMEOUT
}

@test "parse-console: INTERRUPTED is the reason (class 2), not 'log truncated'" {
    harness_log '@@@ HARNESS INTERRUPTED signal=SIGINT' '@@@ HARNESS QEMU-EXIT status=killed' \
        '@@@ HARNESS END elapsed=3.0'
    run "$SCRIPTS/parse-console" --out "$OUT" "$BATS_TEST_TMPDIR/h.log"
    eq "$status" 2
    eq "$(j "r['reasons'][0]['reason']")" "the harness was interrupted (SIGINT) and killed QEMU"
    eq "$(j "len(r['reasons'])")" 1
}

@test "parse-console: FINAL-TIMEOUT is the reason (class 2)" {
    harness_log '@@@ HARNESS FINAL-TIMEOUT after=120' '@@@ HARNESS QEMU-EXIT status=killed' \
        '@@@ HARNESS END elapsed=130.0'
    run "$SCRIPTS/parse-console" --out "$OUT" "$BATS_TEST_TMPDIR/h.log"
    eq "$status" 2
    eq "$(j "r['reasons'][0]['reason']")" "the final command timed out after 120s"
}

# clean.log up to and with its first line matching PATTERN, then QEMU
# ending by itself with status 0 (a guest reset or triple fault under
# -no-reboot ends so), as the harness writes it.
cut_log() { # PATTERN
    sed -n "1,/$1/p" "$LOGS/clean.log" >"$BATS_TEST_TMPDIR/cut.log"
    grep -q "$1" "$BATS_TEST_TMPDIR/cut.log"
    printf '%s\n' '@@@ HARNESS QEMU-EXIT status=0' '@@@ HARNESS END elapsed=4.0' >>"$BATS_TEST_TMPDIR/cut.log"
    run "$SCRIPTS/parse-console" --out "$OUT" "$BATS_TEST_TMPDIR/cut.log"
}

@test "parse-console: a suite the harness sent that never began (QEMU exited 0) is class 2, naming it and where the console stopped" {
    cut_log '^@@@ HARNESS SEND run-suite demo'
    echo "$output"
    eq "$status" 2
    eq "$(j "r['exit_class']")" 2
    eq "$(j "r['reasons'][0]['reason']")" "suite demo was sent but never began; the console stopped at line 220: / #"
    eq "$(j "r['reasons'][1]['reason']")" "the run ended before its last step (the harness never sent poweroff); the console stopped at line 220: / #"
}

@test "parse-console: QEMU exiting 0 in the middle of a suite is class 2: the suite incomplete, the run short of its end" {
    cut_log '^ok 2 global.cpus_online'
    eq "$status" 2
    j "[x['reason'] for x in r['reasons']]" | grep -q '"suite demo incomplete: no SUITE-END"'
    j "[x['reason'] for x in r['reasons']]" | grep -q '"the run ended before its last step (the harness never sent poweroff); the console stopped at line 237: ok 2 global.cpus_online"'
}

@test "parse-console: a run whose suites all ended but whose harness never sent poweroff is class 2" {
    cut_log '^@@@ HARNESS SUITE-DONE suite=demo'
    eq "$status" 2
    eq "$(j "r['counts']['pass']")" 2
    eq "$(j "len(r['reasons'])")" 1
    eq "$(j "r['reasons'][0]['reason']")" "the run ended before its last step (the harness never sent poweroff); the console stopped at line 247: / #"
}

@test "parse-console --harness-status: a harness failure the log does not explain is class 2 in results.json, not only in an exit status" {
    parse clean.log --harness-status 2
    eq "$status" 2
    eq "$(j "r['exit_class']")" 2
    eq "$(j "r['reasons'][0]['reason']")" "the harness exited 2, and the console log does not say why"
    x "len(t.findall('.//testcase'))" >/dev/null
    # a status of 0, or a log that explains the failure, adds nothing
    parse clean.log --harness-status 0
    eq "$status" 0
    parse panic-sysrq.log --harness-status 3
    eq "$status" 3
    eq "$(grep -c 'does not say why' "$OUT/results.json")" 0
}

@test "parse-console: a debug checker that turned itself off (kmemleak disabled, lockdep off) is a kernel problem naming it" {
    # clean.log with the kernel's own lines inserted before the suite
    for line in '[    2.600000] kmemleak: Kernel memory leak detector disabled' \
        '[    2.600000] turning off the locking correctness validator.'; do
        sed "/^@@@ HARNESS SEND run-suite demo/i $line" "$LOGS/clean.log" >"$BATS_TEST_TMPDIR/off.log"
        run "$SCRIPTS/parse-console" --out "$OUT" "$BATS_TEST_TMPDIR/off.log"
        eq "$status" 3
        eq "$(j "r['kernel_problems'][0]['first_line']")" "${line#*] }"
    done
    eq "$(kinds)" lockdep
    eq "$(j "r['counts']['pass']")" 2
}

@test "record-failure: a run that never booted is class 2 with its reason and log" {
    run "$SCRIPTS/record-failure" --variant default --out "$OUT" --log /x/initramfs.log \
        "guest tests of default do not build: smoke.c:3:1: error: expected ';'"
    eq "$status" 0
    eq "$(j "r['exit_class']")" 2
    eq "$(j "r['reasons'][0]['reason']")" "guest tests of default do not build: smoke.c:3:1: error: expected ';'"
    eq "$(j "r['log']")" /x/initramfs.log
    eq "$(j "r['booted']")" false
    x "t.find('.//testcase[@name=\"guest tests of default do not build\"]/error') is not None" | grep -qx True
    run "$SCRIPTS/summarize" "$BATS_TEST_TMPDIR/out/.." out
    eq "$status" 2
}

# --- accounting: every planned program, test and debug checker -------------
# The logs are real runs of this pipeline (console-logs/README.md), edited
# with sed the way a broken guest would have printed them; the plans are
# what scripts/boot-plan --plan-out wrote for those runs.

# edit LOG SED-SCRIPT: the recorded LOG edited, as $EDITED
edit() {
    EDITED=$BATS_TEST_TMPDIR/$1
    sed "$2" "$LOGS/$1" >"$EDITED"
}

# reparse ARGS...: parse-console on $EDITED
reparse() {
    run "$SCRIPTS/parse-console" --out "$OUT" "$@" "$EDITED"
}

reasons() { # the reasons of class N, one per line
    j "'\n'.join(x['reason'] for x in r['reasons'] if x['class'] == $1)"
}

@test "plan: a recorded isolated run holds against its plan: class 0, every program accounted for" {
    parse isolated.log --plan "$LOGS/isolated.plan.json"
    eq "$status" 0
    eq "$(j "r['plan']['suites'][1]['programs']")" '["abi", "cost", "effect", "lifetime", "off", "sample", "stress", "sysfs"]'
    eq "$(j "r['plan']['unplanned']")" '[]'
    eq "$(j "r['counts']")" '{"pass": 28, "fail": 0, "skip": 4, "error": 0, "bench": 0, "total": 32, "flaky": 0}'
}

@test "plan: a program that exited 0 without printing a result is class 2 naming it (kunit.py: 0 tests run)" {
    edit isolated.log '/^@@@ TEST-BEGIN isolation\/sample/,/^@@@ TEST-END isolation\/sample/{/^@@@ TEST-/!d}'
    reparse --plan "$LOGS/isolated.plan.json"
    eq "$status" 2
    eq "$(reasons 2)" "test isolation/sample/sample: no result in the console log: the program exited rc=0 without printing a KTAP result line"
    eq "$(j "[t['status'] for t in r['tests'] if t['program'] == 'sample']")" '["error"]'
}

@test "plan: a program that is not executable is class 2 naming it (run-suite no longer skips it)" {
    edit isolated.log '/^@@@ TEST-BEGIN isolation\/sample/,/^@@@ TEST-END isolation\/sample/{/^@@@ TEST-/!d}
s/^@@@ TEST-END isolation\/sample rc=0/# run-suite: isolation\/sample is not executable: it cannot run\n@@@ TEST-END isolation\/sample rc=126/'
    reparse --plan "$LOGS/isolated.plan.json"
    eq "$status" 2
    [[ "$(reasons 2)" == "test isolation/sample/sample: no result in the console log (program exited rc=126)" ]]
    [[ "$(reasons 1)" == *"program isolation/sample exited rc=126"* ]]
    [[ "$(j "[t['excerpt'] for t in r['tests'] if t['program'] == 'sample']")" == *"is not executable"* ]]
}

@test "plan: a planned program that never began is class 2 with the plan; the same log passed without one" {
    edit isolated.log '/^@@@ TEST-BEGIN isolation\/sample/,/^@@@ TEST-END isolation\/sample/d'
    reparse --no-plan
    eq "$status" 0
    reparse --plan "$LOGS/isolated.plan.json"
    eq "$status" 2
    eq "$(reasons 2)" "test isolation/sample: planned but never began; the console stopped at line 466: [   27.408080] reboot: Power down"
    eq "$(j "[(t['id'], t['status'], t['missing']) for t in r['tests'] if t['program'] == 'sample']")" '[["isolation/sample", "error", true]]'
    # plan.json next to the log is the default plan
    cp "$LOGS/isolated.plan.json" "$BATS_TEST_TMPDIR/plan.json"
    reparse
    eq "$status" 2
}

@test "plan: a program that ran but was not planned is class 2; a plan that is not one is exit 2" {
    python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
p["suites"][1]["programs"].remove("sample")
json.dump(p, open(sys.argv[2], "w"))' "$LOGS/isolated.plan.json" "$BATS_TEST_TMPDIR/p.json"
    parse isolated.log --plan "$BATS_TEST_TMPDIR/p.json"
    eq "$status" 2
    eq "$(reasons 2)" "program isolation/sample ran but was not planned (the initramfs and variant.json disagree)"
    eq "$(j "r['plan']['unplanned']")" '["isolation/sample"]'
    echo '{"suites": []}' >"$BATS_TEST_TMPDIR/bad.json"
    parse isolated.log --plan "$BATS_TEST_TMPDIR/bad.json"
    eq "$status" 2
    [[ "$output" == *"bad.json is not a plan (kernel-pipeline-plan/1)"* ]]
}

@test "plan: a kselftest test that never printed, at the top or nested, is class 2 naming what is missing" {
    parse default-kselftest-prctl.log
    eq "$status" 0
    eq "$(j "r['counts']")" '{"pass": 3, "fail": 0, "skip": 2, "error": 0, "bench": 0, "total": 5, "flaky": 0}'
    edit default-kselftest-prctl.log '/^ok 1 selftests: prctl: disable-tsc-test/d'
    reparse
    eq "$status" 2
    eq "$(reasons 2)" "test kselftest/prctl/missing-results: 1 of 5 results the runner announced never came"
    # its "ok" stays, but the test inside it never printed: untested, not passed
    edit default-kselftest-prctl.log '/^# ok 1 vma.renaming/d'
    reparse
    eq "$status" 2
    eq "$(reasons 2)" "test kselftest/prctl/set-anon-vma-name-test: 1 planned subtests never reported"
}

# the output of runner/debug-checks where the recorded run's final command
# (the older kmemleak-scan) printed its report
checks() { # kmemleak lockdep panic_on_warn: on|off each
    printf '@@@ CHECK kmemleak %s two scans done\\n@@@ CHECK lockdep %s debug_locks=%s\\n@@@ CHECK panic_on_warn %s panic_on_warn=1\\n' \
        "$1" "$2" "$([ "$2" = on ] && echo 1 || echo 0)" "$3"
}

@test "plan: debug checkers - unreported, off, or KASAN never initialized - are class 2 naming each" {
    # the recorded run predates debug-checks: nothing says they stayed on
    parse debug.log --plan "$LOGS/debug.plan.json"
    eq "$status" 2
    eq "$(reasons 2 | sed 's/:.*//')" $'debug checker kmemleak was not reported\ndebug checker lockdep was not reported\ndebug checker panic_on_warn was not reported'
    [[ "$(reasons 2)" == *"debug checker lockdep was not reported: the final command 'kmemleak-scan' ended (line 900) without a @@@ CHECK lockdep line"* ]]
    edit debug.log "/^# kmemleak-scan: done/a $(checks on on on)"
    reparse --plan "$LOGS/debug.plan.json"
    eq "$status" 0
    eq "$(j "r['checks']['lockdep']['detail']")" "debug_locks=1"
    edit debug.log "/^# kmemleak-scan: done/a $(checks off on on | sed 's/two scans done/\/sys\/kernel\/debug\/kmemleak refuses a scan (kmemleak disabled itself)/')"
    reparse --plan "$LOGS/debug.plan.json"
    eq "$status" 2
    [[ "$(reasons 2)" == "debug checker kmemleak is off: /sys/kernel/debug/kmemleak refuses a scan (kmemleak disabled itself) (line "*")" ]]
    edit debug.log "/^# kmemleak-scan: done/a $(checks on off on)"
    reparse --plan "$LOGS/debug.plan.json"
    eq "$status" 2
    [[ "$(reasons 2)" == "debug checker lockdep is off: debug_locks=0 (line "*")" ]]
    edit debug.log "/KernelAddressSanitizer initialized/d; /^# kmemleak-scan: done/a $(checks on on on)"
    reparse --plan "$LOGS/debug.plan.json"
    eq "$status" 2
    eq "$(reasons 2)" 'debug checker kasan is off: neither the console nor debug-checks saw "KernelAddressSanitizer initialized"'
    # ... unless debug-checks found the banner in dmesg (a quiet console)
    edit debug.log "/KernelAddressSanitizer initialized/d; /^# kmemleak-scan: done/a $(checks on on on)\\n@@@ CHECK kasan on dmesg"
    reparse --plan "$LOGS/debug.plan.json"
    eq "$status" 0
    # CHECK lines count only from the final command: a test cannot vouch
    edit debug.log "/^@@@ TEST-END smoke\/smoke/i $(checks on on on)"
    reparse --plan "$LOGS/debug.plan.json"
    eq "$status" 2
    eq "$(reasons 2 | sed 's/:.*//' | sort -u)" $'debug checker kmemleak was not reported\ndebug checker lockdep was not reported\ndebug checker panic_on_warn was not reported'
}

# mini RC KTAP: a run of one suite k whose program p printed KTAP (printf
# escapes) and exited RC, framed as run-suite and the harness frame it
mini() {
    { printf '@@@ HARNESS START variant=v date=x\n@@@ READY release=x uptime=1\n@@@ HARNESS SEND run-suite k\n'
      printf '@@@ SUITE-BEGIN k uptime=1\n@@@ TEST-BEGIN k/p uptime=1\n'
      printf '%b' "$2"
      printf '@@@ TEST-END k/p rc=%s uptime=2\n@@@ SUITE-END k rc=%s uptime=2\n' "$1" "$([ "$1" = 0 ] && echo 0 || echo 1)"
      printf '@@@ HARNESS SEND poweroff -f\n@@@ HARNESS QEMU-EXIT status=0\n@@@ HARNESS END elapsed=3\n'
    } >"$BATS_TEST_TMPDIR/mini.log"
    EDITED=$BATS_TEST_TMPDIR/mini.log
}

@test "plan: every KTAP document's plan counts (a kselftest target prints two); a program that bailed out or crashed lost its rest to that failure (class 1)" {
    # the target's own skips, then the runner's document short of its plan, rc 0
    mini 0 'TAP version 13\n1..2\nok 1 a # SKIP slow\nok 2 b # SKIP slow\nTAP version 13\n1..3\nok 1 selftests: p: c\n'
    reparse --no-plan
    eq "$status" 2
    eq "$(reasons 2)" $'test k/p/doc2.test-2: no result in the console log (program exited rc=0)\ntest k/p/doc2.test-3: no result in the console log (program exited rc=0)'
    mini 1 'TAP version 13\n1..3\nok 1 a\nBail out! cannot go on\n'
    reparse --no-plan
    eq "$status" 1
    [[ "$(reasons 1)" == *"test k/p/test-2: no result in the console log (program exited rc=1)"* ]]
}

@test "plan: a kselftest that skips after announcing its nested plan is a skip, not an error" {
    mini 0 'TAP version 13\n1..1\n# TAP version 13\n# 1..4\n# ok 1 first\nok 1 selftests: mm: memfd_secret # SKIP no secretmem\n'
    reparse --no-plan
    eq "$status" 0
    eq "$(j "[(t['id'], t['status'], t['skip_reason']) for t in r['tests']]")" \
        '[["k/p/memfd_secret", "skip", "no secretmem (3 planned subtests never reported)"], ["k/p/memfd_secret/first", "pass", null]]'
}

@test "plan: a TESTS glob that matched no test that ran is class 2 (a rerun of a renamed test is not a pass)" {
    mini 0 'TAP version 13\n1..1\nok 1 global.there\n'
    printf '{"format": "kernel-pipeline-plan/1", "tests": ["k/p/global.there", "k/p/global.renamed"], "suites": [{"name": "k", "programs": [], "optional": ["p"]}], "checkers": []}\n' \
        >"$BATS_TEST_TMPDIR/p.json"
    reparse --plan "$BATS_TEST_TMPDIR/p.json"
    eq "$status" 2
    eq "$(reasons 2)" "TESTS glob 'k/p/global.renamed' matched no test that ran"
}

@test "plan: a test its program listed at build time (-l) that never printed is class 2 by name, even when the KTAP count is right; a result nobody planned is listed" {
    # the program printed a test under another name: its count is right
    edit isolated.log 's/^ok 1 global.sample_runs_to_completion/ok 1 global.sample_renamed/'
    reparse --plan "$LOGS/isolated.plan.json"
    eq "$status" 2
    eq "$(reasons 2)" "test isolation/sample/global.sample_runs_to_completion: planned (the program lists it) but no result in the console log"
    eq "$(j "r['plan']['unplanned']")" '["isolation/sample/global.sample_renamed"]'
    # the recorded run: every listed test has its result
    parse isolated.log --plan "$LOGS/isolated.plan.json"
    eq "$status" 0
}

@test "plan: TESTS globs reach kselftest results by the runner's names (nested name/sub, flat 'selftests: T: name'); a selected program that crashed is class 1, not an unmatched glob" {
    printf '{"format": "kernel-pipeline-plan/1", "tests": ["kselftest/prctl/set-anon-vma-name-test", "kselftest/prctl/disable-tsc-test", "kselftest/prctl/disable-tsc-on-off-stress-test"], "suites": [{"name": "kselftest", "programs": [], "optional": ["prctl"]}], "checkers": []}\n' \
        >"$BATS_TEST_TMPDIR/p.json"
    parse default-kselftest-prctl.log --plan "$BATS_TEST_TMPDIR/p.json"
    eq "$status" 0
    eq "$(j "r['plan']['tests']")" '["kselftest/prctl/set-anon-vma-name-test", "kselftest/prctl/disable-tsc-test", "kselftest/prctl/disable-tsc-on-off-stress-test"]'
    # the selected program segfaulted before its first result
    mini 139 ''
    printf '{"format": "kernel-pipeline-plan/1", "tests": ["k/p/global.x"], "suites": [{"name": "k", "programs": [], "optional": ["p"]}], "checkers": []}\n' \
        >"$BATS_TEST_TMPDIR/p.json"
    reparse --plan "$BATS_TEST_TMPDIR/p.json"
    eq "$status" 1
}
