#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# Tooling tests of scripts/build-packages (make packages VARIANT=x): the
# kernel's own bindeb-pkg run on a built variant's objects, the .debs put
# in artifacts/<variant>/ and hashed with the rest, a package version made
# from the pinned source version and the series, the same bytes on a
# rebuild, and bad input refused. The fake kernel's bindeb-pkg
# (tests/helpers.bash) writes a changelog dated by the clock, as the real
# mkdebian does, and clamps file times only when SOURCE_DATE_EPOCH is set.

load ../helpers

setup_file() {
	# One build for the whole file; each test gets its own copy.
	fake_project "$BATS_FILE_TMPDIR/p"
	add_variant mods '#@ extends = default' 'CONFIG_MODULES=y'
	add_variant isolated '#@ kernel = default' '#@ cmdline = fake=clean isolcpus=1'
	add_variant ninep '#@ extends = default' 'CONFIG_VIRTIO_PCI=y' 'CONFIG_NET_9P=y' \
		'CONFIG_NET_9P_VIRTIO=y' 'CONFIG_9P_FS=y'
	VARIANTS="default mods isolated ninep" "$TOP/scripts/container-build" >"$BATS_FILE_TMPDIR/build.out" 2>&1
}

setup() {
	cp -a "$BATS_FILE_TMPDIR/p" "$BATS_TEST_TMPDIR/p"
	local d=$BATS_TEST_TMPDIR/p
	export BUILD=$d/build ARTIFACTS=$d/artifacts RESULTS=$d/results PATCHES=$d/patches
	export CONFIGS=$d/configs GUEST_TESTS=$d/guest-tests
	export KSRC_TARBALL=$d/linux-source-6.12.tar.xz
	export BUSYBOX=$TOP/tests/fixtures/fakes/busybox NO_CCACHE=1 PATH=$TOP/tests/fixtures/fakes:$PATH
	pin=$(awk -F= '!/^#/ && NF { print $2; exit }' "$TOP/scripts/deps/kernel-source.txt")
	series=$(PATCHES=$PATCHES "$TOP/scripts/pipeline" config series hash)
}

debs() { # VARIANT: its package files, sorted
	find "$ARTIFACTS/$1" -maxdepth 1 -name "*.deb" -printf "%f\n" | sort
}

@test "packages: image and libc-dev (no modules, so no headers package) in artifacts/<v>/, named by a version from the pin and the series" {
	run "$TOP/scripts/build-packages" default
	echo "$output"
	[ "$status" -eq 0 ]
	ver="$pin+kp.${series:0:12}-1"
	run debs default
	[ "${lines[*]}" = "kernel-pipeline-tests_${ver}_amd64.deb linux-image-6.12.0-fake_${ver}_amd64.deb linux-libc-dev_${ver}_amd64.deb" ]
	[[ "$output" != *linux-headers* ]]
	# the package's kernel is the built (and tested) one
	dpkg-deb --fsys-tarfile "$ARTIFACTS/default/linux-image-6.12.0-fake_${ver}_amd64.deb" |
		tar -xOf - ./boot/vmlinuz-6.12.0-fake | cmp - "$ARTIFACTS/default/bzImage"
	[ "$(dpkg-deb -f "$ARTIFACTS/default/linux-libc-dev_${ver}_amd64.deb" Version)" = "$ver" ]
	# nothing of the packaging is left in the tree (a donor copy, git status)
	tree=$(readlink -f "$BUILD/linux")
	[ -z "$(find "$tree" -maxdepth 1 -name '*.deb' -o -maxdepth 1 -name '*.changes' -o -maxdepth 1 -name '*.buildinfo')" ]
	[ ! -e "$tree/.obj-default/debian" ]
}

@test "packages: with CONFIG_MODULES=y the headers package (for out-of-tree modules) too" {
	run "$TOP/scripts/build-packages" mods
	echo "$output"
	[ "$status" -eq 0 ]
	run debs mods
	[ "${#lines[@]}" -eq 4 ]
	[[ "${lines[0]}" == kernel-pipeline-tests_*_amd64.deb ]]
	[[ "${lines[1]}" == linux-headers-6.12.0-fake_*_amd64.deb ]]
	[[ "${lines[2]}" == linux-image-6.12.0-fake_*_amd64.deb ]]
	[[ "${lines[3]}" == linux-libc-dev_*_amd64.deb ]]
}

@test "packages: hashed in manifest.json and SHA256SUMS with the kernel, and the other variants stay in it" {
	"$TOP/scripts/build-packages" default
	m=$ARTIFACTS/manifest.json
	for f in "$ARTIFACTS"/default/*.deb; do
		n=${f##*/}
		h=$(sha256sum <"$f" | cut -d' ' -f1)
		[ "$(jq -r --arg n "$n" '.variants.default.artifacts[$n]' "$m")" = "$h" ]
		grep -qx "$h  default/$n" "$ARTIFACTS/SHA256SUMS"
	done
	[ "$(jq -r '.variants | keys | join(" ")' "$m")" = "default isolated mods ninep" ]
	[ "$(jq -r '.packages.default.version' "$m")" = "$pin+kp.${series:0:12}-1" ]
	(cd "$ARTIFACTS" && sha256sum --quiet -c SHA256SUMS)
}

@test "packages: rebuilt a year later by the clock, the same bytes" {
	"$TOP/scripts/build-packages" default
	first=$(cd "$ARTIFACTS/default" && sha256sum -- *.deb)
	rm -f "$ARTIFACTS"/default/*.deb
	faketime -f +400d "$TOP/scripts/build-packages" default
	[ "$(cd "$ARTIFACTS/default" && sha256sum -- *.deb)" = "$first" ]
}

@test "packages: the tree's own file times (older than the source date) do not reach the packages" {
	"$TOP/scripts/build-packages" default
	first=$(cd "$ARTIFACTS/default" && sha256sum -- *.deb)
	rm -f "$ARTIFACTS"/default/*.deb "$ARTIFACTS/default/.packages-inputs"
	# another checkout's tree: the same files, other (old) times
	touch -d 2001-01-01 "$(readlink -f "$BUILD/linux")"/include/uapi/linux/*.h
	"$TOP/scripts/build-packages" default
	[ "$(cd "$ARTIFACTS/default" && sha256sum -- *.deb)" = "$first" ]
}

@test "tests package: the variant's guest tests, the initramfs's runner and the parser under /usr/lib/kernel-pipeline-tests, versioned as the kernel's, listed in packages.json" {
	"$TOP/scripts/build-packages" default
	ver="$pin+kp.${series:0:12}-1"
	deb=$ARTIFACTS/default/kernel-pipeline-tests_${ver}_amd64.deb
	[ -f "$deb" ]
	[ "$(dpkg-deb -f "$deb" Package)" = kernel-pipeline-tests ]
	[ "$(dpkg-deb -f "$deb" Version)" = "$ver" ]
	[[ "$(dpkg-deb -f "$deb" Depends)" == "python3 (>= 3.11)"* ]]
	run dpkg-deb -c "$deb"
	for f in usr/bin/kernel-pipeline-tests usr/lib/kernel-pipeline-tests/bin/run-suite \
		usr/lib/kernel-pipeline-tests/bin/ktap-run usr/lib/kernel-pipeline-tests/bin/debug-checks \
		usr/lib/kernel-pipeline-tests/bin/machine-setup usr/lib/kernel-pipeline-tests/tests/smoke/ok \
		usr/lib/kernel-pipeline-tests/artifacts/default/variant.json \
		usr/lib/kernel-pipeline-tests/artifacts/default/config \
		usr/lib/kernel-pipeline-tests/pipeline/results/verdict.py \
		usr/lib/kernel-pipeline-tests/pipeline/results/failure-patterns.txt; do
		[[ "$output" == *" ./$f"* ]] || { echo "missing: $f"; false; }
	done
	[[ "$output" != *__pycache__* ]]
	[[ "$output" == *"root/root"* ]]
	# the runner is the initramfs's, the programs the build's
	x=$BATS_TEST_TMPDIR/x
	dpkg-deb -x "$deb" "$x"
	cmp "$x/usr/lib/kernel-pipeline-tests/bin/run-suite" "$TOP/guest-tests/runner/run-suite"
	cmp "$x/usr/lib/kernel-pipeline-tests/tests/smoke/ok" "$ARTIFACTS/default/guest-tests/smoke/ok"
	cmp "$x/usr/lib/kernel-pipeline-tests/artifacts/default/variant.json" "$ARTIFACTS/default/variant.json"
	[ "$(jq -r .tests "$ARTIFACTS/default/packages.json")" = "${deb##*/}" ]
	[ "$(jq -r --arg n "${deb##*/}" '.files[$n]' "$ARTIFACTS/default/packages.json")" = "$(sha256sum <"$deb" | cut -d' ' -f1)" ]
	[ "$(jq -r --arg n "${deb##*/}" '.variants.default.artifacts[$n]' "$ARTIFACTS/manifest.json")" = "$(sha256sum <"$deb" | cut -d' ' -f1)" ]
}

@test "tests package: a guest-test change rebuilds it alone; its files' own times do not reach it" {
	"$TOP/scripts/build-packages" default
	first=$(cd "$ARTIFACTS/default" && sha256sum -- *.deb)
	cp "$ARTIFACTS/default/guest-tests/smoke/ok" "$BATS_TEST_TMPDIR/ok.before"
	rm "$ARTIFACTS"/default/kernel-pipeline-tests_*.deb
	touch -d 2001-01-01 "$ARTIFACTS/default/guest-tests/smoke/ok" "$ARTIFACTS/default/variant.json"
	run "$TOP/scripts/build-packages" default
	echo "$output"
	[[ "$output" == *"packages default"*"up to date"* ]]
	[[ "$output" == *"tests package default"*"ok (kernel-pipeline-tests_"* ]]
	[ "$(cd "$ARTIFACTS/default" && sha256sum -- *.deb)" = "$first" ]
	# a test edited: the guest side is rebuilt, and so the tests package,
	# not the kernel's packages
	echo 'const char edited[] = "edited";' >>"$GUEST_TESTS/smoke/ok.c"
	"$TOP/scripts/build-initramfs" default >/dev/null 2>&1
	run ! cmp -s "$ARTIFACTS/default/guest-tests/smoke/ok" "$BATS_TEST_TMPDIR/ok.before"
	run "$TOP/scripts/build-packages" default
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"packages default"*"up to date"* ]]
	[[ "$output" == *"tests package default"*"ok (kernel-pipeline-tests_"* ]]
	(cd "$ARTIFACTS" && sha256sum --quiet -c SHA256SUMS)
}

@test "tests package: kernel-pipeline-tests runs the suites here and writes what a QEMU run writes: parse, report and compare read it" {
	"$TOP/scripts/build-packages" default
	x=$BATS_TEST_TMPDIR/x
	dpkg-deb -x "$ARTIFACTS"/default/kernel-pipeline-tests_*.deb "$x"
	# (no mounts on this host, and its kernel log stays out: a recorded one)
	printf '6,1,100000,-;Linux version 6.12.0-fake\n6,2,200000,-;Kernel command line: nohz_full=1\n' >"$BATS_TEST_TMPDIR/kmsg"
	m=$BATS_TEST_TMPDIR/machine
	run "$x/usr/bin/kernel-pipeline-tests" --no-setup --kmsg "$BATS_TEST_TMPDIR/kmsg" --out "$m"
	echo "$output"
	[ "$status" -eq 0 ]
	r=$m/default/results.json
	[ "$(jq -r '.variant, .exit_class, .counts.pass, .accel.name, .kernel_cmdline' "$r" | tr '\n' ' ')" = "default 0 1 machine nohz_full=1 " ]
	[ -f "$m/default/smoke.ktap" ] && [ -f "$m/default/junit.xml" ] && [ -f "$m/default/plan.json" ]
	[ ! -e "$x/usr/lib/kernel-pipeline-tests/pipeline/__pycache__" ]
	# the host's parser, report and compare read it as any run
	run "$TOP/scripts/pipeline" parse --out "$BATS_TEST_TMPDIR/re" "$m/default/console.log"
	[ "$status" -eq 0 ]
	[ "$(jq -r .counts.pass "$BATS_TEST_TMPDIR/re/results.json")" = 1 ]
	run "$TOP/scripts/pipeline" report "$m/default"
	[ "$status" -eq 0 ]
	[[ "$output" == *smoke/ok* ]]
	# against a QEMU run of the same variant: no regression ...
	run "$TOP/scripts/test-variant" default
	[ "$status" -eq 0 ]
	run "$TOP/scripts/pipeline" compare "$RESULTS" "$m"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"compare: no regression"* ]]
	# ... and a test failing on the machine is one
	FAKE_FAIL=1 run "$x/usr/bin/kernel-pipeline-tests" --no-setup --kmsg /dev/null --out "$m"
	[ "$status" -eq 1 ]
	run "$TOP/scripts/pipeline" compare "$RESULTS" "$m"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"NEW FAILURE  smoke/ok/"* ]]
}

@test "packages: up to date packages are not built again" {
	"$TOP/scripts/build-packages" default
	run "$TOP/scripts/build-packages" default
	[ "$status" -eq 0 ]
	[[ "$output" == *"packages default"*"up to date"* ]]
}

@test "packages: a bindeb-pkg that changes the kernel is an error, and no package is kept" {
	FAKE_BINDEB_REBUILD=1 run "$TOP/scripts/build-packages" default
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"not the kernel that was built"* ]]
	[ -z "$(debs default)" ]
}

@test "packages: bad input is exit 2 naming the problem, and nothing is lost" {
	before=$(cd "$ARTIFACTS" && find . -type f | sort | xargs sha256sum)
	run "$TOP/scripts/build-packages" nosuch
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown variant 'nosuch'"* ]]
	run "$TOP/scripts/build-packages" isolated
	[ "$status" -eq 2 ]
	[[ "$output" == *"boot-only"*"make packages VARIANT=default"* ]]
	run "$TOP/scripts/build-packages"
	[ "$status" -eq 2 ]
	[[ "$output" == *usage:* ]]
	add_variant new '#@ extends = default' 'CONFIG_NEW=y'
	run "$TOP/scripts/build-packages" new
	[ "$status" -eq 2 ]
	[[ "$output" == *"kernel of 'new' is not built"*"make container-build VARIANTS=new"* ]]
	rm "$BUILD/linux"
	run "$TOP/scripts/build-packages" default
	[ "$status" -eq 2 ]
	[[ "$output" == *"no kernel tree"* ]]
	[ "$(cd "$ARTIFACTS" && find . -type f | sort | xargs sha256sum)" = "$before" ]
}

@test "boot-packages: a variant without packages, or an unknown one, is exit 2 naming what to do" {
	run "$TOP/scripts/boot-packages" default
	[ "$status" -eq 2 ]
	[[ "$output" == *"no packages of the kernel of 'default'"*"make packages VARIANT=default"* ]]
	# a boot-only variant boots its kernel's packages
	run "$TOP/scripts/boot-packages" isolated
	[ "$status" -eq 2 ]
	[[ "$output" == *"make packages VARIANT=default"* ]]
	run "$TOP/scripts/boot-packages" nosuch
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown variant 'nosuch'"* ]]
	[ ! -e "$BUILD/pkg-boot" ]
}

@test "boot-packages: a kernel with a 9p root needs its guest side and package_suites from it, checked before anything is made" {
	run "$TOP/scripts/build-packages" ninep
	[ "$status" -eq 0 ]
	grep -qx 'CONFIG_9P_FS=y' "$ARTIFACTS/ninep/config"
	cp "$CONFIGS/ninep.variant" "$BATS_TEST_TMPDIR/ninep.variant"
	sed -i 's/^#@ extends = default$/&\n#@ package_suites = smoke nosuch/' "$CONFIGS/ninep.variant"
	run "$TOP/scripts/boot-packages" ninep
	[ "$status" -eq 2 ]
	[[ "$output" == *"ninep.variant:2: '#@ package_suites' names suite 'nosuch', which is not in the initramfs of ninep (it has: smoke"* ]]
	# artifacts built before a suite went: their variant.json decides
	cp "$BATS_TEST_TMPDIR/ninep.variant" "$CONFIGS/ninep.variant"
	cp "$ARTIFACTS/ninep/variant.json" "$BATS_TEST_TMPDIR/variant.json"
	jq 'del(.suites.smoke)' "$ARTIFACTS/ninep/variant.json" >"$BATS_TEST_TMPDIR/v.json"
	cp "$BATS_TEST_TMPDIR/v.json" "$ARTIFACTS/ninep/variant.json"
	PREBUILT=1 run "$TOP/scripts/boot-packages" ninep
	[ "$status" -eq 2 ]
	[[ "$output" == *"suite 'smoke' is not in the initramfs of ninep (it has: "* ]]
	cp "$BATS_TEST_TMPDIR/variant.json" "$ARTIFACTS/ninep/variant.json"
	rm "$ARTIFACTS/ninep/initramfs.cpio.gz"
	PREBUILT=1 run "$TOP/scripts/boot-packages" ninep
	[ "$status" -eq 2 ]
	[[ "$output" == *"the initramfs of ninep is missing: no $ARTIFACTS/ninep/initramfs.cpio.gz"* ]]
	rm "$ARTIFACTS/ninep/variant.json"
	PREBUILT=1 run "$TOP/scripts/boot-packages" ninep
	[ "$status" -eq 2 ]
	[[ "$output" == *"variant ninep is not built: no $ARTIFACTS/ninep/variant.json"*"make container-build VARIANTS=ninep"* ]]
	[ ! -e "$BUILD/pkg-boot" ]
}

@test "boot-packages: packages without the tests package, or one older than the guest tests, are exit 2 naming make packages, before anything is made" {
	"$TOP/scripts/build-packages" ninep
	cp "$ARTIFACTS/ninep/packages.json" "$BATS_TEST_TMPDIR/packages.json"
	# packages made before the tests package existed
	jq 'del(.tests)' "$BATS_TEST_TMPDIR/packages.json" >"$ARTIFACTS/ninep/packages.json"
	PREBUILT=1 run "$TOP/scripts/boot-packages" ninep
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"no tests package of the kernel of 'ninep'"*"make packages VARIANT=ninep"* ]]
	cp "$BATS_TEST_TMPDIR/packages.json" "$ARTIFACTS/ninep/packages.json"
	# the guest side rebuilt since the package was made
	echo 'const char edited[] = "edited";' >>"$GUEST_TESTS/smoke/ok.c"
	"$TOP/scripts/build-initramfs" ninep >/dev/null 2>&1
	PREBUILT=1 run "$TOP/scripts/boot-packages" ninep
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"is not of the guest tests in $ARTIFACTS/ninep"*"make packages VARIANT=ninep"* ]]
	[ ! -e "$BUILD/pkg-boot" ]
}
