#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# make bisect-run (scripts/bisect-run, bisect-step) on a fake project whose
# kernel tree has commits of its own: one breaks a test (FAKE_BREAK: the
# fake QEMU fails the tests of such a kernel), a later one does not build
# (FAKE_NO_BUILD), the last builds again.

load ../helpers

setup_file() {
	fake_project "$BATS_FILE_TMPDIR/p"
	VARIANTS=default "$TOP/scripts/container-build" >"$BATS_FILE_TMPDIR/build.out" 2>&1
	local tree=$BUILD/linux n=0 what
	for what in "/* harmless */" "/* FAKE_BREAK */" "/* FAKE_NO_BUILD */" "/* builds again */"; do
		n=$((n + 1))
		if [ "$what" = "/* builds again */" ]; then
			sed -i 's|/\* FAKE_NO_BUILD \*/||' "$tree/kernel/foo.c"
		fi
		echo "$what" >>"$tree/kernel/foo.c"
		git -C "$tree" -c user.name=T -c user.email=t@t commit -qam "foo: step $n"
		git -C "$tree" tag "c$n"
	done
}

setup() {
	cp -a "$BATS_FILE_TMPDIR/p" "$BATS_TEST_TMPDIR/p"
	local d=$BATS_TEST_TMPDIR/p
	export BUILD=$d/build ARTIFACTS=$d/artifacts RESULTS=$d/results PATCHES=$d/patches
	export CONFIGS=$d/configs GUEST_TESTS=$d/guest-tests KSRC_TARBALL=$d/linux-source-6.12.tar.xz
	export ACCEL=tcg VARIANT=default
	unset TESTS GOOD BAD
}

@test "bisect-run: names the commit that broke the test, skipping one that does not build" {
	head=$(git -C "$BUILD/linux" rev-parse HEAD)
	GOOD=c1 BAD=c4 TESTS=smoke run "$TOP/scripts/bisect-run"
	echo "$output"
	[ "$status" -eq 0 ]
	c1=$(git -C "$BUILD/linux" rev-parse c1)
	c2=$(git -C "$BUILD/linux" rev-parse c2)
	[[ "$output" == *"first bad commit: $c2"* ]]
	[[ "$output" == *"foo: step 2"* ]]
	# both ends were tested first
	[[ "$output" == *"$(git -C "$BUILD/linux" rev-parse --short=12 c4) bad "* ]]
	[[ "$output" == *"$(git -C "$BUILD/linux" rev-parse --short=12 c1) good "* ]]
	# the failing test of that commit, from its run
	[[ "$output" == *"[FAIL]  smoke/ok/smoke"* ]]
	# and how to compare it with GOOD's run, which works
	r=$BUILD/bisect-run/results
	[[ "$output" == *"against GOOD: make compare A=$r/${c1:0:12} B=$r/${c2:0:12}"* ]]
	run "$TOP/scripts/pipeline" compare "$r/${c1:0:12}" "$r/${c2:0:12}"
	[ "$status" -eq 1 ]
	[[ "$output" == *"NEW FAILURE  smoke/ok/smoke: pass -> fail"* ]]
	# c3 does not build: if bisect asked, it was a skip (125), never "bad"
	c3=$(git -C "$BUILD/linux" rev-parse --short=12 c3)
	run ! grep -E "^$c3 (bad|good)" "$BUILD/bisect-run/results/steps.txt"
	# the tree a person works in is untouched
	[ "$(git -C "$BUILD/linux" rev-parse HEAD)" = "$head" ]
	[ -z "$(git -C "$BUILD/linux" status --porcelain)" ]
	# the run used only the suites TESTS names
	[ "$(tail -n1 "$BUILD/bisect-run/configs/default.variant")" = "#@ suites = smoke" ]
}

@test "bisect-run: a skip is class 2: a commit that does not build" {
	w=$BUILD/bisect-run
	git -C "$BUILD/linux" worktree add -q --detach "$w/linux" c3
	cp -r "$CONFIGS" "$w/configs"
	cd "$w/linux"
	BUILD=$w CONFIGS=$w/configs ARTIFACTS=$w/artifacts \
		BISECT_VARIANT=default BISECT_RESULTS=$BATS_TEST_TMPDIR/res run "$TOP/scripts/bisect-step"
	echo "$output"
	[ "$status" -eq 125 ]
	[[ "$output" == *" skip "*"class 2: the kernel does not build"* ]]
}

@test "bisect-run: bad ends and bad input stop it with 2 before any search" {
	GOOD=c1 BAD=c1 run "$TOP/scripts/bisect-run"
	[ "$status" -eq 2 ]
	[[ "$output" == *"GOOD and BAD are the same commit"* ]]
	GOOD=c3 BAD=c1 run "$TOP/scripts/bisect-run"
	[ "$status" -eq 2 ]
	[[ "$output" == *"GOOD=c3 is not an ancestor of BAD=c1"* ]]
	GOOD=nosuch BAD=c1 run "$TOP/scripts/bisect-run"
	[ "$status" -eq 2 ]
	[[ "$output" == *"GOOD=nosuch is not a commit of the kernel tree"* ]]
	BAD=c1 run "$TOP/scripts/bisect-run"
	[ "$status" -eq 2 ]
	[[ "$output" == *"give GOOD=<commit> and BAD=<commit>"* ]]
	# BAD passes: nothing to bisect
	GOOD=pristine BAD=c1 TESTS=smoke run "$TOP/scripts/bisect-run"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"BAD=c1 passes (default, TESTS='smoke'): nothing to bisect"* ]]
	# GOOD fails too
	GOOD=c2 BAD=c4 TESTS=smoke run "$TOP/scripts/bisect-run"
	[ "$status" -eq 2 ]
	[[ "$output" == *"GOOD=c2 fails too"* ]]
}
