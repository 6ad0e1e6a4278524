#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# KERNEL_TREE (issue 46): any kernel git tree, built out of tree into
# the checkout's build/ with the variant's fragments, booted and judged
# as a variant's kernel is; on a fake project (tests/helpers.bash) and
# fake trees outside it, read-only as the container mounts them.

load ../helpers

setup_file() {
	fake_project "$BATS_FILE_TMPDIR/p"
	# The series defines an option (as patches/ defines CONFIG_UMCG) the
	# variant asks for; a tree without the series has no such option.
	local w=$BATS_FILE_TMPDIR/mk
	cp -a "$BATS_FILE_TMPDIR/p/src/linux-source-6.12" "$w"
	git -C "$w" init -q
	git -C "$w" add -A -f
	git -C "$w" -c user.name=t -c user.email=t@t commit -qm base
	printf 'config SERIES_OPT\n\tbool "the series"\n' >"$w/kernel/Kconfig.series"
	git -C "$w" add -A -f
	git -C "$w" -c user.name=Tester -c user.email=tester@example.org commit -qm "series: an option" -m "Because the test needs one."
	git -C "$w" format-patch -q --no-signature -1 --stdout >"$PATCHES/0001-series-option.patch"
	echo 0001-series-option.patch >"$PATCHES/series"
	add_variant default '#@ cmdline = fake=clean' '#@ suites = smoke' '#@ boot_timeout = 5' \
		'#@ silence = 5' 'CONFIG_FEATURE=y' 'CONFIG_SERIES_OPT=y'
	add_variant boot2 '#@ extends = default' '#@ kernel = default' '#@ cmdline += fake.two=1'
	VARIANTS=default "$TOP/scripts/container-build" >"$BATS_FILE_TMPDIR/build.out" 2>&1
}

setup() {
	cp -a "$BATS_FILE_TMPDIR/p" "$BATS_TEST_TMPDIR/p"
	local d=$BATS_TEST_TMPDIR/p
	export BUILD=$d/build ARTIFACTS=$d/artifacts RESULTS=$d/results PATCHES=$d/patches
	export CONFIGS=$d/configs GUEST_TESTS=$d/guest-tests KSRC_TARBALL=$d/linux-source-6.12.tar.xz
	export FAKE_QEMU_LOG=$BATS_TEST_TMPDIR/qemu.log KVM_DEV=$BATS_TEST_TMPDIR/no-kvm
	export PYTHONDONTWRITEBYTECODE=1
	unset ACCEL TESTS SUITES PREBUILT KCONFIG_ADD APPEND QEMU_ARGS KERNEL_TREE
	# A mainline-shaped tree: the pristine source as a plain git checkout,
	# outside the checkout, read-only.
	tree=$BATS_TEST_TMPDIR/tree
	cp -a "$d/src/linux-source-6.12" "$tree"
	# as Kconfig, its olddefconfig drops a symbol no Kconfig file defines
	sed -i 's|^\t@sed -i .*CONFIG_NEEDS_MISSING.*|&\n\t@[ -f kernel/Kconfig.series ] \|\| sed -i "/CONFIG_SERIES_OPT[= ]/d" $(O)/.config|' "$tree/Makefile"
	git -C "$tree" init -q
	git -C "$tree" add -A -f
	git -C "$tree" -c user.name=t -c user.email=t@t commit -qm mainline
	git -C "$tree" -c user.name=t -c user.email=t@t tag -a -m v6.99 v6.99
	chmod -R a-w "$tree"
}

teardown() {
	chmod -R u+w "$BATS_TEST_TMPDIR/tree" 2>/dev/null || true
}

@test "KERNEL_TREE: a read-only tree outside the checkout is built under build/ with the variant's fragments, the series' options it lacks stated off; tree and git describe in kernel.json, variant.json and results.json; the variant's own untouched" {
	before=$(sha256sum "$ARTIFACTS/default/bzImage" "$ARTIFACTS/default/variant.json")
	# a checkout that never made Debian's patched tree makes it: the
	# guest programs' kselftest harness and the kselftests come from it
	rm -rf "$BUILD/linux" "$BUILD/src"
	KERNEL_TREE=$tree run "$TOP/scripts/with-knobs" scripts/test-variant default
	echo "$output"
	[ "$status" -eq 0 ]
	[ -f "$BUILD/linux/tools/testing/selftests/kselftest_harness.h" ]
	r=$(cd "$RESULTS" && ls -d default-knobs-*)
	k=$(cd "$ARTIFACTS" && ls -d default-tree-*)
	[ "$(jq -r .exit_class "$RESULTS/$r/results.json")" = 0 ]
	# built from the tree (the fake bzImage names its source), out of it
	grep -q "source: $tree/kernel/foo.c" "$ARTIFACTS/$k/bzImage"
	[ -z "$(git -C "$tree" status --porcelain --ignored)" ]
	[ -f "$(readlink -f "$BUILD/$k")/.config" ]
	[[ "$(readlink -f "$BUILD/$k")" == "$BUILD"/* ]]
	# the variant's fragments; the series' option the tree lacks, off
	grep -qx 'CONFIG_FEATURE=y' "$ARTIFACTS/$k/config"
	grep -qx '# CONFIG_SERIES_OPT is not set' "$BUILD/knobs/$k.variant"
	run grep -c 'CONFIG_SERIES_OPT' "$ARTIFACTS/$k/config"
	[ "$output" = 0 ]
	# what was built, in every record
	[ "$(jq -r .source "$ARTIFACTS/$k/kernel.json")" = tree ]
	[ "$(jq -r .tree.path "$ARTIFACTS/$k/kernel.json")" = "$tree" ]
	[ "$(jq -r .tree.describe "$ARTIFACTS/$k/kernel.json")" = v6.99 ]
	[ "$(jq -r .kernel.tree.describe "$ARTIFACTS/$r/variant.json")" = v6.99 ]
	[ "$(jq -r .plan.kernel_tree.path "$RESULTS/$r/results.json")" = "$tree" ]
	[ "$(jq -r .plan.kernel_tree.describe "$RESULTS/$r/results.json")" = v6.99 ]
	[ "$(jq -c .plan.kernel_tree.series_options_off "$RESULTS/$r/results.json")" = '["CONFIG_SERIES_OPT"]' ]
	[ "$(jq -r .plan.knobs.kernel_tree "$RESULTS/$r/results.json")" = "$tree" ]
	[ "$(sha256sum "$ARTIFACTS/default/bzImage" "$ARTIFACTS/default/variant.json")" = "$before" ]
}

@test "KERNEL_TREE: the stale rule follows the tree: nothing changed is not built again, a changed file is, and says -dirty" {
	KERNEL_TREE=$tree run "$TOP/scripts/with-knobs" scripts/test-variant default
	[ "$status" -eq 0 ]
	k=$(cd "$ARTIFACTS" && ls -d default-tree-*)
	first=$(sha256sum <"$ARTIFACTS/$k/bzImage")
	KERNEL_TREE=$tree run "$TOP/scripts/with-knobs" scripts/test-variant default
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"kernel $k"*"ok (up to date)"* ]]
	chmod u+w "$tree/kernel" "$tree/kernel/foo.c"
	sed -i 's/return 2;/return 7;/' "$tree/kernel/foo.c"
	chmod a-w "$tree/kernel" "$tree/kernel/foo.c"
	KERNEL_TREE=$tree run "$TOP/scripts/with-knobs" scripts/test-variant default
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"ok (up to date)"* ]]
	grep -q 'return 7;' "$ARTIFACTS/$k/bzImage"
	[ "$(sha256sum <"$ARTIFACTS/$k/bzImage")" != "$first" ]
	[ "$(jq -r .tree.describe "$ARTIFACTS/$k/kernel.json")" = v6.99-dirty ]
	# a boot of the old kernel after another edit is refused, naming the tree
	chmod u+w "$tree/kernel" "$tree/kernel/foo.c"
	sed -i 's/return 7;/return 8;/' "$tree/kernel/foo.c"
	r=$(cd "$RESULTS" && ls -d default-knobs-*)
	run "$TOP/scripts/test-variant" "$r"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"the kernel tree $tree changed since it was built"* ]]
}

@test "KERNEL_TREE: a tree with the series keeps its options; a boot-only variant boots the tree's kernel; KCONFIG_ADD and APPEND go with it" {
	chmod -R u+w "$tree"
	git -C "$tree" am -q "$PATCHES/0001-series-option.patch"
	chmod -R a-w "$tree"
	KERNEL_TREE=$tree KCONFIG_ADD='CONFIG_KNOB=y' APPEND='fake.knob=1' run "$TOP/scripts/with-knobs" scripts/test-variant boot2
	echo "$output"
	[ "$status" -eq 0 ]
	r=$(cd "$RESULTS" && ls -d boot2-knobs-*)
	k=$(jq -r .kernel.variant "$ARTIFACTS/$r/variant.json")
	grep -qx 'CONFIG_SERIES_OPT=y' "$ARTIFACTS/$k/config"
	grep -qx 'CONFIG_KNOB=y' "$ARTIFACTS/$k/config"
	grep -q "source: $tree/kernel/foo.c" "$ARTIFACTS/$k/bzImage"
	[ "$(jq -c .plan.kernel_tree.series_options_off "$RESULTS/$r/results.json")" = '[]' ]
	[[ "$(grep -- '-kernel ' "$FAKE_QEMU_LOG" | tail -n1)" == *"fake.two=1 fake.knob=1"* ]]
}

@test "KERNEL_TREE on make: every variant of VARIANTS runs on the tree's kernel" {
	KERNEL_TREE=$tree VARIANTS='default boot2' run "$TOP/scripts/with-knobs" scripts/build-and-boot
	echo "$output"
	[ "$status" -eq 0 ]
	run find "$ARTIFACTS" -maxdepth 1 -name 'default-tree-*'
	[ "${#lines[@]}" -eq 1 ]
	for v in default boot2; do
		r=$(cd "$RESULTS" && ls -d "$v"-knobs-*)
		[ "$(jq -r .plan.kernel_tree.path "$RESULTS/$r/results.json")" = "$tree" ]
	done
}

@test "KERNEL_TREE: bad input is exit 2 naming the problem, nothing built, removed or written" {
	run "$TOP/scripts/test-variant" default
	[ "$status" -eq 0 ]
	before=$(sha256sum "$RESULTS/default/results.json" "$ARTIFACTS/default/bzImage")
	KERNEL_TREE=$BATS_TEST_TMPDIR/nosuch run "$TOP/scripts/with-knobs" scripts/test-variant default
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"KERNEL_TREE: $BATS_TEST_TMPDIR/nosuch is not a directory"* ]]
	mkdir "$BATS_TEST_TMPDIR/empty"
	KERNEL_TREE=$BATS_TEST_TMPDIR/empty run "$TOP/scripts/with-knobs" scripts/test-variant default
	[ "$status" -eq 2 ]
	[[ "$output" == *"KERNEL_TREE: $BATS_TEST_TMPDIR/empty is not a kernel tree (no Makefile"* ]]
	cp -a "$BATS_TEST_TMPDIR/p/src/linux-source-6.12" "$BATS_TEST_TMPDIR/nogit"
	KERNEL_TREE=$BATS_TEST_TMPDIR/nogit run "$TOP/scripts/with-knobs" scripts/test-variant default
	[ "$status" -eq 2 ]
	[[ "$output" == *"KERNEL_TREE: $BATS_TEST_TMPDIR/nogit is not a git tree"* ]]
	chmod u+w "$tree"
	touch "$tree/.config"
	KERNEL_TREE=$tree run "$TOP/scripts/with-knobs" scripts/test-variant default
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"KERNEL_TREE: $tree has a .config"*"make mrproper"* ]]
	KERNEL_TREE=relative/path run "$TOP/scripts/with-knobs" scripts/test-variant default
	[ "$status" -eq 2 ]
	[[ "$output" == *"KERNEL_TREE"*"relative/path"* ]]
	run find "$ARTIFACTS" "$RESULTS" "$BUILD" -maxdepth 2 \( -name '*-tree-*' -o -name '*-knobs-*' \)
	[ -z "$output" ]
	[ "$(sha256sum "$RESULTS/default/results.json" "$ARTIFACTS/default/bzImage")" = "$before" ]
	# ARTIFACTS= boots a set as it is: nothing to build the tree into
	PREBUILT=1 KERNEL_TREE=$tree run "$TOP/scripts/with-knobs" scripts/test-variant default
	[ "$status" -eq 2 ]
	[[ "$output" == *"KERNEL_TREE"*"ARTIFACTS="* ]]
}

@test "KERNEL_TREE in the container: mounted read-only at its own path and passed on; one that is not a directory stops before podman runs" {
	fake_in_runtime
	p=$BATS_TEST_TMPDIR/proj
	run env -u TOP -u BUILD -u ARTIFACTS -u RESULTS PODMAN="$BATS_TEST_TMPDIR/podman" RUNTIME=podman \
		KERNEL_TREE="$tree" "$p/scripts/in-runtime" true
	echo "$output"
	[ "$status" -eq 0 ]
	run cat "$BATS_TEST_TMPDIR/podman.calls"
	[[ "$output" == *"-v $tree:$tree:ro"* ]]
	[[ "$output" == *"-e KERNEL_TREE=$tree"* ]]
	: >"$BATS_TEST_TMPDIR/podman.calls"
	run env -u TOP -u BUILD -u ARTIFACTS -u RESULTS PODMAN="$BATS_TEST_TMPDIR/podman" RUNTIME=podman \
		KERNEL_TREE="$BATS_TEST_TMPDIR/nosuch" "$p/scripts/in-runtime" true
	[ "$status" -eq 2 ]
	[[ "$output" == *"KERNEL_TREE: $BATS_TEST_TMPDIR/nosuch is not a directory"* ]]
	[ ! -s "$BATS_TEST_TMPDIR/podman.calls" ]
	# one inside the checkout is in the container already
	mkdir "$p/linux"
	run env -u TOP -u BUILD -u ARTIFACTS -u RESULTS PODMAN="$BATS_TEST_TMPDIR/podman" RUNTIME=podman \
		KERNEL_TREE="$p/linux" "$p/scripts/in-runtime" true
	[ "$status" -eq 0 ]
	run cat "$BATS_TEST_TMPDIR/podman.calls"
	[[ "$output" == *"-e KERNEL_TREE=$p/linux"* && "$output" != *":ro"* ]]
}
