#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# Variants for real machines (issue 14): `#@ config = debian` merges the
# fragments onto Debian's own config of the pinned source instead of
# tinyconfig + base.config, with the same dropped-option check; `#@
# default_set = no` keeps a variant out of what VARIANTS="" means (make,
# make check, CI); the distro variant is both.

load ../helpers

setup() {
	fake_project "$BATS_TEST_TMPDIR/p"
	"$TOP/scripts/prepare-source" >/dev/null 2>&1
	# Debian's config, as linux-config-* ships it (xz)
	printf 'CONFIG_DEBIAN=y\nCONFIG_MODULES=y\n' | xz -c >"$BATS_TEST_TMPDIR/config.amd64_none_amd64.xz"
	export DEBIAN_CONFIG=$BATS_TEST_TMPDIR/config.amd64_none_amd64.xz
}

@test "config = debian: Debian's config, then the fragments; no tinyconfig, no base.config" {
	add_variant deb '#@ config = debian' 'CONFIG_FEATURE=y'
	obj=$BATS_TEST_TMPDIR/obj
	run "$TOP/scripts/config-variant" deb "$(readlink -f "$BUILD/linux")" "$obj"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qx CONFIG_DEBIAN=y "$obj/.config"
	grep -qx CONFIG_FEATURE=y "$obj/.config"
	run ! grep -E 'CONFIG_TINY|CONFIG_BASE' "$obj/.config"
	# and the kernel's inputs say what it was merged onto
	[ "$("$TOP/scripts/pipeline" config kconfig deb | head -n1)" = "# merged onto: debian" ]
	[ "$("$TOP/scripts/pipeline" config fragments deb)" = "$CONFIGS/deb.variant" ]
}

@test "config = debian: an option Kconfig drops is exit 2, as for every variant" {
	add_variant deb '#@ config = debian' 'CONFIG_NEEDS_MISSING=y'
	run "$TOP/scripts/config-variant" deb "$(readlink -f "$BUILD/linux")" "$BATS_TEST_TMPDIR/obj"
	[ "$status" -eq 2 ]
	[[ "$output" == *CONFIG_NEEDS_MISSING* ]]
	add_variant bad '#@ config = fedora'
	run "$TOP/scripts/pipeline" config check bad
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad.variant:1: config: expected tiny"* ]]
}

@test "an option =m is exit 2 in a tiny variant (its guest loads no modules), and fine in a debian one" {
	add_variant tiny 'CONFIG_DRIVER=m' 'CONFIG_FEATURE=y'
	run "$TOP/scripts/config-variant" tiny "$(readlink -f "$BUILD/linux")" "$BATS_TEST_TMPDIR/obj"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"variant 'tiny': CONFIG_DRIVER would be built as modules (=m)"* ]]
	add_variant deb '#@ config = debian' 'CONFIG_DRIVER=m'
	run "$TOP/scripts/config-variant" deb "$(readlink -f "$BUILD/linux")" "$BATS_TEST_TMPDIR/obj2"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qx CONFIG_DRIVER=m "$BATS_TEST_TMPDIR/obj2/.config"
}

@test "default_set = no: left out of VARIANTS=\"\" (container-build, variant list), built when named" {
	add_variant big '#@ extends = default' '#@ default_set = no' 'CONFIG_BIG=y'
	[ "$("$TOP/scripts/pipeline" config list)" = default ]
	[ "$("$TOP/scripts/pipeline" config list --all | tr '\n' ' ')" = "big default " ]
	"$TOP/scripts/container-build" >/dev/null 2>&1
	[ -f "$ARTIFACTS/default/bzImage" ]
	[ ! -e "$ARTIFACTS/big" ]
	VARIANTS=big "$TOP/scripts/container-build" >/dev/null 2>&1
	grep -qa '^CONFIG_BIG=y' "$ARTIFACTS/big/bzImage"
}

@test "check_set = full: in the default set, left out of make check's quick set (variant list --check quick); a bad value is exit 2" {
	add_variant slow '#@ extends = default' '#@ check_set = full' 'CONFIG_SLOW=y'
	[ "$("$TOP/scripts/pipeline" config list | tr '\n' ' ')" = "default slow " ]
	[ "$("$TOP/scripts/pipeline" config list --check quick)" = default ]
	[ "$("$TOP/scripts/pipeline" config list --check full | tr '\n' ' ')" = "default slow " ]
	add_variant odd '#@ extends = default' '#@ check_set = sometimes'
	run "$TOP/scripts/pipeline" config check odd
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *check_set*sometimes* ]]
}

@test "the distro variant: Debian's config, the series' options, modules, no signing key; not in the default set" {
	unset CONFIGS GUEST_TESTS
	V() { "$TOP/scripts/pipeline" config "$@"; }
	[ "$(V get distro config)" = debian ]
	[ "$(V get distro default_set)" = no ]
	run V list
	[[ " ${lines[*]} " != *" distro "* ]]
	[[ " ${lines[*]} " == *" default "* ]]
	k=$(V kconfig distro)
	for line in CONFIG_TASK_ISOLATION=y CONFIG_UMCG=y CONFIG_CPU_ISOLATION=y '# CONFIG_MODULE_SIG is not set'; do
		grep -qxF "$line" <<<"$k" || { echo "distro lacks $line"; return 1; }
	done
	# modules stay on: the line Kconfig would write to turn them off is absent
	[ "$(grep -c '^# CONFIG_MODULES is not set' <<<"$k")" = 0 ]
}

@test "localmodconfig: Debian's modules cut to the module list before the fragments, every change listed; a built-in made a module is exit 2" {
	printf 'CONFIG_DEBIAN=y\nCONFIG_MODULES=y\nCONFIG_KEEP=m\nCONFIG_DROP=m\n' | xz -c >"$DEBIAN_CONFIG"
	printf '# by hand\nModule  Size  Used by\nkeep 16384 0\n' >"$CONFIGS/vm.lsmod"
	add_variant vm '#@ config = debian' '#@ localmodconfig = vm.lsmod' 'CONFIG_FEATURE=y'
	obj=$BATS_TEST_TMPDIR/obj
	run "$TOP/scripts/config-variant" vm "$(readlink -f "$BUILD/linux")" "$obj"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"localmodconfig: 1 of Debian's 2 modules kept, 1 dropped; 0 other options changed with them:"* ]]
	grep -qx CONFIG_KEEP=m "$obj/.config"
	grep -qx '# CONFIG_DROP is not set' "$obj/.config"
	grep -qx CONFIG_FEATURE=y "$obj/.config"
	[ "$(cat "$obj/localmodconfig.changes")" = "CONFIG_DROP: m -> n" ]
	# the list is an input of the kernel
	"$TOP/scripts/pipeline" config kconfig vm | grep -qx '# localmodconfig: configs/vm.lsmod'
	# a built-in that became a module
	echo 'flip 16384 0' >>"$CONFIGS/vm.lsmod"
	run "$TOP/scripts/config-variant" vm "$(readlink -f "$BUILD/linux")" "$obj"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"error: localmodconfig changed what Debian builds in or as a module: CONFIG_DEBIAN: y -> m"* ]]
}
