#!/usr/bin/env bats
# One run at a time per checkout (scripts/checkout-lock, through the
# Makefile): a second make that writes build/, artifacts/ or results/
# refuses, naming the first, or waits with WAIT=1; it never runs beside
# it. The real Makefile, lib.sh and lock in a scratch project whose pipeline
# steps are stubs that log when they start and end.
load ../helpers

setup() {
	p=$BATS_TEST_TMPDIR/proj
	mkdir -p "$p/scripts" "$p/configs"
	cp "$TOP/Makefile" "$p/"
	cp "$TOP/scripts/lib.sh" "$TOP/scripts/checkout-lock" "$TOP/scripts/make-help" "$TOP/scripts/with-knobs" "$p/scripts/"
	printf '#!/bin/sh\nexec "$@"\n' >"$p/scripts/in-runtime"
	printf '#!/bin/sh\nexit 0\n' >"$p/scripts/host-setup"
	# A step: logs "NAME start", waits for the file "go" when told to
	# (HOLD=1), then logs "NAME end". Every step writes one log, so
	# two runs at once show up as interleaved lines.
	for s in build-and-boot container-build matrix; do
		cat >"$p/scripts/$s" <<SH
#!/bin/sh
echo "$s start" >>"$p/steps.log"
if [ "\${HOLD:-0}" = 1 ]; then
	while [ ! -e "$p/go" ]; do sleep 0.05; done
fi
if [ -n "\${NESTED:-}" ]; then
	HOLD=0 NESTED= make -s -C "$p" \$NESTED RUNTIME=native || echo "nested failed" >>"$p/steps.log"
fi
echo "$s end" >>"$p/steps.log"
SH
	done
	chmod +x "$p"/scripts/*
	unset BUILD ARTIFACTS RESULTS PIPELINE_LOCK WAIT
	# (helpers.bash exported this checkout's; the scripts take TOP from it)
	export TOP=$p
	export PIPELINE_CACHE=$BATS_TEST_TMPDIR/cache
}

teardown() {
	touch "$p/go"
	[ -z "${first:-}" ] || kill -KILL -- "-$first" 2>/dev/null || true
}

# Start make all in the background, holding; wait until its step runs.
# (3>&-: bats waits for every holder of its descriptor 3)
start_first() {
	HOLD=1 setsid make -s -C "$p" all RUNTIME=native >"$p/first.out" 2>&1 3>&- &
	first=$!
	for _ in $(seq 200); do
		grep -q 'build-and-boot start' "$p/steps.log" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "the first run never started"
	cat "$p/first.out"
	return 1
}

@test "a second make in the same checkout refuses at once, naming the running one; the first is unharmed" {
	start_first
	run make -s -C "$p" container-build RUNTIME=native
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"make all (pid "*") is running in this checkout ($p)"* ]]
	[[ "$output" == *"WAIT=1"* ]]
	# it ran nothing
	run grep -c 'container-build' "$p/steps.log"
	[ "$output" = 0 ]
	touch "$p/go"
	wait "$first"
	[ "$(cat "$p/steps.log")" = "build-and-boot start
build-and-boot end" ]
}

@test "WAIT=1: the second run says for whom it waits and starts only when the first ended" {
	start_first
	WAIT=1 make -s -C "$p" matrix RUNTIME=native >"$p/second.out" 2>&1 3>&- &
	second=$!
	for _ in $(seq 200); do
		grep -q 'waiting for make all (pid' "$p/second.out" && break
		sleep 0.05
	done
	grep -q 'waiting for make all (pid' "$p/second.out"
	sleep 0.3
	run grep -c matrix "$p/steps.log"
	[ "$output" = 0 ]
	touch "$p/go"
	wait "$first"
	wait "$second"
	[ "$(cat "$p/steps.log")" = "build-and-boot start
build-and-boot end
matrix start
matrix end" ]
}

@test "a lock left by a killed run does not block; a make started inside the locked run does not wait for itself" {
	start_first
	# the whole run killed at once (SIGKILL: no trap runs)
	kill -KILL -- "-$first"
	wait "$first" || true
	run make -s -C "$p" container-build RUNTIME=native
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qx 'container-build end' "$p/steps.log"
	: >"$p/steps.log"
	NESTED=matrix run make -s -C "$p" all RUNTIME=native
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cat "$p/steps.log")" = "build-and-boot start
matrix start
matrix end
build-and-boot end" ]
}

@test "targets that write nothing (help) run while the checkout is locked" {
	start_first
	run make -s -C "$p" help
	[ "$status" -eq 0 ]
	[[ "$output" == *"container-build"* ]]
	touch "$p/go"
	wait "$first"
}
