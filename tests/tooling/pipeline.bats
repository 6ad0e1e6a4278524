#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# Tooling tests of the build half: source preparation and the patch
# series, config verification, the podman probe, the manifest, the
# reproducibility environment and the project's data files.

load ../helpers

setup() {
	scratch
	fake_source
}

tree() { readlink -f "$BUILD/linux"; }

@test "prepare-source: an empty series gives the pristine tree as a git repo" {
	run "$TOP/scripts/prepare-source"
	[ "$status" -eq 0 ]
	[ "$(git -C "$(tree)" rev-parse HEAD)" = "$(git -C "$(tree)" rev-parse pristine)" ]
	[ -f "$(tree)/kernel/foo.c" ]
	# Debian's "/*" ignore block no longer hides new files from git.
	touch "$(tree)/kernel/new.c"
	git -C "$(tree)" status --porcelain | grep -q 'kernel/new.c'
}

@test "prepare-source: patches apply as commits; an unchanged series is not re-applied" {
	make_patch 0001-two-is-three 2 3
	echo 0001-two-is-three.patch >"$PATCHES/series"
	run "$TOP/scripts/prepare-source"
	[ "$status" -eq 0 ]
	grep -q 'return 3;' "$(tree)/kernel/foo.c"
	[ "$(git -C "$(tree)" log --format=%s -1)" = "foo: 0001-two-is-three" ]
	before=$(stat -c %Y.%N "$(tree)/kernel/foo.c")
	touch -d '2001-01-01' "$(tree)/kernel/foo.c"
	before=$(stat -c %Y "$(tree)/kernel/foo.c")
	run "$TOP/scripts/prepare-source"
	[ "$status" -eq 0 ]
	[[ "$output" == *unchanged* ]]
	[ "$(stat -c %Y "$(tree)/kernel/foo.c")" = "$before" ]
}

@test "prepare-source: a patch that does not apply stops with 2, names it, leaves pristine; fixed, it applies" {
	make_patch 0001-two-is-three 2 3
	make_patch 0002-bad 1 4
	# Its context no longer matches the source: it cannot apply.
	sed -i 's/^-\treturn 1;/-\treturn 7;/' "$PATCHES/0002-bad.patch"
	printf '0001-two-is-three.patch\n0002-bad.patch\n' >"$PATCHES/series"
	run "$TOP/scripts/prepare-source"
	[ "$status" -eq 2 ]
	[[ "$output" == *"patch 2 of 2 does not apply: patches/0002-bad.patch"* ]]
	[[ "$output" == *"kernel/foo.c"* ]]
	[ "$(git -C "$(tree)" rev-parse HEAD)" = "$(git -C "$(tree)" rev-parse pristine)" ]
	grep -q 'return 2;' "$(tree)/kernel/foo.c"
	# Fix the patch (it now changes 1 into 8) and rerun: no cleanup needed.
	w=$BATS_TEST_TMPDIR/fix
	git clone -q "$(tree)" "$w"
	git -C "$w" am -q "$PATCHES/0001-two-is-three.patch"
	sed -i 's/return 1;/return 8;/' "$w/kernel/foo.c"
	git -C "$w" -c user.name=T -c user.email=t@t commit -qam "foo: fixed"
	git -C "$w" format-patch -q --no-signature -1 --stdout >"$PATCHES/0002-bad.patch"
	run "$TOP/scripts/prepare-source"
	[ "$status" -eq 0 ]
	grep -q 'return 8;' "$(tree)/kernel/foo.c"
	grep -q 'return 3;' "$(tree)/kernel/foo.c"
}

@test "prepare-source: a series naming a missing file is an error naming it" {
	echo 0001-missing.patch >"$PATCHES/series"
	run "$TOP/scripts/prepare-source"
	[ "$status" -eq 2 ]
	[[ "$output" == *"patches/0001-missing.patch does not exist"* ]]
}

@test "prepare-source: uncommitted work in the tree is never thrown away" {
	"$TOP/scripts/prepare-source"
	echo '/* mine */' >>"$(tree)/kernel/foo.c"
	make_patch 0001-two-is-three 2 3
	echo 0001-two-is-three.patch >"$PATCHES/series"
	run "$TOP/scripts/prepare-source"
	[ "$status" -eq 2 ]
	[[ "$output" == *"uncommitted changes"* ]]
	grep -q 'mine' "$(tree)/kernel/foo.c"
}

@test "prepare-source: commits not exported to patches/ stop a series change" {
	"$TOP/scripts/prepare-source"
	sed -i 's/return 1;/return 5;/' "$(tree)/kernel/foo.c"
	git -C "$(tree)" -c user.name=T -c user.email=t@t commit -qam "foo: mine"
	make_patch 0001-two-is-three 2 3
	echo 0001-two-is-three.patch >"$PATCHES/series"
	run "$TOP/scripts/prepare-source"
	[ "$status" -eq 2 ]
	[[ "$output" == *"not in patches/"* ]]
	[ "$(git -C "$(tree)" log --format=%s -1)" = "foo: mine" ]
}

@test "prepare-source: a tree reset below the applied series, or diverged from it, is named as such, with what each way out does" {
	make_patch 0001-two-is-three 2 3
	make_patch 0002-one-is-four 1 4
	printf '0001-two-is-three.patch\n0002-one-is-four.patch\n' >"$PATCHES/series"
	"$TOP/scripts/prepare-source"
	applied=$(git -C "$(tree)" rev-parse HEAD)
	# One patch taken off by hand: the tree has fewer commits, not more.
	git -C "$(tree)" reset -q --hard HEAD~1
	run "$TOP/scripts/prepare-source"
	[ "$status" -eq 2 ]
	[[ "$output" == *"1 commit(s) behind the series it applied"* ]]
	[[ "$output" == *"foo: 0002-one-is-four"* ]]
	[[ "$output" == *"patches-export"*"dropping"* ]]
	[[ "$output" == *"reset --hard $applied"* ]]
	run ! grep -q 'not in patches/' <<<"$output"
	[ "$(git -C "$(tree)" log --format=%s -1)" = "foo: 0001-two-is-three" ]
	# Then a commit of one's own on top: diverged, both counts given.
	sed -i 's/return 1;/return 5;/' "$(tree)/kernel/foo.c"
	git -C "$(tree)" -c user.name=T -c user.email=t@t commit -qam "foo: mine"
	run "$TOP/scripts/prepare-source"
	[ "$status" -eq 2 ]
	[[ "$output" == *"1 commit(s) not in patches/ and 1 applied commit(s) no longer in the tree"* ]]
	[ "$(git -C "$(tree)" log --format=%s -1)" = "foo: mine" ]
	# Back to what was applied: the series is unchanged, nothing to do.
	git -C "$(tree)" reset -q --hard "$applied"
	run "$TOP/scripts/prepare-source"
	[ "$status" -eq 0 ]
	[[ "$output" == *"unchanged, 2 patches"* ]]
}

@test "patches-export: writes numbered patches and series; unchanged commits give identical files" {
	"$TOP/scripts/prepare-source"
	sed -i 's/return 1;/return 5;/' "$(tree)/kernel/foo.c"
	git -C "$(tree)" -c user.name=T -c user.email=t@t commit -qam "foo: return five" -m "Five is better."
	sed -i 's/return 2;/return 6;/' "$(tree)/kernel/foo.c"
	git -C "$(tree)" -c user.name=T -c user.email=t@t commit -qam "foo: return six" -m "Six too."
	run "$TOP/scripts/patches-export"
	[ "$status" -eq 0 ]
	[ "$(cat "$PATCHES/series")" = "$(printf '0001-foo-return-five.patch\n0002-foo-return-six.patch')" ]
	# no "-- " signature line (`! cmd` cannot fail a bats test: SC2314)
	run ! grep -q '^-- $' "$PATCHES/0001-foo-return-five.patch"
	grep -q '^From 0000000000000000000000000000000000000000' "$PATCHES/0001-foo-return-five.patch"
	sum=$(cat "$PATCHES"/*.patch | sha256sum)
	# Also where git abbreviates object names differently (its automatic
	# length grows with the objects in the tree's repository): the index
	# lines went from 7 to 9 digits in a long-used tree.
	git -C "$(tree)" config core.abbrev 12
	"$TOP/scripts/patches-export"
	[ "$(cat "$PATCHES"/*.patch | sha256sum)" = "$sum" ]
	# The tree now matches the series: nothing is re-applied.
	run "$TOP/scripts/prepare-source"
	[ "$status" -eq 0 ]
	[[ "$output" == *"unchanged, 2 patches"* ]]
	# And a fresh tree rebuilt from the exported series is the same code.
	rm -rf "$BUILD/src"
	"$TOP/scripts/prepare-source"
	grep -q 'return 5;' "$(tree)/kernel/foo.c"
	grep -q 'return 6;' "$(tree)/kernel/foo.c"
}

# A fake podman that works only with the option sets this host allows.
fake_podman() { # a shell case pattern, quoted where it has spaces
	cat >"$BATS_TEST_TMPDIR/podman" <<EOS
#!/bin/sh
[ "\$1" = --version ] && { echo "podman version 9.9"; exit 0; }
echo "\$*" >>"$BATS_TEST_TMPDIR/podman.calls"
case "\$*" in
$1) exit 0 ;;
*runc*) echo 'Error: setrlimit RLIMIT_NOFILE: Operation not permitted' >&2; exit 126 ;;
*) echo 'Error: crun: cgroups in hybrid mode not supported' >&2; exit 126 ;;
esac
EOS
	chmod +x "$BATS_TEST_TMPDIR/podman"
	export PODMAN=$BATS_TEST_TMPDIR/podman
}

@test "podman-probe: a normal host keeps podman's defaults" {
	fake_podman '"run --rm img true"'
	run --separate-stderr "$TOP/scripts/podman-probe" img
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[[ "$stderr" == *"podman options: (defaults)"* ]]
}

@test "podman-probe: finds runc + lowered ulimits, caches it, does not probe again" {
	fake_podman '*"--runtime runc --ulimit nofile=4096:4096 --ulimit nproc=32768:32768"*'
	run --separate-stderr "$TOP/scripts/podman-probe" img
	[ "$status" -eq 0 ]
	[ "$output" = "--runtime runc --ulimit nofile=4096:4096 --ulimit nproc=32768:32768" ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/podman.calls")" -eq 4 ]
	run --separate-stderr "$TOP/scripts/podman-probe" img
	[ "$output" = "--runtime runc --ulimit nofile=4096:4096 --ulimit nproc=32768:32768" ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/podman.calls")" -eq 4 ]
}

@test "podman-probe: when nothing works it fails with 2 and says what each try answered" {
	fake_podman 'never-matches'
	run "$TOP/scripts/podman-probe" img
	[ "$status" -eq 2 ]
	[[ "$output" == *"cgroups in hybrid mode not supported"* ]]
	[[ "$output" == *"Operation not permitted"* ]]
	[ ! -f "$BUILD/podman-opts" ]
}

fake_artifacts() {
	"$TOP/scripts/prepare-source" >/dev/null 2>&1
	for v in default debug; do
		mkdir -p "$ARTIFACTS/$v"
		for f in bzImage config System.map vmlinux.xz headers.tar.xz build.log initramfs.cpio.gz; do
			echo "$v $f" >"$ARTIFACTS/$v/$f"
		done
		printf '{"variant": "%s", "kernel": {"variant": "%s"}}\n' "$v" "$v" >"$ARTIFACTS/$v/variant.json"
		printf '{"variant": "%s", "files": ["bzImage", "kernel.json"]}\n' "$v" >"$ARTIFACTS/$v/kernel.json"
	done
}

@test "manifest: records source, series, toolchain and every artifact; SHA256SUMS checks" {
	fake_artifacts
	run "$TOP/scripts/pipeline" artifacts manifest default debug
	[ "$status" -eq 0 ]
	m=$ARTIFACTS/manifest.json
	[ "$(jq -r .source.package "$m")" = linux-source-6.12 ]
	[ "$(jq -r .source.version "$m")" = "$KSRC_VERSION" ]
	[ "$(jq -r .source.tarball_sha256 "$m")" = "$(sha256sum "$KSRC_TARBALL" | cut -d' ' -f1)" ]
	[ "$(jq -r .series.sha256 "$m")" = "$("$TOP/scripts/pipeline" config series hash)" ]
	[ "$(jq -r '.toolchain.gcc' "$m")" != null ]
	[ "$(jq -r '.variants.debug.artifacts.bzImage' "$m")" = "$(sha256sum "$ARTIFACTS/debug/bzImage" | cut -d' ' -f1)" ]
	[ "$(jq -r '.source.build_timestamp' "$m")" != "" ]
	(cd "$ARTIFACTS" && sha256sum --quiet -c SHA256SUMS)
	grep -q ' manifest.json$' "$ARTIFACTS/SHA256SUMS"
	echo tampered >>"$ARTIFACTS/default/bzImage"
	# (`! (...)` cannot fail a bats test: SC2314)
	run ! sh -c 'cd "$1" && sha256sum --quiet -c SHA256SUMS' sh "$ARTIFACTS"
	[[ "$output" == *"default/bzImage: FAILED"* ]]
}

@test "manifest: only the variants named; none or a missing one is an error, not an empty manifest" {
	fake_artifacts
	run "$TOP/scripts/pipeline" artifacts manifest debug
	[ "$status" -eq 0 ]
	[ "$(jq -r '.variants | keys | join(" ")' "$ARTIFACTS/manifest.json")" = debug ]
	run ! grep -q ' default/' "$ARTIFACTS/SHA256SUMS"
	rm -f "$ARTIFACTS/manifest.json"
	run "$TOP/scripts/pipeline" artifacts manifest
	[ "$status" -eq 2 ]
	run "$TOP/scripts/pipeline" artifacts manifest nosuch
	[ "$status" -eq 2 ]
	[ ! -f "$ARTIFACTS/manifest.json" ]
}

@test "manifest: a corrupt variant.json is an error (exit 2, named), not a Python traceback's exit 1" {
	fake_artifacts
	echo '{"variant": ' >"$ARTIFACTS/debug/variant.json"
	run "$TOP/scripts/pipeline" artifacts manifest debug
	[ "$status" -eq 2 ]
	[[ "$output" == *"debug/variant.json is not valid JSON"* ]]
}

@test "repro-env: fixed timestamp from the package, user, host and path maps" {
	run "$TOP/scripts/repro-env" /src/tree /obj/dir
	[ "$status" -eq 0 ]
	eval "$output"
	[ -n "$KBUILD_BUILD_TIMESTAMP" ]
	[ "$(date -u -d "$KBUILD_BUILD_TIMESTAMP" +%s)" = "$(stat -c %Y "$KSRC_TARBALL")" ]
	[ "$KBUILD_BUILD_USER" = kernel-pipeline ]
	[ "$KBUILD_BUILD_HOST" = kernel-pipeline ]
	[ "$KBUILD_BUILD_VERSION" = 1 ]
	[[ "$KCFLAGS" == *"-ffile-prefix-map=/src/tree/="* ]]
	[[ "$KCFLAGS" == *"-ffile-prefix-map=/obj/dir=."* ]]
	[[ "$KCFLAGS" == *"-ffile-prefix-map=../="* ]]
}

@test "series hash: changes when a patch's content changes" {
	make_patch 0001-two-is-three 2 3
	echo 0001-two-is-three.patch >"$PATCHES/series"
	a=$("$TOP/scripts/pipeline" config series hash)
	echo " " >>"$PATCHES/0001-two-is-three.patch"
	[ "$("$TOP/scripts/pipeline" config series hash)" != "$a" ]
}

@test "series: one reader; comments, blank lines and quilt options; a missing patch is exit 2" {
	make_patch 0001-two-is-three 2 3
	make_patch 0002-one-is-four 1 4
	printf '# the series\n\n0001-two-is-three.patch -p1\n  0002-one-is-four.patch\n' >"$PATCHES/series"
	run "$TOP/scripts/pipeline" config series list
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '0001-two-is-three.patch\n0002-one-is-four.patch')" ]
	# the hash is that of "NAME SHA256" lines, as it always was
	want=$(for p in 0001-two-is-three.patch 0002-one-is-four.patch; do
		printf '%s %s\n' "$p" "$(sha256sum <"$PATCHES/$p" | cut -d' ' -f1)"
	done | sha256sum | cut -d' ' -f1)
	[ "$("$TOP/scripts/pipeline" config series hash)" = "$want" ]
	# several answers in one call (prepare-source), in the order asked
	[ "$("$TOP/scripts/pipeline" config series hash list)" = "$(printf '%s\n0001-two-is-three.patch\n0002-one-is-four.patch' "$want")" ]
	echo 0003-gone.patch >>"$PATCHES/series"
	run "$TOP/scripts/pipeline" config series hash
	[ "$status" -eq 2 ]
	[[ "$output" == *"patches/0003-gone.patch does not exist"* ]]
	rm "$PATCHES/series"
	run "$TOP/scripts/pipeline" config series list
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
}
