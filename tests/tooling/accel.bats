#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# ACCEL=auto|kvm|tcg (scripts/accel-probe, boot plan, in-runtime): the
# probe's logic and the exact QEMU and podman arguments, with the fake
# QEMU (FAKE_KVM says how its KVM behaves) and a fake /dev/kvm, since no
# host here has a KVM that works.

load ../helpers

setup() {
	scratch
	export PATH=$TOP/tests/fixtures/fakes:$PATH FAKE_QEMU_LOG=$BATS_TEST_TMPDIR/qemu.log
	export FAKE_QEMU_STARTED=$BATS_TEST_TMPDIR/qemu.started
	export KVM_DEV=$BATS_TEST_TMPDIR/kvm
	touch "$KVM_DEV"
	unset ACCEL PROBE_TIMEOUT FAKE_KVM
}

probe() {
	run --separate-stderr "$TOP/scripts/accel-probe"
}

kvm_runs() { # how many times QEMU was started with KVM
	grep -c -- '-accel kvm' "$FAKE_QEMU_LOG" 2>/dev/null || true
}

# since_qemu: milliseconds from the start of the last QEMU run to now. The probe's own time limits are what these
# tests hold, so the clock starts when QEMU did: what a loaded host takes
# to get there (bash, Python, the fake's start-up) is not the probe's.
since_qemu() {
	local now=${EPOCHREALTIME//[.,]/} start
	start=$(tail -n1 "$FAKE_QEMU_STARTED")
	start=${start//[.,]/}
	echo $(((10#$now - 10#$start) / 1000))
}

@test "accel-probe: ACCEL=tcg is TCG without asking QEMU or the device" {
	ACCEL=tcg probe
	[ "$status" -eq 0 ]
	[ "$output" = "tcg ACCEL=tcg" ]
	[ ! -e "$FAKE_QEMU_LOG" ]
}

@test "accel-probe: auto without /dev/kvm is TCG, saying why" {
	KVM_DEV=$BATS_TEST_TMPDIR/none probe
	[ "$status" -eq 0 ]
	[[ "$output" == "tcg no $BATS_TEST_TMPDIR/none here"* ]]
	[ ! -e "$FAKE_QEMU_LOG" ]
}

@test "accel-probe: auto with a KVM that works is KVM, probed with exactly the boot's KVM arguments" {
	FAKE_KVM=works probe
	[ "$status" -eq 0 ]
	[[ "$output" == "kvm the KVM probe guest ran in "* ]]
	# one probe: the boot's arguments, a tiny disk guest, isa-debug-exit
	[ "$(kvm_runs)" = 1 ]
	line=$(grep -- '-accel kvm' "$FAKE_QEMU_LOG")
	[[ "$line" == "-accel kvm -cpu host -display none -serial stdio -monitor none -no-reboot -m 16 -drive file="*"/probe.img,format=raw,if=ide,snapshot=on -device isa-debug-exit,iobase=0xf4,iosize=0x04" ]]
	[ "$("$TOP/scripts/pipeline" boot plan accel-args kvm | tr '\n' ' ')" = "-accel kvm -cpu host " ]
}

@test "accel-probe: /dev/kvm there but QEMU aborts: auto falls back to TCG with QEMU's words; cached" {
	FAKE_KVM=abort probe
	[ "$status" -eq 0 ]
	[[ "$output" == "tcg KVM is there but does not run guests: QEMU with -accel kvm -cpu host exited 134: qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" ]]
	[ "$(kvm_runs)" = 1 ]
	# the verdict is cached: no second probe
	FAKE_KVM=abort probe
	[[ "$output" == "tcg KVM is there but does not run guests: "*"(probed once, cached in $BUILD/accel/"* ]]
	[ "$(kvm_runs)" = 1 ]
	[ "$(find "$BUILD/accel" -type f -name '????????????????' | wc -l)" = 1 ]
}

@test "accel-probe: a KVM guest that prints nothing is not working KVM; found within the probe timeout" {
	FAKE_KVM=hang PROBE_TIMEOUT=1 probe
	took=$(since_qemu)
	[ "$status" -eq 0 ]
	[ "$output" = "tcg KVM is there but does not run guests: with -accel kvm -cpu host the probe guest printed nothing in 1s" ]
	# the probe timeout (1 s) ended it, not the guest (an hour) nor the
	# default timeout (5 s); at most the kill's grace (2 s) on top
	echo "from QEMU's start to the answer: $took ms"
	[ "$took" -ge 1000 ] && [ "$took" -lt 4000 ]
	run ! pgrep -f "$BATS_TEST_TMPDIR/.*probe.img"
}

@test "accel-probe --kernel: a KVM that runs the boot sector but not Linux is TCG, naming the kernel; one that runs it is KVM" {
	echo 'fake kernel' >"$BATS_TEST_TMPDIR/bzImage"
	FAKE_KVM=sector-only PROBE_TIMEOUT=1 run "$TOP/scripts/accel-probe" --kernel "$BATS_TEST_TMPDIR/bzImage"
	took=$(since_qemu)
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "tcg KVM runs the probe's boot sector but not Linux: under -accel kvm -cpu host the kernel $BATS_TEST_TMPDIR/bzImage printed nothing in 3s" ]
	# the last run is the kernel's (after the boot sector's), ended by its
	# limit (3 s), not by the guest (an hour)
	[[ "$(tail -n1 "$FAKE_QEMU_LOG")" == *"-kernel $BATS_TEST_TMPDIR/bzImage "* ]]
	echo "from the kernel probe's start to the answer: $took ms"
	[ "$took" -ge 3000 ] && [ "$took" -lt 6000 ]
	grep -q -- "-accel kvm -cpu host .*-kernel $BATS_TEST_TMPDIR/bzImage -append console=ttyS0 earlyprintk=serial,ttyS0,115200 panic=-1" "$FAKE_QEMU_LOG"
	# without --kernel the same host passes: the boot sector alone cannot tell
	FAKE_KVM=sector-only PROBE_TIMEOUT=1 probe
	[[ "$output" == "kvm the KVM probe guest ran in "* ]]
	# a KVM that runs Linux: KVM, said so; cached per kernel
	rm -rf "$BUILD/accel"
	FAKE_KVM=works run "$TOP/scripts/accel-probe" --kernel "$BATS_TEST_TMPDIR/bzImage"
	[[ "$output" == "kvm the KVM probe guest ran in "*"; the kernel printed its banner under it in "* ]]
	echo 'another kernel' >"$BATS_TEST_TMPDIR/bzImage2"
	FAKE_KVM=sector-only PROBE_TIMEOUT=1 run "$TOP/scripts/accel-probe" --kernel "$BATS_TEST_TMPDIR/bzImage2"
	[[ "$output" == "tcg KVM runs the probe's boot sector but not Linux"* ]]
	run "$TOP/scripts/accel-probe" --kernel "$BATS_TEST_TMPDIR/none"
	[ "$status" -eq 2 ]
	# --variant: the kernel the variant boots (variant.json's), not its own directory's
	mkdir -p "$ARTIFACTS/iso" "$ARTIFACTS/base"
	echo '{"kernel": {"variant": "base"}}' >"$ARTIFACTS/iso/variant.json"
	echo 'base kernel' >"$ARTIFACTS/base/bzImage"
	FAKE_KVM=sector-only PROBE_TIMEOUT=1 run "$TOP/scripts/accel-probe" --variant iso
	[ "$output" = "tcg KVM runs the probe's boot sector but not Linux: under -accel kvm -cpu host the kernel $ARTIFACTS/base/bzImage printed nothing in 3s" ]
}

@test "accel-probe: ACCEL=kvm where KVM does not work exits 2 at once with the reason" {
	# at once: well inside a probe timeout it would otherwise wait out
	FAKE_KVM=abort ACCEL=kvm PROBE_TIMEOUT=10 probe
	took=$(since_qemu)
	[ "$status" -eq 2 ]
	[ "$output" = "" ]
	[[ "$stderr" == "error: ACCEL=kvm, but KVM does not work here: KVM is there but does not run guests: QEMU with -accel kvm -cpu host exited 134: "*"failed to set MSR 0x10a"*"(use ACCEL=auto or ACCEL=tcg)" ]]
	echo "from QEMU's start to the answer: $took ms"
	[ "$took" -lt 5000 ]
	# without the device, QEMU is not even started
	KVM_DEV=$BATS_TEST_TMPDIR/none ACCEL=kvm probe
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"ACCEL=kvm, but KVM does not work here: no $BATS_TEST_TMPDIR/none here"* ]]
	[ "$(kvm_runs)" = 1 ]
	# (another build/: the verdict above is cached)
	BUILD=$BATS_TEST_TMPDIR/other ACCEL=kvm FAKE_KVM=works probe
	[ "$status" -eq 0 ]
	[[ "$output" == "kvm "* ]]
}

@test "accel-probe: a bad ACCEL or PROBE_TIMEOUT is a usage error" {
	ACCEL=hvf probe
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"ACCEL must be auto, kvm or tcg, not 'hvf'"* ]]
	PROBE_TIMEOUT=soon probe
	[ "$status" -eq 2 ]
}

# A fake podman that records its command lines (scripts/image and the
# podman probe need image exists/inspect and a run that works).
fake_podman() {
	cat >"$BATS_TEST_TMPDIR/podman" <<EOF
#!/bin/sh
case "\$1 \$2" in
"--version "*) echo "podman version 9.9" ;;
"image exists") exit 0 ;;
"image inspect") echo sha256:fake ;;
"images "*) echo fakeid ;;
"run "*) echo "\$*" >>"$BATS_TEST_TMPDIR/podman.calls" ;;
esac
exit 0
EOF
	chmod +x "$BATS_TEST_TMPDIR/podman"
	export PODMAN=$BATS_TEST_TMPDIR/podman
}

@test "in-runtime: /dev/kvm goes into the container unless ACCEL=tcg, and ACCEL and TESTS with it" {
	fake_podman
	ACCEL=auto TESTS='umcg/switch*' "$TOP/scripts/in-runtime" true
	last=$(tail -n1 "$BATS_TEST_TMPDIR/podman.calls")
	[[ "$last" == *" --device $KVM_DEV:/dev/kvm "* ]]
	[[ "$last" == *" -e ACCEL=auto "* ]]
	[[ "$last" == *" -e TESTS=umcg/switch* "* ]]
	ACCEL=tcg "$TOP/scripts/in-runtime" true
	last=$(tail -n1 "$BATS_TEST_TMPDIR/podman.calls")
	[[ "$last" != *"--device"* ]]
	KVM_DEV=$BATS_TEST_TMPDIR/none "$TOP/scripts/in-runtime" true
	last=$(tail -n1 "$BATS_TEST_TMPDIR/podman.calls")
	[[ "$last" != *"--device"* ]]
}

# A fake podman whose `run ... sleep 300` starts a "container" in a session
# of its own, as podman's conmon does: killing the client leaves it running;
# only `rm -f NAME` (or the command ending) takes it down.
fake_podman_containers() {
	local d=$BATS_TEST_TMPDIR/containers
	mkdir -p "$d"
	cat >"$BATS_TEST_TMPDIR/podman" <<EOF2
#!/bin/bash
d=$d
case "\$1 \$2" in
"--version "*) echo "podman version 9.9"; exit 0 ;;
"image exists") exit 0 ;;
"image inspect") echo sha256:fake; exit 0 ;;
"images "*) echo fakeid; exit 0 ;;
"rm "*)
	echo "\$*" >>"\$d/rm.calls"
	name=\${*: -1}
	[ ! -f "\$d/\$name" ] || kill "\$(cat "\$d/\$name")" 2>/dev/null
	exit 0 ;;
"run "*)
	case "\$*" in *" sleep 300") ;; *) exit 0 ;; esac
	name=unnamed
	args=("\$@")
	for i in "\${!args[@]}"; do
		[ "\${args[i]}" != --name ] || name=\${args[i+1]}
	done
	setsid sleep 300 </dev/null >/dev/null 2>&1 &
	echo \$! >"\$d/\$name.tmp"
	mv "\$d/\$name.tmp" "\$d/\$name"
	wait \$!
	;;
esac
EOF2
	chmod +x "$BATS_TEST_TMPDIR/podman"
	export PODMAN=$BATS_TEST_TMPDIR/podman
}

@test "in-runtime: stopping it (SIGTERM, SIGINT, SIGHUP) takes its container with it" {
	fake_podman_containers
	d=$BATS_TEST_TMPDIR/containers
	for sig in TERM INT HUP; do
		rm -f "$d"/*
		# (an asynchronous command of a script ignores SIGINT: undo that)
		env --default-signal=INT "$TOP/scripts/in-runtime" sleep 300 &
		pid=$!
		for _ in $(seq 100); do
			c=""
			for f in "$d"/*; do
				case $f in *.calls | *.tmp | "$d/*") ;; *) c=${f##*/} ;; esac
			done
			[ -z "$c" ] || break
			sleep 0.1
		done
		[ -n "$c" ]
		cpid=$(cat "$d/$c")
		kill -s "$sig" "$pid"
		rc=0
		wait "$pid" || rc=$?
		echo "SIG$sig: in-runtime exit $rc, container $c"
		[ "$rc" -ne 0 ]
		for _ in $(seq 50); do
			kill -0 "$cpid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$cpid" 2>/dev/null; then
			kill "$cpid"
			echo "SIG$sig: the container is still up"
			return 1
		fi
	done
}
