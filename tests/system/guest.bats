#!/usr/bin/env bats
# Harness tests with real guests: they need the `default` variant built
# (make container-build), and run after it in `make check`. Each boots
# QEMU through the same scripts the matrix uses, into its own results dir.
bats_require_minimum_version 1.5.0

setup_file() {
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	export TOP
	[ -f "$TOP/artifacts/default/variant.json" ] || {
		echo "the default variant is not built: run make container-build first" >&2
		return 1
	}
}

setup() {
	# Under build/, so the container sees it (the repository is mounted).
	export RESULTS=$TOP/build/harness-results/$BATS_TEST_NUMBER
	rm -rf "$RESULTS"
}

# make check's set (scripts/check hands it over as CHECK_SET): the quick
# one boots default's smoke suite where a test needs only some boot, and
# leaves out the cold rebuild.
quick_set() {
	[ "${CHECK_SET:-quick}" != full ]
}

# suites_run RESULTS_JSON: the suites a boot ran, space separated
suites_run() {
	jq -r '[.tests[].id | split("/")[0]] | unique | join(" ")' "$1"
}

no_qemu_left() {
	! pgrep -f "qemu-system.*$TOP/"
}

@test "a guest that panics is reported as a crash (3) within seconds, panic text in the excerpt" {
	start=$SECONDS
	SUITES=harness-crash run "$TOP/scripts/in-runtime" scripts/test-variant default
	[ "$status" -eq 3 ]
	[ $((SECONDS - start)) -lt 60 ]
	r=$RESULTS/default/results.json
	[ "$(jq -r .exit_class_name "$r")" = kernel-problem ]
	[ "$(jq -r '.kernel_problems[0].kind' "$r")" = panic ]
	jq -r '.kernel_problems[0].excerpt' "$r" | grep -q 'Kernel panic - not syncing: sysrq triggered crash'
	# decoded to file:line against the kernel's vmlinux (from its vmlinux.xz)
	jq -r '.kernel_problems[0].decoded' "$r" | grep -qE 'sysrq_handle_crash \(drivers/tty/sysrq\.c:[0-9]+\)'
	[[ "$output" == *"[CRASH] kernel panic"* ]]
	grep -q '@@@ HARNESS PANIC' "$RESULTS/default/console.log"
	grep -q 'testcase.*kernel' "$RESULTS/default/junit.xml"
	no_qemu_left
}

@test "a guest test that hangs is stopped at the suite timeout and reported as a timeout (2)" {
	start=$SECONDS
	SUITES=harness-hang run "$TOP/scripts/in-runtime" scripts/test-variant default
	[ "$status" -eq 2 ]
	took=$((SECONDS - start))
	[ "$took" -ge 15 ]
	[ "$took" -lt 90 ]
	grep -q '@@@ HARNESS SUITE-TIMEOUT suite=harness-hang after=15' "$RESULTS/default/console.log"
	[ "$(jq -r .exit_class_name "$RESULTS/default/results.json")" = infrastructure ]
	no_qemu_left
}

@test "a clean guest passes, with the QEMU command line at the top of the log" {
	SUITES=smoke run "$TOP/scripts/in-runtime" scripts/test-variant default
	[ "$status" -eq 0 ]
	accel=$(jq -r .accel.name "$RESULTS/default/results.json")
	head -n 3 "$RESULTS/default/console.log" | grep -q "^@@@ HARNESS QEMU qemu-system-x86_64 -accel $accel"
	[ "$(jq -r '.counts.fail' "$RESULTS/default/results.json")" = 0 ]
	[ "$(jq -r '.counts.pass' "$RESULTS/default/results.json")" -ge 5 ]
	[ -s "$RESULTS/default/smoke.ktap" ]
	no_qemu_left
}

@test "TESTS runs one test of a kselftest_harness program in the guest, through the harness's own -r" {
	TESTS='smoke/smoke/global.cmdline_is_the_variant_one' run "$TOP/scripts/in-runtime" scripts/test-variant default
	[ "$status" -eq 0 ]
	r=$RESULTS/default/results.json
	[ "$(jq -r '[.tests[].id] | join(" ")' "$r")" = smoke/smoke/global.cmdline_is_the_variant_one ]
	[ "$(jq -r .counts.pass "$r")" = 1 ]
	grep -q '^# run-suite: 1 of [0-9]* tests selected' "$RESULTS/default/console.log"
	no_qemu_left
}

@test "ACCEL: auto says which accelerator and why; ACCEL=kvm where KVM does not work is exit 2 within seconds" {
	run "$TOP/scripts/in-runtime" scripts/accel-probe
	[ "$status" -eq 0 ]
	read -r accel reason <<<"$output"
	[ -n "$reason" ]
	if [ "$accel" = kvm ]; then
		skip "KVM works on this host: nothing to refuse"
	fi
	start=$SECONDS
	ACCEL=kvm run "$TOP/scripts/in-runtime" scripts/test-variant default
	[ "$status" -eq 2 ]
	[ $((SECONDS - start)) -lt 60 ]
	[[ "$output" == *"error: ACCEL=kvm, but KVM does not work here: "* ]]
	[[ "$(jq -r '.reasons[0].reason' "$RESULTS/default/results.json")" == "ACCEL=kvm, but KVM does not work here: "* ]]
	[ ! -e "$RESULTS/default/console.log" ]
	no_qemu_left
}

@test "make boot gives a usable interactive shell; Ctrl-A X quits" {
	command -v expect >/dev/null
	run expect -c "
		set timeout 120
		spawn make -s -C {$TOP} boot VARIANT=default
		expect {
			-re {guest:/# } {}
			timeout { exit 10 }
		}
		send \"uname -r; echo answer=\\\$((6 * 7))\r\"
		expect {
			-re {answer=42} {}
			timeout { exit 11 }
		}
		send \"\x01x\"
		expect {
			eof {}
			timeout { exit 12 }
		}
	"
	[ "$status" -eq 0 ]
	no_qemu_left
}

@test "an option a fragment asks for that Kconfig drops fails the config step with 2, naming it" {
	cfg=$TOP/build/harness-configs
	rm -rf "$cfg"
	mkdir -p "$cfg"
	cp "$TOP/configs/base.config" "$cfg/"
	# KASAN needs SLUB without SLUB_TINY: olddefconfig drops it silently.
	printf 'CONFIG_SLUB_TINY=y\nCONFIG_KASAN=y\n' >"$cfg/broken.variant"
	CONFIGS=$cfg run "$TOP/scripts/in-runtime" \
		scripts/config-variant broken "$TOP/build/linux" "$TOP/build/harness-configs/obj"
	[ "$status" -eq 2 ]
	[[ "$output" == *"CONFIG_KASAN=y (from broken.variant) became not set"* ]]
}

@test "ci/variant-job default runs the same steps as the matrix and passes (only the smoke suite unless CHECK=full)" {
	if quick_set; then
		run env SUITES=smoke "$TOP/ci/variant-job" default
	else
		run "$TOP/ci/variant-job" default
	fi
	[ "$status" -eq 0 ]
	[ -f "$RESULTS/default/junit.xml" ]
	if quick_set; then
		[ "$(suites_run "$RESULTS/default/results.json")" = smoke ]
	else
		[ "$(suites_run "$RESULTS/default/results.json")" != smoke ]
	fi
}

@test "make repro-check: default rebuilt elsewhere, clock +1 year, no ccache, is bit-for-bit identical" {
	! quick_set || skip "CHECK=full only: a cold build of default, about 10 min on 2 cores"
	run make -s -C "$TOP" repro-check VARIANTS=default
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"repro default/bzImage"*identical* ]]
	[[ "$output" == *"repro default/headers.tar.xz"*identical* ]]
}

@test "RUNTIME=native builds the same bzImage as the container for default" {
	"$TOP/scripts/host-setup" native
	out=$TOP/build/native
	rm -rf "$out"
	RUNTIME=native OBJ_ROOT=$out OUT_ROOT=$out/out run "$TOP/scripts/in-runtime" scripts/build-kernel default
	[ "$status" -eq 0 ]
	[ "$(sha256sum <"$out/out/default/bzImage")" = "$(sha256sum <"$TOP/artifacts/default/bzImage")" ]
	rm -rf "$out"
}

@test "the real build's artifacts: SHA256SUMS checks, the manifest names every variant and patch" {
	(cd "$TOP/artifacts" && sha256sum --quiet -c SHA256SUMS)
	m=$TOP/artifacts/manifest.json
	[ "$(jq -r '.variants | length' "$m")" -ge 1 ]
	for v in $(jq -r '.variants | keys[]' "$m"); do
		k=$(jq -r ".variants.\"$v\".kernel.variant" "$m")
		[ "$(jq -r ".kernels.\"$k\".artifacts.bzImage" "$m")" = "$(sha256sum <"$TOP/artifacts/$k/bzImage" | cut -d' ' -f1)" ]
		[ "$(jq -r ".variants.\"$v\".artifacts[\"initramfs.cpio.gz\"]" "$m")" = "$(sha256sum <"$TOP/artifacts/$v/initramfs.cpio.gz" | cut -d' ' -f1)" ]
	done
	[ "$(jq -r '.series.patches | length' "$m")" = "$(grep -cv '^#' "$TOP/patches/series")" ]
	[ "$(jq -r .environment.image_id "$m")" != null ]
}

@test "guest C code builds with -Wall -Wextra -Werror (host libc headers)" {
	ksft=$TOP/build/linux/tools/testing/selftests
	[ -f "$ksft/kselftest_harness.h" ]
	for c in "$TOP"/guest-tests/runner/*.c "$TOP"/guest-tests/smoke/*.c "$TOP"/guest-tests/harness-*/*.c; do
		gcc -fsyntax-only -Wall -Wextra -Werror -isystem "$ksft" -I "$TOP/guest-tests/lib" "$c"
	done
}

@test "a fresh clone boots and passes default's suites from a copy of artifacts/ alone (no build/; only the smoke suite unless CHECK=full)" {
	w=$TOP/build/harness-fresh
	rm -rf "$w"
	mkdir -p "$w/clone"
	# the checkout as it is (committed or not), without build/, artifacts/, results/
	git -C "$TOP" ls-files -z --cached --others --exclude-standard | (cd "$TOP" && xargs -0 cp --parents -t "$w/clone")
	cp -r "$TOP/artifacts" "$w/downloaded"
	rm -f "$w/downloaded"/*/.inputs "$w/downloaded"/*/.initramfs-inputs
	(cd "$w/downloaded" && sha256sum --quiet -c SHA256SUMS)
	[ ! -e "$w/clone/build" ]
	# SUITES: the variant's own (default's), unless the caller narrows them
	! quick_set || FRESH_SUITES=${FRESH_SUITES:-smoke}
	env -u TOP -u RESULTS make -s -C "$w/clone" test-variant VARIANT=default ARTIFACTS="$w/downloaded" \
		${FRESH_SUITES:+SUITES="$FRESH_SUITES"}
	r=$w/clone/results/default/results.json
	[ "$(jq -r .exit_class "$r")" = 0 ]
	[ "$(jq -r .counts.pass "$r")" -ge 5 ]
	[ -z "${FRESH_SUITES:-}" ] || [ "$(suites_run "$r")" = "$FRESH_SUITES" ]
	grep -q -- "-kernel $w/downloaded/default/bzImage" "$w/clone/results/default/console.log"
	# nothing was built there: no kernel tree, no objects
	# (one assertion a line: a failure inside an && list does not fail a bats test)
	[ ! -e "$w/clone/build/linux" ]
	[ ! -e "$w/clone/build/default" ]
	[ ! -e "$w/clone/build/initramfs" ]
	no_qemu_left
	rm -rf "$w"
}
