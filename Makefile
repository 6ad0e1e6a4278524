# kernel-pipeline: Debian's linux-source + patches/ -> tested kernels.
# The single entry point; every recipe is a script in scripts/, run in the
# container image (RUNTIME=podman) or on the host (RUNTIME=native).
# (ci/ holds what each CI job runs; it calls the same scripts.)
# `make help` lists the targets.

RUNTIME    ?= podman
# Space-separated variant names (configs/<name>.variant); empty = all.
VARIANTS   ?=
# How many variants build / boot at the same time.
JOBS       ?= 1
# A registry image to start from instead of the local debootstrap one.
BASE_IMAGE ?=
VARIANT    ?= default
SUITES     ?=
LOG        ?=
# A directory of built artifacts (e.g. a CI download) to boot as it is,
# instead of ./artifacts: matrix, test-variant, boot and bench then need
# nothing else of a build.
ARTIFACTS  ?=

export RUNTIME VARIANTS JOBS VARIANT SUITES LOG
ifneq ($(strip $(BASE_IMAGE)),)
export BASE_IMAGE
endif
ifneq ($(strip $(ARTIFACTS)),)
export ARTIFACTS := $(abspath $(ARTIFACTS))
export PREBUILT := 1
endif

IN := scripts/in-container
SETUP_LISTS := $(if $(filter native,$(RUNTIME)),native,podman)

.DEFAULT_GOAL := all
.PHONY: all help setup base-image image container-build kernel-tree \
	patches-export series-check repro-check matrix boot test-variant bench parse \
	check test clean distclean

# One recipe, so that `make -j` cannot boot a kernel before it is built;
# a variant that fails to build is still a (class 2) row of the matrix.
all: setup ## build every variant and boot it in QEMU (the main job)
	@rc=0; $(IN) scripts/build-all || rc=$$?; \
	$(IN) scripts/matrix || { m=$$?; [ "$$m" -le "$$rc" ] || rc=$$m; }; \
	exit $$rc

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 18

setup: ## install missing host packages (apt), as root
	@scripts/host-setup $(SETUP_LISTS)

base-image: setup ## build the local Debian base image (debootstrap + podman import)
	@scripts/base-image

image: setup ## build the pipeline's container image
	@scripts/image >/dev/null

container-build: setup ## patch the tree, build all VARIANTS (kernels, guest tests, initramfs), write artifacts/
	@$(IN) scripts/build-all

kernel-tree: setup ## leave the patched kernel git tree ready to edit
	@$(IN) scripts/prepare-source
	@echo "kernel tree: $(CURDIR)/build/linux -> $$(readlink -f build/linux)"
	@echo "commit your changes there, then run 'make patches-export'"

patches-export: setup ## write the tree's commits to patches/ and patches/series
	@$(IN) scripts/patches-export

series-check: setup ## checkpatch --strict every patch; BISECT=1: build every commit
	@$(IN) scripts/series-check

repro-check: container-build ## rebuild VARIANTS elsewhere, clock shifted, no ccache; compare
	@$(IN) scripts/repro-check

matrix: setup ## boot every variant of VARIANTS in QEMU and run its suites
	@$(IN) scripts/matrix

boot: setup ## interactive console of VARIANT (Ctrl-A X quits QEMU)
	@$(IN) scripts/boot-interactive "$(VARIANT)"

test-variant: setup ## boot VARIANT and run SUITES (default: the variant's own)
	@$(IN) scripts/test-variant "$(VARIANT)"

bench: setup ## run the benchmark suites of VARIANT
	@SUITES=umcg-bench $(IN) scripts/test-variant "$(VARIANT)"

parse: ## classify a saved console log: make parse LOG=results/default/console.log
	@test -n "$(LOG)" || { echo "error: give LOG=path/to/console.log" >&2; exit 2; }
	@scripts/parse-console --out "$$(dirname "$(LOG)")/reparsed" "$(LOG)"

test: ## the tooling tests only (fast, no kernel build)
	@scripts/host-setup check
	@scripts/run-tests

check: setup ## the test command: tooling tests, the main job, harness tests
	@scripts/host-setup check
	@scripts/check

clean: ## remove build objects, artifacts and results (keeps tree, ccache, images)
	@for v in $$(scripts/variant list); do rm -rf "build/$$v"; done
	rm -rf build/repro build/initramfs artifacts results

distclean: clean ## remove everything generated, images included
	rm -rf build
	-podman image rm $$(podman images -q --filter reference='localhost/kernel-pipeline*') 2>/dev/null
