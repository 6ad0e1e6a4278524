#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# What the shell steps hand each other: a step's error as the JSON it
# writes to $STEP_ERROR (step-error.sh's die, the pipeline's guard), read by one
# reader (scripts/pipeline step-error), never an "error:" line scraped
# from its output.

load ../helpers

# A project with scripts/test-variant and the real pipeline; stub NAME
# BODY replaces a step.
stage_project() {
	p=$BATS_TEST_TMPDIR/proj
	mkdir -p "$p/scripts" "$p/configs"
	cp "$TOP/scripts/test-variant" "$TOP/scripts/lib.sh" "$TOP/scripts/step-error.sh" "$p/scripts/"
	ln -s "$TOP/scripts/pipeline" "$p/scripts/pipeline"
	ln -s "$TOP/scripts/entry.py" "$p/scripts/entry.py"
	export RESULTS=$p/results ARTIFACTS=$p/artifacts CONFIGS=$p/configs BUILD=$p/build
}
stub() { printf '#!/usr/bin/env bash\n%s\n' "$2" >"$p/scripts/$1"; chmod +x "$p/scripts/$1"; }

@test "test-variant: a step's reason is the error it reported (STEP_ERROR), whole, not the line after 'error: '" {
	stage_project
	# QEMU's words, quoted in the reason on a line of their own
	stub accel-probe '. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/step-error.sh"
die "ACCEL=kvm, but KVM does not work here:
qemu-system-x86_64: error: failed to initialize kvm: Permission denied"'
	run env -u TOP PREBUILT=1 "$p/scripts/test-variant" default
	echo "$output"
	[ "$status" -eq 2 ]
	[ "$(jq -r '.reasons[0].reason' "$RESULTS/default/results.json")" = "ACCEL=kvm, but KVM does not work here:
qemu-system-x86_64: error: failed to initialize kvm: Permission denied" ]
	[ ! -e "$RESULTS/default/step-error.json" ]
}

@test "a Python step's error goes to STEP_ERROR too, and step-error reads it back; none is nothing" {
	export STEP_ERROR=$BATS_TEST_TMPDIR/e.json
	run "$TOP/scripts/pipeline" boot plan qemu /nonexistent/artifacts default
	[ "$status" -eq 2 ]
	run "$TOP/scripts/pipeline" step-error "$STEP_ERROR"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"/nonexistent/artifacts"* ]]
	rm -f "$STEP_ERROR"
	run "$TOP/scripts/pipeline" step-error "$STEP_ERROR"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}
