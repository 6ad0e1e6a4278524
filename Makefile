# kernel-pipeline: Debian's linux-source + patches/ -> tested kernels.
# The single entry point; every recipe is a script in scripts/, run in the
# container image (RUNTIME=podman) or on the host (RUNTIME=native).
# (ci/ holds what each CI job runs; it calls the same scripts.)
# `make help` lists the targets and the variables below: a "## NAME:
# meaning [default]" line before each (scripts/make-help reads them; a
# tooling test holds README's table to the same text).

## RUNTIME: podman, or native (the same scripts on the host) [podman]
RUNTIME    ?= podman
## VARIANTS: variants to build/boot, space separated [the default set (scripts/pipeline config list); make check: its quick set]
VARIANTS   ?=
## JOBS: container-build: kernels built at the same time; make, matrix: boots at the same time [1]
JOBS       ?= 1
## BASE_IMAGE: a registry image to start from, on a connected host [local debootstrap image]
BASE_IMAGE ?=
## VARIANT: the one variant of boot, test-variant, bench, rerun-failed, bisect-run, packages, boot-packages [default]
VARIANT    ?= default
## SUITES: suites to run (test-variant, matrix) [the variant's]
SUITES     ?=
## TESTS: globs over suite/program/test ids, e.g. umcg/switch* (test-variant, matrix, bisect-run) [every test]
TESTS      ?=
## KSELFTEST: the kselftest set: quick (make check, CI) or full (every test the guest can run) [the variant's kselftest_set: quick]
KSELFTEST  ?=
## CHECK: make check's set: quick (CI) or full (adds the variants marked check_set = full, the cold repro-check of default and two boots of its whole suites) [quick]
CHECK      ?= quick
# A bad set stops make check before its setup installs anything.
ifneq ($(filter check,$(MAKECMDGOALS)),)
ifneq ($(filter-out quick full,$(CHECK))$(word 2,$(CHECK)),)
$(error CHECK must be quick or full, not '$(CHECK)')
endif
endif
## ACCEL: auto (KVM when a probe guest runs, else TCG), kvm or tcg [auto]
ACCEL      ?= auto
## ARTIFACTS: boot a downloaded artifact set as it is (matrix, test-variant, boot, bench) [./artifacts, kept up to date]
ARTIFACTS  ?=
## LOG: the console log to classify again (parse) [none]
LOG        ?=
## A: the results to compare from: a results/ copy or a CI download (compare) [none]
A          ?=
## B: the results to compare with (compare) [results]
B          ?= results
## GOOD: a kernel-tree commit where the tests pass (bisect-run) [none]
GOOD       ?=
## BAD: a later kernel-tree commit where they fail (bisect-run) [none]
BAD        ?=
## CCACHE_REMOTE: a shared compiler cache, ccache remote storage URL, e.g. redis://host:6379 [none]
CCACHE_REMOTE ?=
## DISTCC_HOSTS: distcc daemons "host:port/jobs ...", each running scripts/distccd-serve [none]
DISTCC_HOSTS  ?=
## NO_DONOR: 1: build a new variant's kernel from nothing, not from a donor's objects [0]
NO_DONOR      ?= 0
## KCONFIG_ADD: Kconfig lines for one run, e.g. 'CONFIG_X=y CONFIG_Y=n': a kernel of its own, the variant's untouched (make, test-variant, boot) [none]
KCONFIG_ADD   ?=
## APPEND: kernel command line words for one run (make, test-variant, boot) [none]
APPEND        ?=
## QEMU_ARGS: QEMU arguments for one run (make, test-variant, boot) [none]
QEMU_ARGS     ?=
## KERNEL_TREE: a kernel git tree to build instead of Debian's source + patches/, out of tree into build/, with VARIANT's fragments (make, test-variant, boot) [none]
KERNEL_TREE   ?=
## VERBOSE: 1: the guest's serial console on the terminal while it runs (test-variant, matrix, make) [0]
VERBOSE       ?=
## WAIT: 1: wait for a run that holds this checkout's lock, instead of refusing [0]
WAIT          ?= 0

export RUNTIME VARIANTS JOBS VARIANT SUITES LOG TESTS ACCEL GOOD BAD CCACHE_REMOTE DISTCC_HOSTS NO_DONOR KSELFTEST CHECK WAIT
ifneq ($(strip $(BASE_IMAGE)),)
export BASE_IMAGE
endif
# (override: a command-line value is not replaced otherwise)
ifneq ($(strip $(KERNEL_TREE)),)
override KERNEL_TREE := $(abspath $(KERNEL_TREE))
export KERNEL_TREE
endif
ifneq ($(strip $(ARTIFACTS)),)
# (override: a command line's ARTIFACTS=dl would stay relative otherwise)
override ARTIFACTS := $(abspath $(ARTIFACTS))
export ARTIFACTS
export PREBUILT := 1
endif

IN := scripts/in-runtime
# The one command line of the Python stages (pipeline/cli/), with
# Debian's python3 and no __pycache__ in the source tree.
PIPELINE := scripts/pipeline
# Every target that writes build/, artifacts/ or results/ runs under the
# checkout's lock (scripts/checkout-lock: a second run refuses, or waits
# with WAIT=1); help, parse, compare and test do not take it (they build
# and boot nothing; parse writes only results/<variant>/reparsed).
LOCK = scripts/checkout-lock $@
SETUP_LISTS := $(if $(filter native,$(RUNTIME)),native,podman)

.DEFAULT_GOAL := all
.PHONY: skips report report-html report-screenshot all help setup base-image image container-build kernel-tree distro-modules \
	patches-export series-check repro-check matrix packages boot-packages boot test-variant bench parse \
	rerun-failed list-tests bump-source compare baseline bisect-run check check-scale test test-integration clean distclean clean-cache

# One script: each variant boots as soon as its kernel is built, while the
# next kernel builds; a variant that fails to build is still a (class 2)
# row of the matrix.
all: setup ## build every variant and boot it in QEMU (the main job)
	@$(LOCK) $(IN) scripts/with-knobs scripts/build-and-boot

help: ## list the targets and the variables, with their defaults
	@scripts/make-help $(firstword $(MAKEFILE_LIST))

setup: ## install missing host packages (apt), as root
	@scripts/host-setup $(SETUP_LISTS)

base-image: setup ## build the local Debian base image (debootstrap + podman import)
	@$(LOCK) scripts/base-image

image: setup ## build the pipeline's container image
	@$(LOCK) scripts/image >/dev/null

container-build: setup ## patch the tree, build all VARIANTS (kernels, guest tests, initramfs), write artifacts/
	@$(LOCK) $(IN) scripts/container-build

packages: setup ## Debian packages of VARIANT's kernel (bindeb-pkg) and its tests package (kernel-pipeline-tests) into artifacts/VARIANT/, hashed in the manifest
	@$(LOCK) $(IN) scripts/build-packages --build "$(VARIANT)"

boot-packages: setup ## install VARIANT's packages in a throwaway Debian rootfs (dpkg -i, initramfs-tools), build a module against its headers, boot that kernel + initrd in QEMU with the rootfs as root (9p) and run its package_suites from it with the tests package installed there
	@$(LOCK) scripts/boot-packages "$(VARIANT)"

distro-modules: setup ## boot Debian's own kernel of the pinned source in QEMU (udev coldplug) and write its lsmod to configs/distro-vm.lsmod, distro-vm's localmodconfig input
	@$(LOCK) scripts/distro-modules

kernel-tree: setup ## leave the patched kernel git tree ready to edit
	@$(LOCK) $(IN) scripts/prepare-source
	@echo "kernel tree: $(CURDIR)/build/linux -> $$(readlink -f build/linux)"
	@echo "commit your changes there, then run 'make patches-export'"

# On the host, no setup first: a pin no longer served is what it fixes.
bump-source: ## move the kernel pin to Debian's newest linux-source-6.12 upload, apply the series to it, name each patch that no longer applies with its rejected hunks
	@$(LOCK) scripts/source-pin bump

patches-export: setup ## write the tree's commits to patches/ and patches/series
	@$(LOCK) $(IN) scripts/patches-export

series-check: setup ## checkpatch --strict every patch, build the head for !SMP and PREEMPT_RT (up, rt); BISECT=1: build every commit
	@$(LOCK) $(IN) scripts/series-check

repro-check: container-build ## rebuild VARIANTS elsewhere, clock shifted, no ccache; compare
	@$(LOCK) $(IN) scripts/repro-check

matrix: setup ## boot every variant of VARIANTS in QEMU and run its suites
	@$(LOCK) $(IN) scripts/matrix

boot: setup ## interactive console of VARIANT (Ctrl-A X quits QEMU)
	@$(LOCK) $(IN) scripts/with-knobs scripts/boot-interactive "$(VARIANT)"

test-variant: setup ## boot VARIANT and run SUITES (default: the variant's own)
	@$(LOCK) $(IN) scripts/results-page --after scripts/with-knobs scripts/test-variant "$(VARIANT)"

# Reads the artifacts only: no lock, no build, no boot.
list-tests: ## print the test ids a test-variant of VARIANT with SUITES and TESTS would run, without booting
	@$(PIPELINE) boot plan --tests "$(TESTS)" tests "$${ARTIFACTS:-$(CURDIR)/artifacts}" "$(VARIANT)" $(SUITES)

bench: setup ## run the benchmark suites of VARIANT
	@SUITES=umcg-bench $(LOCK) $(IN) scripts/results-page --after scripts/test-variant "$(VARIANT)"

parse: ## classify a saved console log: make parse LOG=results/default/console.log
	@test -n "$(LOG)" || { echo "error: give LOG=path/to/console.log" >&2; exit 2; }
	@$(PIPELINE) parse --out "$$(dirname "$(LOG)")/reparsed" "$(LOG)"

rerun-failed: setup ## boot VARIANT again with exactly what failed in results/VARIANT/
	@$(LOCK) $(IN) scripts/rerun-failed "$(VARIANT)"

skips: ## every skip of VARIANT's last run, counted per reason (results/VARIANT/)
	@$(PIPELINE) skips "$${RESULTS:-results}/$(VARIANT)"

report-html: ## the results page of RESULTS (default results/): RESULTS/index.html, one static file (make, matrix and test-variant write it at their end)
	@$(PIPELINE) report-html "$${RESULTS:-results}"

report-screenshot: ## docs/report.png, README's screenshot: the page of tests/fixtures/report/ in headless Chromium
	@scripts/host-setup check
	@scripts/report-screenshot docs/report.png

report: ## VARIANT's last run again, one line per test, each failure with the end of its output (results/VARIANT/)
	@$(PIPELINE) report "$${RESULTS:-results}/$(VARIANT)"

compare: ## new failures, LOST tests, fixes, metric deltas from results A to B (a NAME-knobs-* run one side lacks against the other's NAME); fails if B regressed (python3 -m pipeline compare exits 1)
	@test -n "$(A)" || { echo "error: give A=<results dir> (and B=, default results)" >&2; exit 2; }
	@$(PIPELINE) compare $(if $(strip $(VARIANTS)),--variants "$(VARIANTS)") "$(A)" "$(B)"

baseline: ## write ci/baseline/ from the last green make check's results (then commit it): the tests later runs are held to
	@$(PIPELINE) baseline write "$${RESULTS:-results}" $(if $(strip $(VARIANTS)),--variants "$(VARIANTS)") --source "make check of $$(git rev-parse --short HEAD)"

bisect-run: setup ## git bisect run GOOD..BAD in the kernel tree: build, boot VARIANT, TESTS
	@$(LOCK) $(IN) scripts/bisect-run

test: ## the fast tests: tests/unit (in-process) and tests/tooling (no kernel build, no guest)
	@scripts/host-setup check
	@scripts/run-tests

test-integration: ## the whole pipeline on fake projects (fake kernel, fake QEMU): tests/integration
	@scripts/host-setup check
	@scripts/run-tests --name integration --parallel tests/integration/*.bats

check: setup ## the test command: tooling and integration tests, the main job, system tests
	@scripts/host-setup check
	@$(LOCK) scripts/check

check-scale: setup ## the slow scale-out tests: a kernel through a shared ccache and distcc
	@$(LOCK) $(IN) scripts/check-scale

clean: ## remove build objects, artifacts and results (keeps tree, the per-user caches, images)
	@$(LOCK) scripts/clean

distclean: ## remove everything generated in this checkout, images included (keeps the per-user caches: make clean-cache)
	@$(LOCK) scripts/clean --dist

clean-cache: ## remove the per-user caches every checkout shares (compiler cache, pristine source, kselftest and guest-program builds)
	@scripts/clean --cache
