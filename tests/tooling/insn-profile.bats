#!/usr/bin/env bats
# The instruction profiler (tools/insn-profile, variant
# bench-icount-profile): the guest's markers are the ones the plugin looks
# for, and the plugin, driven by a stand-in for QEMU's plugin API
# (insn-profile/fake_qemu.c), counts per symbol only inside the windows,
# drops warm-ups and stray markers, and writes the table
# tools/insn-profile/table.py reads. The plugin needs qemu-plugin.h, which
# only the pipeline's image has (Containerfile; elsewhere CPATH may name
# a directory with it): without it, those tests skip.
bats_require_minimum_version 1.5.0

load ../helpers

have_header() {
	echo '#include <qemu-plugin.h>' | gcc -E -x c - >/dev/null 2>&1
}

@test "insn-profile: the guest's markers are seven-byte NOPs the plugin knows" {
	c=$BATS_TEST_TMPDIR/m.c
	printf '%s\n' '#include "insn_profile.h"' \
		'void f(unsigned int w, unsigned long r) { insn_profile_open(); insn_profile_close(w, r); }' >"$c"
	gcc -O2 -Wall -Wextra -Werror -I "$TOP/guest-tests/lib" -c -o "$c.o" "$c"
	run objdump -d "$c.o"
	[ "$status" -eq 0 ]
	for op in 01 02 03 04 05; do
		[[ "$output" == *"0f 1f 80 $op 46 50 49"* ]] || {
			echo "no marker with op $op in:"
			echo "$output"
			false
		}
	done
	# the two sides' constants are the same numbers
	magic() { sed -n 's/^#define INSN_PROFILE_MAGIC[[:space:]]*\(0x[0-9a-f]*u\)$/\1/p' "$1"; }
	[ "$(magic "$TOP/guest-tests/lib/insn_profile.h")" = 0x49504600u ]
	[ "$(magic "$TOP/tools/insn-profile/insn_profile.c")" = 0x49504600u ]
}

@test "insn-profile: per symbol, inside the windows only, warm-ups dropped" {
	have_header || skip "no qemu-plugin.h here (the pipeline's image has it)"
	export BUILD=$BATS_TEST_TMPDIR/build
	run "$TOP/scripts/insn-profile" build
	[ "$status" -eq 0 ]
	so=$BUILD/insn-profile/insn_profile.so
	[ -f "$so" ]
	gcc -O2 -Wall -Wextra -Werror -rdynamic -o "$BATS_TEST_TMPDIR/fake_qemu" \
		"$BATS_TEST_DIRNAME/insn-profile/fake_qemu.c" -ldl
	map=$BATS_TEST_TMPDIR/System.map
	printf '%s\n' 'ffffffff81000000 T f_a' 'ffffffff81000000 T f_a_alias' \
		'ffffffff81000010 T __sched_text_start' 'ffffffff81000010 t f_b' \
		'ffffffff81000020 D data_x' \
		'ffffffff81000030 T f_c' >"$map"
	out=$BATS_TEST_TMPDIR/insn-profile.tsv
	run "$BATS_TEST_TMPDIR/fake_qemu" "$so" "map=$map" "out=$out"
	[ "$status" -eq 0 ]
	run grep -v '^# insn_profile:' "$out"
	# window 2: the open marker (user) is in, the close and what follows
	# it are not; f_b ends where data_x starts; f_a_alias is f_a's alias
	# and __sched_text_start, a label, f_b's
	expected=$(printf '%s\n' '# stray markers: 3' \
		'window	1	runs	1	round_trips	1	instructions	2' \
		'1	[user]	1' '1	f_b	1' \
		'window	2	runs	2	round_trips	6	instructions	15' \
		'2	[user]	7' '2	f_a	4' '2	f_b	3' '2	[kernel, no symbol]	1')
	[ "$output" = "$expected" ] || {
		diff <(echo "$expected") <(echo "$output") || true
		false
	}
	run "$TOP/scripts/insn-profile" table "$out" --columns futex_1cpu,pipe_1cpu --min 1
	[ "$status" -eq 0 ]
	[[ "$output" == *'| `[user]` | 1.0 | 1.2 |'* ]]
}

@test "insn-profile: a plugin that does not compile leaves none behind" {
	have_header || skip "no qemu-plugin.h here (the pipeline's image has it)"
	export BUILD=$BATS_TEST_TMPDIR/build
	fake=$BATS_TEST_TMPDIR/top
	mkdir -p "$fake/tools/insn-profile" "$fake/scripts"
	cp "$TOP/scripts/insn-profile" "$TOP/scripts/lib.sh" "$fake/scripts/"
	echo 'int x = ;' >"$fake/tools/insn-profile/insn_profile.c"
	TOP=$fake run "$fake/scripts/insn-profile" build
	[ "$status" -ne 0 ]
	[[ "$output" == *"does not compile"* ]]
	[ ! -e "$BUILD/insn-profile/insn_profile.so" ]
}

@test "insn-profile: without qemu-plugin.h the build says where it is" {
	export BUILD=$BATS_TEST_TMPDIR/build
	# a compiler that finds no header at all
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\nexit 1\n' >"$BATS_TEST_TMPDIR/bin/cc"
	chmod +x "$BATS_TEST_TMPDIR/bin/cc"
	CC=$BATS_TEST_TMPDIR/bin/cc run "$TOP/scripts/insn-profile" build
	[ "$status" -ne 0 ]
	[[ "$output" == *"no qemu-plugin.h"*Containerfile* ]]
}
