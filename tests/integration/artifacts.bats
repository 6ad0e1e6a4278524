#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# The whole pipeline on a fake project (tests/helpers.bash: fake_project):
# a fake kernel source that "builds" in milliseconds, small guest tests
# compiled for real, a fake QEMU. What is tested is the contract between
# the build and the boot (artifacts/<variant>/, variant.json, manifest,
# SHA256SUMS) and the honesty of the verdicts: results are invalidated
# first, every variant asked for gets a result, nothing old counts.

load ../helpers

setup_file() {
	# One build for the whole file; each test gets its own copy.
	fake_project "$BATS_FILE_TMPDIR/p"
	add_variant crash '#@ extends = default' '#@ kernel = default' '#@ cmdline = fake=panic'
	VARIANTS="default crash" "$TOP/scripts/container-build" >"$BATS_FILE_TMPDIR/build.out" 2>&1
}

setup() {
	cp -a "$BATS_FILE_TMPDIR/p" "$BATS_TEST_TMPDIR/p"
	fake_project_env "$BATS_TEST_TMPDIR/p"
}

fake_project_env() { # DIR: the exports of fake_project for a copy of one
	local d=$1
	export BUILD=$d/build ARTIFACTS=$d/artifacts RESULTS=$d/results PATCHES=$d/patches
	export CONFIGS=$d/configs GUEST_TESTS=$d/guest-tests
	export KSRC_TARBALL=$d/linux-source-6.12.tar.xz
}

result() { # VARIANT JQ
	jq -r "$2" "$RESULTS/$1/results.json"
}

@test "build: every variant gets its guest-test programs, initramfs and a complete variant.json" {
	for v in default crash; do
		a=$ARTIFACTS/$v
		[ -x "$a/guest-tests/smoke/ok" ]
		# an all_variants suite is in every initramfs
		[ -x "$a/guest-tests/selftest/ok" ]
		gzip -dc "$a/initramfs.cpio.gz" | cpio -it --quiet | grep -qx 'tests/smoke/ok'
		gzip -dc "$a/initramfs.cpio.gz" | cpio -it --quiet | grep -qx 'etc/pipeline/expected'
		j=$a/variant.json
		[ "$(jq -r .format "$j")" = kernel-pipeline-variant/1 ]
		[ "$(jq -r .kernel.variant "$j")" = default ]
		[ "$(jq -r .kernel.bzImage_sha256 "$j")" = "$(sha256sum <"$ARTIFACTS/default/bzImage" | cut -d' ' -f1)" ]
		[ "$(jq -r .initramfs.sha256 "$j")" = "$(sha256sum <"$a/initramfs.cpio.gz" | cut -d' ' -f1)" ]
		# every parameter a boot needs, resolved
		for k in smp mem cmdline qemu_args suites boot_timeout silence timeout_scale final; do
			[ "$(jq -r ".params | has(\"$k\")" "$j")" = true ] || { echo "no params.$k in $j"; return 1; }
		done
		[ "$(jq -r '.suites.smoke.timeout' "$j")" = 5 ]
		[ "$(jq -r '.suites.smoke.programs[0]' "$j")" = ok ]
	done
	[ "$(jq -r .params.cmdline "$ARTIFACTS/crash/variant.json")" = fake=panic ]
	[ "$(jq -r .boot_only "$ARTIFACTS/crash/variant.json")" = true ]
	# The guest checks the kernel it runs against what was built.
	gzip -dc "$ARTIFACTS/crash/initramfs.cpio.gz" | (cd "$BATS_TEST_TMPDIR" && cpio -id --quiet etc/pipeline/expected)
	grep -qx 'release=6.12.0-fake' "$BATS_TEST_TMPDIR/etc/pipeline/expected"
	grep -qx 'cmdline=fake=panic' "$BATS_TEST_TMPDIR/etc/pipeline/expected"
}

@test "build: the manifest and SHA256SUMS cover kernels, boot-only variants and guest tests" {
	m=$ARTIFACTS/manifest.json
	[ "$(jq -r '.variants | keys | join(" ")' "$m")" = "crash default" ]
	[ "$(jq -r '.kernels | keys | join(" ")' "$m")" = "default" ]
	[ "$(jq -r '.variants.crash.artifacts["initramfs.cpio.gz"]' "$m")" = "$(sha256sum <"$ARTIFACTS/crash/initramfs.cpio.gz" | cut -d' ' -f1)" ]
	[ "$(jq -r '.variants.default.artifacts["guest-tests/smoke/ok"]' "$m")" != null ]
	[ "$(jq -r '.kernels.default.artifacts.bzImage' "$m")" = "$(sha256sum <"$ARTIFACTS/default/bzImage" | cut -d' ' -f1)" ]
	for f in default/bzImage default/variant.json default/initramfs.cpio.gz crash/variant.json \
		crash/initramfs.cpio.gz crash/guest-tests/smoke/ok manifest.json; do
		grep -q "  $f\$" "$ARTIFACTS/SHA256SUMS" || { echo "$f not in SHA256SUMS"; return 1; }
	done
	(cd "$ARTIFACTS" && sha256sum --quiet -c SHA256SUMS)
	# build state is not part of a download
	run grep -c '/\.' "$ARTIFACTS/SHA256SUMS"
	[ "$output" = 0 ]
}

@test "build: a guest-test edit rebuilds only the initramfs, and says so; a cmdline edit no kernel either" {
	# (this copy of the project lives elsewhere: its kernel is rebuilt once)
	VARIANTS=default "$TOP/scripts/container-build"
	before=$(stat -c %Y.%i "$ARTIFACTS/default/bzImage")
	old=$(sha256sum <"$ARTIFACTS/default/initramfs.cpio.gz")
	sed -i 's/ok 1/ok 1 edited/' "$GUEST_TESTS/smoke/ok.c"
	VARIANTS=default run "$TOP/scripts/container-build"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"kernel default"*"ok (up to date)"* ]]
	[[ "$output" == *"initramfs default"*"changed: guest-tests; the kernel was not rebuilt"* ]]
	[ "$(stat -c %Y.%i "$ARTIFACTS/default/bzImage")" = "$before" ]
	[ "$(sha256sum <"$ARTIFACTS/default/initramfs.cpio.gz")" != "$old" ]
	sed -i 's/^#@ cmdline = .*/#@ cmdline = fake=clean quiet/' "$CONFIGS/default.variant"
	VARIANTS=default run "$TOP/scripts/container-build"
	[[ "$output" == *"kernel default"*"ok (up to date)"* ]]
	[[ "$output" == *"initramfs default"*"changed: variant; the kernel was not rebuilt"* ]]
	[ "$(jq -r .params.cmdline "$ARTIFACTS/default/variant.json")" = "fake=clean quiet" ]
	# nothing changed: nothing rebuilt
	VARIANTS=default run "$TOP/scripts/container-build"
	[[ "$output" == *"initramfs default"*"ok (up to date)"* ]]
}

@test "build: the kernel's identity is what changes its bytes: a pipeline module's edit rebuilds no kernel, a build step's edit does" {
	# (this copy of the project lives elsewhere: its kernel is rebuilt once)
	VARIANTS=default "$TOP/scripts/container-build"
	before=$(stat -c %Y.%i "$ARTIFACTS/default/bzImage")
	# A copy of the checkout's code, edited where the real one must not be.
	top=$BATS_TEST_TMPDIR/top
	mkdir -p "$top"
	(cd "$TOP" && git ls-files -z -- scripts pipeline kselftests | cpio -pdm0 --quiet "$top")
	for f in "$top"/scripts/pipeline "$top"/scripts/entry.py "$top"/pipeline/*.py "$top"/pipeline/*/*.py; do
		echo '# an edit that changes no kernel byte' >>"$f"
	done
	TOP=$top run "$top/scripts/build-kernel" default
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"kernel default"*"ok (up to date)"* ]]
	[ "$(stat -c %Y.%i "$ARTIFACTS/default/bzImage")" = "$before" ]
	# A step that runs the build is the kernel's input: rebuilt, and why.
	echo '# an edit of a build step' >>"$top/scripts/build-kernel"
	TOP=$top run "$top/scripts/build-kernel" default
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"ok (up to date)"* ]]
	grep -q 'the build scripts changed' "$ARTIFACTS/default/build.log"
}

@test "build: the initramfs is reproducible (rebuilt from nothing in another directory, same bytes)" {
	old=$(sha256sum <"$ARTIFACTS/default/initramfs.cpio.gz")
	rm -rf "$ARTIFACTS/default/initramfs.cpio.gz" "$ARTIFACTS/default/.initramfs-inputs"
	sleep 1
	"$TOP/scripts/build-initramfs" default
	[ "$(sha256sum <"$ARTIFACTS/default/initramfs.cpio.gz")" = "$old" ]
}

@test "container-build: JOBS=2 with a kernel that fails: the others are built, the failure named with its log" {
	add_variant broken 'CONFIG_BREAK_BUILD=y'
	add_variant other 'CONFIG_OTHER=y' '#@ cmdline = fake=clean'
	VARIANTS="broken other default" JOBS=2 run "$TOP/scripts/container-build"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"kernel broken (artifacts/broken/build.log)"* || "$output" == *"kernel broken ($ARTIFACTS/broken/build.log)"* ]]
	grep -q 'error: broken on purpose' "$ARTIFACTS/broken/build.log"
	[ ! -e "$ARTIFACTS/broken/bzImage" ]
	[ -f "$ARTIFACTS/other/variant.json" ]
	[ -f "$ARTIFACTS/default/variant.json" ]
	# the manifest covers what this run built, not the failure
	[ "$(jq -r '.variants | keys | join(" ")' "$ARTIFACTS/manifest.json")" = "default other" ]
}

@test "container-build: an unknown variant or a bad JOBS stops before anything, with 2" {
	VARIANTS="default nosuch" run "$TOP/scripts/container-build"
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown variant 'nosuch'"* ]]
	JOBS=x VARIANTS=default run "$TOP/scripts/container-build"
	[ "$status" -eq 2 ]
	[[ "$output" == *"JOBS must be a positive number"* ]]
}

@test "matrix: passing and crashing variants, one table, the worst class" {
	VARIANTS="default crash" run "$TOP/scripts/matrix"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"default "*"0 pass"* ]]
	[[ "$output" == *"crash "*"3 kernel-problem"* ]]
	[ "$(result crash .exit_class)" = 3 ]
	# crash: the variant, and its planned program that never began
	[[ "$output" == *"matrix: 1 passed, 2 failed, 0 skipped"* ]]
}

@test "matrix: a guest test that does not compile makes the variant class 2 with the compiler's message" {
	VARIANTS=default "$TOP/scripts/matrix"
	[ "$(result default .exit_class)" = 0 ]
	# break the smoke test, as a person editing it would
	sed -i 's/return 0;/return 0/' "$GUEST_TESTS/smoke/ok.c"
	VARIANTS=default run "$TOP/scripts/matrix"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"default "*"2 infrastructure"* ]]
	[[ "$output" == *"ok.c:"*"error: expected ';'"* ]]
	[ "$(result default .exit_class)" = 2 ]
	[[ "$(result default '.reasons[0].reason')" == *"guest tests of default do not build"*"error: expected ';'"* ]]
	grep -q "error: expected ';'" "$RESULTS/default/initramfs.log"
	# nothing of the old passing run is left to be read
	[ ! -e "$RESULTS/default/console.log" ]
	# and no stale initramfs can be booted by mistake
	[ ! -e "$ARTIFACTS/default/initramfs.cpio.gz" ]
}

@test "matrix: VARIANTS=\"default crash\" with default failing early shows both rows" {
	# crash without the smoke suite: only default's guest tests break
	echo '#@ suites = selftest' >>"$CONFIGS/crash.variant"
	sed -i 's/return 0;/return 0/' "$GUEST_TESTS/smoke/ok.c"
	VARIANTS="default crash" run "$TOP/scripts/matrix"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"default "*"2 infrastructure"* ]]
	[[ "$output" == *"crash "*"3 kernel-problem"* ]]
	[ "$(jq -r '[.variants[].variant] | join(" ")' "$RESULTS/summary.json")" = "default crash" ]
}

@test "matrix: a variant that was never built is class 2; the old results are gone first" {
	VARIANTS=default "$TOP/scripts/matrix"
	[ "$(result default .exit_class)" = 0 ]
	rm -rf "$ARTIFACTS/default"
	rm -rf "$BUILD/linux"
	VARIANTS=default run "$TOP/scripts/matrix"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$(result default '.reasons[0].reason')" == *"variant default is not built"* ]]
	[[ "$output" == *"matrix: 0 passed, 1 failed, 0 skipped"* ]]
}

@test "matrix: a kernel whose build failed is named with its build log" {
	add_variant broken 'CONFIG_BREAK_BUILD=y'
	VARIANTS=broken run "$TOP/scripts/container-build"
	[ "$status" -eq 2 ]
	VARIANTS=broken run "$TOP/scripts/matrix"
	[ "$status" -eq 2 ]
	[[ "$(result broken '.reasons[0].reason')" == *"the kernel build of broken failed: see "*"broken/build.log"* ]]
	[ "$(result broken .log)" = "$ARTIFACTS/broken/build.log" ]
}

@test "test-variant: boots from a copy of artifacts/ alone (no build/, configs/ or guest-tests/)" {
	dl=$BATS_TEST_TMPDIR/download
	cp -r "$ARTIFACTS" "$dl"
	(cd "$dl" && sha256sum --quiet -c SHA256SUMS)
	rm -rf "$BATS_TEST_TMPDIR/p"
	export ARTIFACTS=$dl BUILD=$BATS_TEST_TMPDIR/nothing CONFIGS=$BATS_TEST_TMPDIR/nothing \
		GUEST_TESTS=$BATS_TEST_TMPDIR/nothing RESULTS=$BATS_TEST_TMPDIR/res PREBUILT=1
	FAKE_QEMU_LOG=$BATS_TEST_TMPDIR/qemu.log run "$TOP/scripts/test-variant" default
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(result default .counts.pass)" = 1 ]
	grep -q -- "-kernel $dl/default/bzImage -initrd $dl/default/initramfs.cpio.gz" "$BATS_TEST_TMPDIR/qemu.log"
	grep -q -- "-append console=ttyS0 panic=-1 fake=clean" "$BATS_TEST_TMPDIR/qemu.log"
	# the matrix defaults to what the download holds
	run "$TOP/scripts/matrix"
	[ "$status" -eq 3 ]
	[ "$(jq -r '[.variants[].variant] | join(" ")' "$RESULTS/summary.json")" = "crash default" ]
	[ ! -e "$BATS_TEST_TMPDIR/nothing" ]
}

@test "test-variant: SUITES picks suites from the initramfs; one not in it is class 2, named" {
	SUITES="selftest smoke" run "$TOP/scripts/test-variant" default
	[ "$status" -eq 0 ]
	[ "$(result default '[.suites[].name] | join(" ")')" = "selftest smoke" ]
	SUITES=nosuch run "$TOP/scripts/test-variant" default
	[ "$status" -eq 2 ]
	[[ "$(result default '.reasons[0].reason')" == *"suite 'nosuch' is not in the initramfs of default (it has: selftest smoke)"* ]]
}

@test "test-variant: a bzImage that is not the one variant.json names is refused, class 2" {
	echo tampered >>"$ARTIFACTS/default/bzImage"
	PREBUILT=1 run "$TOP/scripts/test-variant" crash
	[ "$status" -eq 2 ]
	[[ "$(result crash '.reasons[0].reason')" == *"default/bzImage is not the kernel crash was built with"* ]]
}

@test "boot-plan: qemu_args are appended; timeouts scaled; silence is the largest" {
	sed -i 's/^#@ cmdline = .*/&\n#@ qemu_args = -numa node,nodeid=0\n#@ timeout_scale = 3/' "$CONFIGS/default.variant"
	echo 'silence = 40' >>"$GUEST_TESTS/selftest/suite.conf"
	VARIANTS=default "$TOP/scripts/container-build"
	run "$TOP/scripts/pipeline" boot plan qemu "$ARTIFACTS" default
	[ "${lines[-2]}" = -numa ]
	[ "${lines[-1]}" = node,nodeid=0 ]
	run "$TOP/scripts/pipeline" boot plan harness "$ARTIFACTS" default /x.log smoke selftest
	[[ "$output" == *$'\n5\n40\nsmoke:15 selftest:15\n'* ]]
}

@test "boot-plan --rootfs: the installed kernel and initrd, the directory as a 9p root, its /pipeline-init; another kernel or no init is refused" {
	r=$BATS_TEST_TMPDIR/root,fs
	rel=$(jq -r .kernel.release "$ARTIFACTS/default/variant.json")
	mkdir -p "$r/boot"
	cp "$ARTIFACTS/default/bzImage" "$r/boot/vmlinuz-$rel"
	echo initrd >"$r/boot/initrd.img-$rel"
	printf '#!/bin/sh\n' >"$r/pipeline-init"
	run "$TOP/scripts/pipeline" boot plan --rootfs "$r" qemu "$ARTIFACTS" default
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\n-kernel\n'"$r/boot/vmlinuz-$rel"$'\n-initrd\n'"$r/boot/initrd.img-$rel"$'\n'* ]]
	[[ "$output" == *" root=kproot rootfstype=9p rootflags=trans=virtio,version=9p2000.L rw fsck.mode=skip init=/pipeline-init"$'\n'* ]]
	# a comma in the path is doubled, as QEMU's option syntax wants
	[ "${lines[-2]}" = -virtfs ]
	[ "${lines[-1]}" = "local,path=${r//,/,,},mount_tag=kproot,security_model=passthrough,id=kproot" ]
	run "$TOP/scripts/pipeline" boot plan --rootfs "$r" harness "$ARTIFACTS" default /x.log smoke
	[ "$status" -eq 0 ]
	[ "${lines[-2]}" = -virtfs ]
	echo other >>"$r/boot/vmlinuz-$rel"
	run "$TOP/scripts/pipeline" boot plan --rootfs "$r" qemu "$ARTIFACTS" default
	[ "$status" -eq 2 ]
	[[ "$output" == *"vmlinuz-$rel is not the bzImage default was built with"* ]]
	cp "$ARTIFACTS/default/bzImage" "$r/boot/vmlinuz-$rel"
	rm "$r/pipeline-init"
	run "$TOP/scripts/pipeline" boot plan --rootfs "$r" qemu "$ARTIFACTS" default
	[ "$status" -eq 2 ]
	[[ "$output" == *"has no installed init $r/pipeline-init"* ]]
}

@test "boot-plan: #@ icount boots single-threaded TCG with -icount, where KVM was picked too, and says why" {
	sed -i 's/^#@ cmdline = .*/&\n#@ icount = shift=0,sleep=off/' "$CONFIGS/default.variant"
	VARIANTS=default "$TOP/scripts/container-build"
	[ "$(jq -r .params.icount "$ARTIFACTS/default/variant.json")" = shift=0,sleep=off ]
	for accel in tcg kvm; do
		run "$TOP/scripts/pipeline" boot plan --accel "$accel" qemu "$ARTIFACTS" default
		[ "$status" -eq 0 ]
		[ "${lines[1]} ${lines[2]} ${lines[3]} ${lines[4]}" = "-accel tcg,thread=single -icount shift=0,sleep=off" ]
		[[ "$output" != *kvm* && "$output" != *thread=multi* ]]
		# KVM's shorter timeouts are not applied to an instruction-counted TCG boot
		run "$TOP/scripts/pipeline" boot plan --accel "$accel" --accel-reason "probed" harness "$ARTIFACTS" default /x.log smoke
		[[ "$output" == *$'\n--accel\ntcg\n--accel-reason\nthe variant counts instructions (#@ icount = shift=0,sleep=off), which KVM cannot; probed\n'* ]]
		[[ "$output" == *$'\nsmoke:5\n'* ]]
	done
	# without it: the probed accelerator, multi-threaded TCG
	[ "$("$TOP/scripts/pipeline" boot plan --accel tcg qemu "$ARTIFACTS" crash | sed -n 2,3p | tr '\n' ' ')" = "-accel tcg,thread=multi " ]
}

# `#@ KEY = VALUE` in default.variant is refused, naming the line and KEY.
param_refused() { # KEY VALUE MESSAGE
	sed -i "s/^#@ cmdline = .*/&\n#@ $1 = $2/" "$CONFIGS/default.variant"
	run "$TOP/scripts/pipeline" config get default "$1"
	[ "$status" -ne 0 ]
	[[ "$output" =~ default\.variant:[0-9]+:.*$1.*"$3" ]]
}

@test "variant: a malformed #@ icount is refused with the line named" {
	param_refused icount 'shift=0 sleep=off' 'QEMU -icount options'
}

@test "boot-plan: #@ tcg_threads = single runs every vCPU on one TCG thread and says why; KVM stays KVM" {
	sed -i 's/^#@ cmdline = .*/&\n#@ tcg_threads = single/' "$CONFIGS/default.variant"
	VARIANTS=default "$TOP/scripts/container-build"
	[ "$(jq -r .params.tcg_threads "$ARTIFACTS/default/variant.json")" = single ]
	run "$TOP/scripts/pipeline" boot plan --accel tcg qemu "$ARTIFACTS" default
	[ "$status" -eq 0 ]
	[ "${lines[1]} ${lines[2]} ${lines[3]}" = "-accel tcg,thread=single -no-reboot" ]
	run "$TOP/scripts/pipeline" boot plan --accel tcg --accel-reason "probed" harness "$ARTIFACTS" default /x.log smoke
	[[ "$output" == *$'\n--accel\ntcg\n--accel-reason\nprobed; one TCG thread for every vCPU (#@ tcg_threads = single)\n'* ]]
	# KVM has no TCG threads: the probed accelerator as it is
	run "$TOP/scripts/pipeline" boot plan --accel kvm qemu "$ARTIFACTS" default
	[ "${lines[1]} ${lines[2]}" = "-accel kvm" ]
	# without it (a variant.json written before the parameter): multi-threaded
	jq 'del(.params.tcg_threads)' "$ARTIFACTS/default/variant.json" >"$BATS_TEST_TMPDIR/v"
	mv "$BATS_TEST_TMPDIR/v" "$ARTIFACTS/default/variant.json"
	[ "$("$TOP/scripts/pipeline" boot plan --accel tcg qemu "$ARTIFACTS" default | sed -n 2,3p | tr '\n' ' ')" = "-accel tcg,thread=multi " ]
}

@test "test-variant: #@ insn_profile = yes builds the profiler first and loads it with the kernel's System.map; one that does not build is class 2, named" {
	add_variant prof '#@ extends = default' '#@ kernel = default' '#@ insn_profile = yes' '#@ tcg_threads = single'
	VARIANTS=prof "$TOP/scripts/container-build"
	[ "$(jq -r .params.insn_profile "$ARTIFACTS/prof/variant.json")" = true ]
	# a compiler that finds no qemu-plugin.h: refused before QEMU starts
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\nexit 1\n' >"$BATS_TEST_TMPDIR/bin/cc"
	chmod +x "$BATS_TEST_TMPDIR/bin/cc"
	CC=$BATS_TEST_TMPDIR/bin/cc FAKE_QEMU_LOG=$BATS_TEST_TMPDIR/qemu.log run "$TOP/scripts/test-variant" prof
	[ "$status" -eq 2 ]
	[[ "$(result prof '.reasons[0].reason')" == *"instruction profiler (tools/insn-profile) could not be built"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/qemu.log" ]
	# a plugin newer than its source is not built again, and QEMU gets it
	mkdir -p "$BUILD/insn-profile"
	touch "$BUILD/insn-profile/insn_profile.so"
	CC=$BATS_TEST_TMPDIR/bin/cc FAKE_QEMU_LOG=$BATS_TEST_TMPDIR/qemu.log run "$TOP/scripts/test-variant" prof
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q -- "-plugin $BUILD/insn-profile/insn_profile.so,map=$ARTIFACTS/default/System.map,out=$RESULTS/prof/insn-profile.tsv\$" "$BATS_TEST_TMPDIR/qemu.log"
	# and a variant without it gets none
	FAKE_QEMU_LOG=$BATS_TEST_TMPDIR/qemu2.log run "$TOP/scripts/test-variant" default
	[ "$status" -eq 0 ]
	[ "$(grep -c -- -plugin "$BATS_TEST_TMPDIR/qemu2.log")" = 0 ]
}

@test "variant: #@ tcg_threads other than multi or single is refused with the line named" {
	param_refused tcg_threads 2 'expected multi or single'
}

@test "boot-plan: #@ cpu = max gives TCG that CPU model (KVM inside the guest) and says which and why; KVM keeps -cpu host" {
	sed -i 's/^#@ cmdline = .*/&\n#@ cpu = max/' "$CONFIGS/default.variant"
	VARIANTS=default "$TOP/scripts/container-build"
	[ "$(jq -r .params.cpu "$ARTIFACTS/default/variant.json")" = max ]
	run "$TOP/scripts/pipeline" boot plan --accel tcg qemu "$ARTIFACTS" default
	[ "$status" -eq 0 ]
	[ "${lines[1]} ${lines[2]} ${lines[3]} ${lines[4]}" = "-accel tcg,thread=multi -cpu max" ]
	run "$TOP/scripts/pipeline" boot plan --accel tcg --accel-reason "probed" harness "$ARTIFACTS" default /x.log smoke
	[[ "$output" == *$'\n--accel-reason\nprobed; CPU model max (#@ cpu = max): every feature TCG emulates, AMD SVM with nested paging among them: KVM inside the guest without shadow paging\n'* ]]
	# with one TCG thread as well: both said
	sed -i 's/^#@ cpu = max/&\n#@ tcg_threads = single/' "$CONFIGS/default.variant"
	VARIANTS=default "$TOP/scripts/container-build"
	run "$TOP/scripts/pipeline" boot plan --accel tcg --accel-reason "probed" harness "$ARTIFACTS" default /x.log smoke
	[[ "$output" == *$'\n--accel-reason\nprobed; one TCG thread for every vCPU (#@ tcg_threads = single); CPU model max'* ]]
	# KVM: the host's CPU, as the probe ran it, and the accel line says so
	run "$TOP/scripts/pipeline" boot plan --accel kvm qemu "$ARTIFACTS" default
	[ "${lines[1]} ${lines[2]} ${lines[3]} ${lines[4]}" = "-accel kvm -cpu host" ]
	[[ "$output" != *"-cpu"$'\n'"max"* ]]
	run "$TOP/scripts/pipeline" boot plan --accel kvm --accel-reason "probed" harness "$ARTIFACTS" default /x.log smoke
	[[ "$output" == *$'\n--accel-reason\nprobed; the variant\'s CPU model (#@ cpu = max) is not used: under KVM the guest has the host\'s CPU (-cpu host)\n'* ]]
	# test-variant's accel line names it
	run "$TOP/scripts/test-variant" default
	[[ "$output" == *"accel: tcg ("*"CPU model max (#@ cpu = max)"* ]]
}

@test "variant: #@ cpu that is not a CPU model name is refused with the line named" {
	param_refused cpu 'max,+svm x' 'expected a QEMU CPU model name'
}

@test "test-variant: a guest-test edit is built before the boot, and the manifest stays true" {
	sed -i 's/ok 1 smoke/ok 1 smoke-edited/' "$GUEST_TESTS/smoke/ok.c"
	run "$TOP/scripts/test-variant" default
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"initramfs default"*"changed: guest-tests; the kernel was not rebuilt"* ]]
	(cd "$ARTIFACTS" && sha256sum --quiet -c SHA256SUMS)
	[ "$(jq -r '.variants | keys | join(" ")' "$ARTIFACTS/manifest.json")" = "crash default" ]
	# PREBUILT: the artifacts as they are, nothing rebuilt
	sed -i 's/smoke-edited/smoke-again/' "$GUEST_TESTS/smoke/ok.c"
	PREBUILT=1 run "$TOP/scripts/test-variant" default
	[ "$status" -eq 0 ]
	[[ "$output" != *"initramfs default"* ]]
}

@test "test-variant: a kernel built from other patches is refused, class 2, the patch and the rebuild named; PREBUILT=1 boots it; rebuilt, it boots" {
	[ "$(jq -c .series "$ARTIFACTS/default/kernel.json")" = "[]" ]
	make_patch 0001-two-is-three 2 3
	echo 0001-two-is-three.patch >"$PATCHES/series"
	for v in default crash; do
		run "$TOP/scripts/test-variant" "$v"
		echo "$output"
		[ "$status" -eq 2 ]
		[[ "$output" == *"the kernel in artifacts/default is not the one this checkout builds: patches/ changed since it was built: 0001-two-is-three.patch (new); make container-build VARIANTS=$v rebuilds it"* ]]
		[[ "$(result "$v" '.reasons[0].reason')" == *"0001-two-is-three.patch (new)"* ]]
		[ "$(result "$v" '.counts.pass')" = 0 ]
	done
	PREBUILT=1 run "$TOP/scripts/test-variant" default
	[ "$status" -eq 0 ]
	VARIANTS=default "$TOP/scripts/container-build" >/dev/null 2>&1
	[ "$(jq -r '.series[0].name' "$ARTIFACTS/default/kernel.json")" = 0001-two-is-three.patch ]
	run "$TOP/scripts/test-variant" default
	echo "$output"
	[ "$status" -eq 0 ]
	# an edited patch, and one taken out of the series
	sed -i 's/Because the test needs a reason./Because./' "$PATCHES/0001-two-is-three.patch"
	run "$TOP/scripts/test-variant" default
	[ "$status" -eq 2 ]
	[[ "$output" == *"0001-two-is-three.patch (changed)"* ]]
	: >"$PATCHES/series"
	run "$TOP/scripts/test-variant" default
	[ "$status" -eq 2 ]
	[[ "$output" == *"0001-two-is-three.patch (gone)"* ]]
}

@test "test-variant: a kernel built from other Kconfig lines is refused, class 2; a run parameter edit is not a kernel change" {
	[ "$(jq -r .kconfig_sha256 "$ARTIFACTS/default/kernel.json")" = "$("$TOP/scripts/pipeline" config kconfig default | sha256sum | cut -d' ' -f1)" ]
	cp "$CONFIGS/default.variant" "$BATS_TEST_TMPDIR/default.variant"
	echo 'CONFIG_OTHER=y' >>"$CONFIGS/default.variant"
	run "$TOP/scripts/test-variant" default
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"the kernel in artifacts/default is not the one this checkout builds: its Kconfig lines changed since it was built"* ]]
	# base.config is one of its fragments too
	cp "$BATS_TEST_TMPDIR/default.variant" "$CONFIGS/default.variant"
	echo 'CONFIG_MORE=y' >>"$CONFIGS/base.config"
	run "$TOP/scripts/test-variant" default
	[ "$status" -eq 2 ]
	[[ "$output" == *"its Kconfig lines changed"* ]]
	sed -i '/CONFIG_MORE=y/d' "$CONFIGS/base.config"
	sed -i 's/^#@ silence = 5$/#@ silence = 6/' "$CONFIGS/default.variant"
	run "$TOP/scripts/test-variant" default
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"initramfs default"*"the kernel was not rebuilt"* ]]
}

@test "test-variant: an artifact set without manifest.json is class 2, the file named, nothing rebuilt" {
	rm "$ARTIFACTS/manifest.json" "$ARTIFACTS/SHA256SUMS"
	sed -i 's/ok 1 smoke/ok 1 smoke-edited/' "$GUEST_TESTS/smoke/ok.c"
	before=$(sha256sum <"$ARTIFACTS/default/initramfs.cpio.gz")
	run "$TOP/scripts/test-variant" default
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"$ARTIFACTS/manifest.json is missing"* ]]
	[[ "$(result default '.reasons[0].reason')" == *"manifest.json is missing"* ]]
	[ "$(sha256sum <"$ARTIFACTS/default/initramfs.cpio.gz")" = "$before" ]
}

@test "boot-plan --plan-out: each suite's programs after TESTS, the tests of programs that list them, the debug checkers; describe-artifacts lists a program's tests only where it can say them" {
	jq '.suites.smoke.tests = {"ok": ["global.a", "global.b"]}' "$ARTIFACTS/default/variant.json" >"$BATS_TEST_TMPDIR/v"
	mv "$BATS_TEST_TMPDIR/v" "$ARTIFACTS/default/variant.json"
	run "$TOP/scripts/pipeline" boot plan --plan-out "$BATS_TEST_TMPDIR/plan.json" harness "$ARTIFACTS" default /x.log
	[ "$status" -eq 0 ]
	[ "$(jq -c '[.format, .suites, .checkers, .tests]' "$BATS_TEST_TMPDIR/plan.json")" = \
		'["kernel-pipeline-plan/1",[{"name":"smoke","programs":["ok"],"optional":[],"tests":{"ok":["global.a","global.b"]}}],[],[]]' ]
	run "$TOP/scripts/pipeline" boot plan --tests 'smoke/ok/global.a' --plan-out "$BATS_TEST_TMPDIR/plan.json" harness "$ARTIFACTS" default /x.log
	[ "$(jq -c '.suites' "$BATS_TEST_TMPDIR/plan.json")" = '[{"name":"smoke","programs":["ok"],"optional":[],"tests":{"ok":["global.a"]}}]' ]
	# a kernel config that is not the one variant.json names cannot be planned for
	echo 'CONFIG_OTHER=y' >>"$ARTIFACTS/default/config"
	run "$TOP/scripts/pipeline" boot plan --plan-out "$BATS_TEST_TMPDIR/plan.json" harness "$ARTIFACTS" default /x.log
	[ "$status" -eq 2 ]
	[[ "$output" == *"/default/config is not the config default was built with"* ]]
	# the names: a kselftest_harness program's -l, a kselftest target's
	# --list; nothing for a program that cannot say them (it is not run)
	printf 'mm:cow\nmm:gup_test\n' >"$BATS_TEST_TMPDIR/list"
	: >"$BATS_TEST_TMPDIR/skip.conf"
	SKIP_CONF=$BATS_TEST_TMPDIR/skip.conf "$TOP/scripts/kselftest-suite" "$BATS_TEST_TMPDIR/list" quick "$BATS_TEST_TMPDIR/k" mm >/dev/null
	printf '#!/bin/sh\necho ran >"%s/ran"\n' "$BATS_TEST_TMPDIR" >"$BATS_TEST_TMPDIR/plain"
	chmod +x "$BATS_TEST_TMPDIR/plain"
	run python3 -c 'import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
from pipeline import describe
for p in sys.argv[2:]:
    print(describe.program_tests(p))' "$TOP" "$TOP/tests/fixtures/fakes/ksft-program" "$BATS_TEST_TMPDIR/k/mm" "$BATS_TEST_TMPDIR/plain"
	echo "$output"
	[ "${lines[0]}" = "['global.alpha', 'global.beta_with_a_rather_long_test_name', 'fx.one.first', 'fx.one.second', 'fx.two.first', 'fx.two.second', 'fx.three.first', 'fx.three.second', 'a_fixture_name_longer_than_twenty.only']" ]
	[ "${lines[1]}" = "['cow', 'gup_test']" ]
	[ "${lines[2]}" = None ]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}
