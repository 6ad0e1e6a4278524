#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# Following Debian's uploads (issue 46): scripts/source-pin (make
# bump-source, and the check before anything is installed) against a
# local apt repository made here with Debian's own tools (dpkg-deb,
# dpkg-scanpackages), holding two versions of stand-ins of the pinned
# packages: the source package's carries a fake kernel tarball.

load ../helpers

setup() {
	scratch
	fake_source
	repo=$BATS_TEST_TMPDIR/repo
	mkdir -p "$repo"
	export PIN_FILE=$BATS_TEST_TMPDIR/kernel-source.txt
	printf '# the pin\nlinux-source-6.12=6.12.1-1\n# its configs\nlinux-config-6.12=6.12.1-1\n' >"$PIN_FILE"
	export APT_SOURCES=$BATS_TEST_TMPDIR/kernel.list
	echo "deb [trusted=yes] file:$repo ./" >"$APT_SOURCES"
}

# upload VERSION [SED]: both packages at VERSION into the repository; the
# source package's tarball is the fake source, edited by SED (kernel/foo.c)
upload() {
	local v=$1 d=$BATS_TEST_TMPDIR/pkg-$1 p
	rm -rf "$d"
	cp -a "$BATS_TEST_TMPDIR/src" "$d.src"
	[ -z "${2:-}" ] || sed -i "$2" "$d.src/linux-source-6.12/kernel/foo.c"
	for p in linux-source-6.12 linux-config-6.12; do
		mkdir -p "$d/$p/DEBIAN" "$d/$p/usr/src"
		printf 'Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: t <t@t>\nDescription: stand-in\n' \
			"$p" "$v" >"$d/$p/DEBIAN/control"
		dpkg-deb --root-owner-group -b "$d/$p" "$repo/${p}_${v}_all.deb" >/dev/null
	done
	tar -C "$d.src" -cJf "$d/linux-source-6.12/usr/src/linux-source-6.12.tar.xz" linux-source-6.12
	dpkg-deb --root-owner-group -b "$d/linux-source-6.12" "$repo/linux-source-6.12_${v}_all.deb" >/dev/null
	(cd "$repo" && dpkg-scanpackages -m . /dev/null >Packages 2>/dev/null)
}

@test "source-pin bump: the pin moves to the newest version served, the series applies there and it says so; run again, nothing changes" {
	upload 6.12.1-1
	upload 6.12.2-1
	make_patch 0001-two-is-three 2 3
	echo 0001-two-is-three.patch >"$PATCHES/series"
	run "$TOP/scripts/source-pin" versions
	[ "$status" -eq 0 ]
	[ "$output" = $'6.12.2-1\n6.12.1-1' ]
	run "$TOP/scripts/source-pin" bump
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"linux-source-6.12: 6.12.1-1 -> 6.12.2-1"* ]]
	[[ "$output" == *"all 1 patches apply to linux-source-6.12 6.12.2-1"* ]]
	[ "$(cat "$PIN_FILE")" = $'# the pin\nlinux-source-6.12=6.12.2-1\n# its configs\nlinux-config-6.12=6.12.2-1' ]
	before=$(sha256sum "$PIN_FILE")
	run "$TOP/scripts/source-pin" bump
	[ "$status" -eq 0 ]
	[[ "$output" == *"linux-source-6.12 6.12.2-1 is the newest version served: the pin stays (nothing changed)"* ]]
	[ "$(sha256sum "$PIN_FILE")" = "$before" ]
	# nothing left behind but apt's lists
	run find "$BUILD" -maxdepth 1 -name 'bump.*'
	[ -z "$output" ]
}

@test "source-pin bump: each patch that no longer applies is named with its rejected hunks; the others still apply on top" {
	upload 6.12.1-1
	# the new upload changed what patch 2 changes
	upload 6.12.2-1 's/return 1;/return 5;/'
	make_patch 0001-two-is-three 2 3
	make_patch 0002-one-is-four 1 4
	printf '0001-two-is-three.patch\n0002-one-is-four.patch\n' >"$PATCHES/series"
	run "$TOP/scripts/source-pin" bump
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" != *"patch 1 of 2 no longer applies"* ]]
	[[ "$output" == *"patch 2 of 2 no longer applies to 6.12.2-1: patches/0002-one-is-four.patch"* ]]
	[[ "$output" == *"--- rejected hunks of kernel/foo.c.rej ---"* ]]
	[[ "$output" == *$'\n-\treturn 1;\n+\treturn 4;'* ]]
	[[ "$output" == *"error: 1 of 2 patches no longer apply to linux-source-6.12 6.12.2-1: 0002-one-is-four.patch"* ]]
	grep -qx 'linux-source-6.12=6.12.2-1' "$PIN_FILE"
}

@test "source-pin check: a pin no longer served is exit 2 naming it, the newest served and make bump-source; a served one passes; image and host-setup ask before installing" {
	upload 6.12.2-1
	upload 6.12.3-1
	run "$TOP/scripts/source-pin" check
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"linux-source-6.12 6.12.1-1, the pin in "*"kernel-source.txt, is no longer served (newest: 6.12.3-1; served: 6.12.3-1 6.12.2-1). 'make bump-source' moves the pin to 6.12.3-1"* ]]
	# a version only the source package has is not one to move to
	rm "$repo/linux-config-6.12_6.12.3-1_all.deb"
	(cd "$repo" && dpkg-scanpackages -m . /dev/null >Packages 2>/dev/null)
	run "$TOP/scripts/source-pin" check
	[[ "$output" == *"(newest: 6.12.2-1; served: 6.12.2-1)"* ]]
	sed -i 's/6.12.1-1/6.12.2-1/' "$PIN_FILE"
	run "$TOP/scripts/source-pin" check
	[ "$status" -eq 0 ]
	# the image build and host-setup ask before apt installs the pin
	grep -B2 'scripts/base-image"$' "$TOP/scripts/image" | grep -q 'scripts/source-pin" check'
	grep -B6 'apt-get update' "$TOP/scripts/host-setup" | grep -q 'scripts/source-pin" check'
}

@test "the scheduled CI job (GitHub schedule:, a GitLab pipeline schedule rule) runs the series on Debian's newest upload: ci/newest-upload, bump-source then the build and boot" {
	run python3 - "$TOP/.github/workflows/newest-upload.yml" "$TOP/.gitlab-ci.yml" <<'PY'
import sys, yaml
gh = yaml.safe_load(open(sys.argv[1]))
on = gh.get("on", gh.get(True))
assert on["schedule"][0]["cron"], on
job, = gh["jobs"].values()
# in Debian: apt asks Debian's mirrors (the image's), RUNTIME native
assert job["container"]["image"].startswith("debian:bookworm"), job.get("container")
runs = [s.get("run", "") for s in job["steps"]]
assert any("ci/newest-upload" in r for r in runs), runs
gl = yaml.safe_load(open(sys.argv[2]))
j = gl["newest-upload"]
assert {"if": '$CI_PIPELINE_SOURCE == "schedule"'} in j["rules"], j["rules"]
assert any("ci/newest-upload" in x for x in j["script"]), j["script"]
# the normal jobs stay out of a scheduled pipeline
for name in ("tooling", "integration", "kernel-matrix", "kernels"):
    assert {"if": '$CI_PIPELINE_SOURCE == "schedule"', "when": "never"} in gl[name]["rules"], name
print("ok")
PY
	echo "$output"
	[ "$status" -eq 0 ]
	# the job's script: the bump first (it names the patches that broke),
	# then the main job on the new pin
	run grep -v '^#' "$TOP/ci/newest-upload"
	run grep -e 'scripts/source-pin" bump' -e '^make ' <<<"$output"
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == *'source-pin" bump' && "${lines[1]}" == 'make -C "$TOP" all '* ]]
}
