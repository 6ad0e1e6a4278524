#!/usr/bin/env bats
# Issue 44, defect 3: a task that never uses the series pays nothing for
# it on its way to sleep and back to userspace (issue 45, defect 6). The
# instructions of those functions in default's vmlinux against
# pristine's (the same configuration without the series), by
# scripts/fastpath-insns: the static count of each body, and the no-work
# path (what a task runs when every flag the function tests is zero) of
# the return to user space and sched_submit_work(), which must not grow
# at all; within the allowances of tests/system/fastpath-allow, each with
# its reason.
# Needs both kernels built: pristine is in make check's full set
# (CHECK=full); the quick set skips this, saying so.
bats_require_minimum_version 1.5.0

setup_file() {
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	export TOP
}

@test "schedule(), __schedule() and the return to userspace: default's instructions are pristine's but for the allowances" {
	d=$TOP/artifacts/default/vmlinux.xz p=$TOP/artifacts/pristine/vmlinux.xz
	[ -f "$d" ] || { echo "the default variant is not built: run make container-build first" >&2; return 1; }
	if [ ! -f "$p" ]; then
		[ "${CHECK_SET:-quick}" = full ] ||
			skip "pristine is built in make check's full set only (CHECK=full)"
		echo "pristine is not built: run make container-build VARIANTS=pristine" >&2
		return 1
	fi
	run "$TOP/scripts/fastpath-insns" "$p" "$d" "$TOP/tests/system/fastpath-allow"
	echo "$output"
	[ "$status" -eq 0 ]
}
