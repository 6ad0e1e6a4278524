#!/usr/bin/env bats
# Issue 14's proof in `make check`: default's Debian packages (make
# packages) installed in a throwaway Debian rootfs, initramfs-tools' initrd
# booted in QEMU, an out-of-tree module built there against the installed
# linux-headers package and loaded by that initrd, and that rootfs mounted
# as the root filesystem (9p), the guest tests run from it by the tests
# package installed there with the kernel's (make boot-packages). Needs default built (make container-build) and the apt
# mirror of this host (debootstrap).
bats_require_minimum_version 1.5.0

setup_file() {
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	export TOP
	[ -f "$TOP/artifacts/default/kernel.json" ] || {
		echo "the default variant is not built: run make container-build first" >&2
		return 1
	}
}

@test "make packages + boot-packages VARIANT=default: image, headers and libc-dev install, the initrd boots, a module built against the headers loads, the guest tests pass from the rootfs as root" {
	[ "${RUNTIME:-podman}" = podman ] ||
		skip "boot-packages installs into its rootfs with podman (RUNTIME=$RUNTIME)"
	run make -s -C "$TOP" packages VARIANT=default
	echo "$output"
	[ "$status" -eq 0 ]
	for p in linux-image linux-headers linux-libc-dev; do
		[ "$(jq -r --arg p "$p" '.files | keys[] | select(startswith($p + "_") or startswith($p + "-"))' \
			"$TOP/artifacts/default/packages.json" | wc -l)" = 1 ]
	done
	jq -er '.modules == true' "$TOP/artifacts/default/packages.json"
	run make -s -C "$TOP" boot-packages VARIANT=default
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"default: out-of-tree module kp_hello"*" ok "* ]]
	[[ "$output" == *"kp_hello loaded in the guest"*"ok (@@@ PKG-MODULE kp_hello answer=42)"* ]]
	# The rootfs was the root, and default's package_suites ran from it,
	# on the installed kernel; results as in any boot, none failed.
	[[ "$output" == *"default: guest tests from the root"*"ok (@@@ PKG-ROOT kproot 9p: smoke isolation umcg)"* ]]
	# ... run by the tests package's runner, installed there by dpkg with
	# the kernel's packages, not an unpacked initramfs
	tests_deb=$(jq -r .tests "$TOP/artifacts/default/packages.json")
	ver=$(dpkg-deb -f "$TOP/artifacts/default/$tests_deb" Version)
	[ "$ver" = "$(jq -r .version "$TOP/artifacts/default/packages.json")" ]
	[[ "$output" == *"default: tests from the tests package"*"ok (@@@ PKG-TESTS kernel-pipeline-tests $ver /usr/lib/kernel-pipeline-tests)"* ]]
	[ ! -e "$TOP/build/pkg-boot/default/rootfs/pipeline" ]
	r=$TOP/build/pkg-boot/default/results/default
	grep -aq 'kp_hello: loaded into ' "$r/console.log"
	grep -aq '^@@@ PKG-ROOT kproot 9p' "$r/console.log"
	[ "$(jq -r .kernel_release "$r/results.json")" = "$(jq -r .release "$TOP/artifacts/default/packages.json")" ]
	[ "$(jq -r .exit_class "$r/results.json")" = 0 ]
	[ "$(jq -r '[.suites[].name] | join(" ")' "$r/results.json")" = "smoke isolation umcg" ]
	[ "$(jq -r .counts.fail "$r/results.json")" = 0 ]
	[ "$(jq -r .counts.error "$r/results.json")" = 0 ]
	[ "$(jq -r .counts.pass "$r/results.json")" -ge 50 ]
	grep -aq '^@@@ PKG-TESTS kernel-pipeline-tests ' "$r/console.log"
	# the second boot: the package's own command in the guest, as on a
	# machine; its results as a QEMU run's, and compare reads both
	[[ "$output" == *"default: kernel-pipeline-tests in the guest"*" ok (class 0, "* ]]
	[[ "$output" == *"default: compare first boot -> machine"*"compare: no regression"* ]]
	m=$TOP/build/pkg-boot/default/machine-results/default
	[ "$(jq -r '.exit_class, .accel.name, .kernel_release' "$m/results.json" | tr '\n' ' ')" = \
		"0 machine $(jq -r .release "$TOP/artifacts/default/packages.json") " ]
	[ "$(jq -r '[.suites[].name] | join(" ")' "$m/results.json")" = smoke ]
	[ -f "$m/smoke.ktap" ]
	# make compare reads it beside a QEMU run of default's initramfs
	# (the one the main job left, when there is one)
	if [ -f "$TOP/results/default/results.json" ]; then
		run "$TOP/scripts/pipeline" compare "$TOP/results/default" "$r"
		echo "$output"
		[[ "$output" == *"== default"* ]]
		[ "$status" -le 1 ]
	fi
}
