#!/usr/bin/env bats
# The project's shell through shellcheck: the scripts, CI's, the guest runner,
# the fakes and the test files themselves. A file of its own (split from
# project.bats) so that bats runs it beside the other files: the tooling
# tests run a file a job (scripts/run-tests).
bats_require_minimum_version 1.5.0

load ../helpers

# That `shellcheck -x OPTIONS FILE...` passes (shellcheck_files OPTIONS
# FILE...), run a few files a process, one process per CPU (one shellcheck over
# every file was the longest test of make test, 20 s of CPU in one
# process). A file whose verdict is known is not checked again:
# the per-user cache's shellcheck/ (USER_PIPELINE_CACHE, tests/helpers.bash;
# SHELLCHECK_CACHE names another place) keeps a name per file that passed,
# made of its path in the checkout, its bytes, and what else decides the
# verdict (shellcheck's version, OPTIONS, .shellcheckrc and the libraries
# the scripts source, scripts/*.sh); a change to any of them is a file not
# yet checked. Per user, not per checkout: a fresh clone's make test
# checks only what differs from a checkout checked before (20 s of CPU
# for every file, 7 December 2026).
shellcheck_files() {
	local opts=$1 common cache=${SHELLCHECK_CACHE:-$USER_PIPELINE_CACHE/shellcheck} f h todo=() keys=()
	shift
	common=$({ shellcheck --version; printf '%s\n' "$opts"; cat .shellcheckrc scripts/*.sh; } | sha256sum | cut -c1-16)
	mkdir -p "$cache"
	while read -r h f; do
		h="$cache/${f//\//%}.$common.${h:0:16}"
		[ -e "$h" ] || { todo+=("$f"); keys+=("$h"); }
	done < <(sha256sum -- "$@")
	echo "shellcheck: ${#todo[@]} of $# files not checked before"
	[ "${#todo[@]}" -gt 0 ] || return 0
	# shellcheck disable=SC2086 # OPTIONS is a list of words
	run xargs -0 -n 4 -P "$(nproc)" shellcheck -x $opts < <(printf '%s\0' "${todo[@]}")
	echo "$output"
	[ "$status" -eq 0 ] || return 1
	touch "${keys[@]}"
}

@test "shell scripts and the tests pass shellcheck" {
	cd "$TOP"
	mapfile -t files < <(grep -lE '^#!/usr/bin/env (bash|sh)|^#!/bin/sh' scripts/* scripts/dpkg-shim/* ci/* guest-tests/runner/* tests/fixtures/fakes/* .ci/run 2>/dev/null)
	[ "${#files[@]}" -gt 5 ]
	shellcheck_files "" scripts/lib.sh "${files[@]}"
	# The bats files too: this is what finds a `! cmd` that can never
	# fail a test (SC2314, SC2315).
	shellcheck_files "-s bash -e SC2030,SC2031,SC2034,SC2154,SC2164,SC1090,SC1091,SC2016,SC2317,SC2329,SC2005,SC2013" \
		tests/tooling/*.bats tests/integration/*.bats tests/system/*.bats tests/helpers.bash
}

@test "shellcheck_files: a file that fails is named, and checked again until it passes; a known one is not checked" {
	cd "$TOP"
	# (a scratch cache: the test's own)
	local SHELLCHECK_CACHE=$BATS_TEST_TMPDIR/shellcheck
	printf '#!/bin/sh\necho $1\n' >"$BATS_TEST_TMPDIR/bad.sh"
	printf '#!/bin/sh\necho "$1"\n' >"$BATS_TEST_TMPDIR/good.sh"
	run shellcheck_files "" "$BATS_TEST_TMPDIR/bad.sh" "$BATS_TEST_TMPDIR/good.sh"
	[ "$status" -ne 0 ]
	[[ "$output" == *"shellcheck: 2 of 2 files not checked before"*"bad.sh line 2"*"SC2086"* ]]
	run shellcheck_files "" "$BATS_TEST_TMPDIR/bad.sh"
	[ "$status" -ne 0 ]
	run shellcheck_files "" "$BATS_TEST_TMPDIR/good.sh"
	[ "$status" -eq 0 ]
	[[ "$output" == *"shellcheck: 1 of 1 files not checked before"* ]]
	run shellcheck_files "" "$BATS_TEST_TMPDIR/good.sh"
	[ "$status" -eq 0 ]
	[ "$output" = "shellcheck: 0 of 1 files not checked before" ]
	# other bytes, other options: checked again
	echo 'echo "$2"' >>"$BATS_TEST_TMPDIR/good.sh"
	run shellcheck_files "" "$BATS_TEST_TMPDIR/good.sh"
	[[ "$output" == *"shellcheck: 1 of 1 files not checked before"* ]]
	run shellcheck_files "-s bash" "$BATS_TEST_TMPDIR/good.sh"
	[[ "$output" == *"shellcheck: 1 of 1 files not checked before"* ]]
	# the verdicts are in that cache, by path and bytes
	compgen -G "$SHELLCHECK_CACHE/*good.sh.*" >/dev/null
}
