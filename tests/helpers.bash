# Shared set-up for the tooling tests: a scratch project state (BUILD,
# ARTIFACTS, PATCHES) in a temporary directory and a tiny fake kernel
# source tarball, so the real scripts run in seconds.
TOP=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
export TOP

scratch() {
	export BUILD=$BATS_TEST_TMPDIR/build ARTIFACTS=$BATS_TEST_TMPDIR/artifacts
	export PATCHES=$BATS_TEST_TMPDIR/patches RESULTS=$BATS_TEST_TMPDIR/results
	mkdir -p "$BUILD" "$ARTIFACTS" "$PATCHES"
}

# A fake linux-source tarball: a Makefile, one C file and Debian's
# .gitignore block that ignores every top-level path.
fake_source() {
	local d=$BATS_TEST_TMPDIR/src/linux-source-6.12
	mkdir -p "$d/kernel"
	printf 'all:\n\t@echo built\n' >"$d/Makefile"
	printf 'int one(void)\n{\n\treturn 1;\n}\n\nint two(void)\n{\n\treturn 2;\n}\n' >"$d/kernel/foo.c"
	printf '*.o\n#\n# Debian packaging: ignore everything at the top level, since it isn'"'"'t\n# included in our repository\n#\n/*\n!/debian/\n' >"$d/.gitignore"
	tar -C "$BATS_TEST_TMPDIR/src" -cJf "$BATS_TEST_TMPDIR/linux-source-6.12.tar.xz" linux-source-6.12
	touch -d '2025-11-28 09:54:00 UTC' "$BATS_TEST_TMPDIR/linux-source-6.12.tar.xz"
	export KSRC_TARBALL=$BATS_TEST_TMPDIR/linux-source-6.12.tar.xz
	KSRC_VERSION=$(awk -F= '!/^#/ && NF { print $2; exit }' "$TOP/scripts/deps/kernel-source.txt")
	export KSRC_VERSION KSRC_CHANGELOG=/nonexistent
}

# A patch against the fake source, made with git like a real one.
make_patch() { # name old new
	local w=$BATS_TEST_TMPDIR/mk.$1
	rm -rf "$w"
	mkdir -p "$w/kernel"
	git -C "$w" init -q
	printf 'int one(void)\n{\n\treturn 1;\n}\n\nint two(void)\n{\n\treturn 2;\n}\n' >"$w/kernel/foo.c"
	git -C "$w" add -A
	git -C "$w" -c user.name=t -c user.email=t@t commit -qm base
	sed -i "s/return $2;/return $3;/" "$w/kernel/foo.c"
	git -C "$w" -c user.name=Tester -c user.email=tester@example.org commit -qam "foo: $1" -m "Because the test needs a reason."
	git -C "$w" format-patch -q --no-signature -1 --stdout >"$PATCHES/$1.patch"
}
