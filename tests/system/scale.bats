#!/usr/bin/env bats
# The fast scale-out tests of `make check`: the real Redis server and distcc
# daemons, started on loopback inside the pipeline's image, serving small
# compiles made through scripts/compiler-env as kernel builds are
# (scripts/check-scale --fast). `make check-scale` runs the same on a
# kernel build.
bats_require_minimum_version 1.5.0

setup_file() {
	TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	export TOP
}

@test "shared ccache (CCACHE_REMOTE=redis://): an empty cache in another checkout gets every result from it" {
	run "$TOP/scripts/in-runtime" scripts/check-scale --fast ccache-remote
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok     ccache-remote:"*"12 remote hits, 0 misses"* ]]
}

@test "distcc (DISTCC_HOSTS): two daemons on loopback compile the jobs, the objects are a local build's" {
	run "$TOP/scripts/in-runtime" scripts/check-scale --fast distcc
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok     distcc: 12 compiles, objects identical to local ones"* ]]
}

@test "local ccache: a miss runs the compiler once (no preprocessor pass), an empty object directory is all hits" {
	run "$TOP/scripts/in-runtime" scripts/check-scale --fast ccache-local
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok     ccache-local: 12 compiles: 12 misses, 12 keys from dependency files, 0 preprocessor runs; from an empty object directory 12 direct hits; objects identical"* ]]
}

@test "local ccache: an object whose source .incbin's a file gets the file's new bytes, also from a cache that holds the old object" {
	run "$TOP/scripts/in-runtime" scripts/check-scale --fast ccache-incbin
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok     ccache-incbin: the object has the new bytes after its .incbin file changed: yes; and with the old bytes' object already in the cache: yes"* ]]
}
