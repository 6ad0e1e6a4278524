"""The artifacts subcommand (scripts/pipeline artifacts stale|manifest):
the artifact set's own checks and records, from pipeline/artifacts.py's
rule and pipeline/manifest.py's record.
"""

import argparse
import os
import sys

from pipeline import Fail, artifacts, config, manifest, top as checkout_top
from pipeline.cli import Command

STALE = """Is the kernel in artifacts/ the one this checkout builds?

stale VARIANT: a boot (scripts/test-variant) brings a variant's initramfs
up to date, but never its kernel: building a kernel is `make
container-build`. So after a patch or a Kconfig line is edited,
artifacts/ still holds the kernel of the old inputs, and a run on it would
report on code the checkout no longer has. This compares what the
artifacts record with the checkout:
  - the patches (kernel.json "series", for a kernel built from the series;
    a pristine kernel has none) with patches/series now;
  - the kernel's Kconfig lines (kernel.json "kconfig_sha256", the hash of
    `config kconfig` when it was built) with the variant's lines now;
  - a KERNEL_TREE kernel's tree state (kernel.json "tree") with the
    tree's now (pipeline/kerneltree.py).
A #@ run parameter is not a kernel input: editing one is not staleness.
Where the artifacts do not record an input (an older build), that input
is not judged.

stale --build --out DIR --commit C --tools-sha256 H --toolchain T
      --timestamp TS --tree DIR [--record] KERNEL:
the build's side of the same rule (scripts/build-kernel), with every input
it knows: exit 0 when the kernel in DIR is current (every file there, and
no input it recorded differs), 1 saying why it must be built again. With
--record, write DIR/.inputs from these inputs (after a build) instead.

The rule is pipeline/artifacts.py's changes(), one for both.

Exit 0 silent: nothing recorded differs. Exit 1: the kernel is stale; one
line on stdout says what changed. Exit 2 with a message: bad input.
"""

_BUILD_INPUTS = (('out', 'DIR'), ('commit', 'C'), ('tools-sha256', 'H'),
                 ('toolchain', 'T'), ('timestamp', 'TS'), ('tree', 'DIR'))


def _stale_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument('--build', action='store_true',
                    help="the build's side: with every input below")
    ap.add_argument('--record', action='store_true',
                    help='with --build: write DIR/.inputs instead')
    for opt, metavar in _BUILD_INPUTS:
        ap.add_argument('--' + opt, metavar=metavar)
    ap.add_argument('--tree-state', metavar='H',
                    help='with --build: a KERNEL_TREE kernel\'s tree '
                    'state (build tree-state)')
    ap.add_argument('variant', metavar='VARIANT')


def _stale(a: argparse.Namespace) -> int:
    config.check_name(a.variant)
    if not a.build:
        why = artifacts.stale_reason(a.variant, artifacts.artifacts_dir())
    else:
        if not all((a.out, a.commit, a.tools_sha256, a.toolchain,
                    a.timestamp, a.tree)):
            raise Fail('--build needs --out, --commit, --tools-sha256, '
                       '--toolchain, --timestamp and --tree')
        now = artifacts.KernelInputs(
            kconfig_sha256=config.Variant(a.variant).kconfig_sha256(),
            commit=a.commit, tools_sha256=a.tools_sha256,
            toolchain=a.toolchain, timestamp=a.timestamp, tree=a.tree,
            tree_state=a.tree_state)
        if a.record:
            artifacts.write_inputs(a.out, now)
            return 0
        why = artifacts.build_reason(a.variant, a.out, now)
    if why is None:
        return 0
    print(why)
    return 1


ARTIFACTS = """The artifact set's own checks and records (artifacts/).

ARTIFACTS names another directory than the checkout's artifacts/.
"""

MANIFEST = """Write artifacts/manifest.json and artifacts/SHA256SUMS.

The manifest is the record of a build (as TuxMake's metadata.json is for
TuxRun): what source, which patches, which toolchain and image made each
artifact, each variant's variant.json (what a boot needs) and kernel.json
(what its kernel was built from), and every artifact's hash. It covers the
variants named, their guest side and kernel, and the kernel directories of
boot-only ones (their kernel files only): nothing older that happens to lie
in artifacts/. A kernel's Debian packages (make packages), when built, are
files of its variant's directory like any other; "packages" says their
version. SHA256SUMS lists every one of those files and the manifest, so
`cd artifacts && sha256sum -c SHA256SUMS` checks a download whole.
Runs inside the pipeline environment after the variants are built.

--update keeps what the manifest says about the build (source, series,
toolchain, image: the kernels were not rebuilt) and the variants it lists,
and records VARIANTs anew, for a boot that rebuilt their initramfs first
(scripts/test-variant). Exit 0, or 2 with a message.
"""



def _manifest_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--update", action="store_true",
                    help="their guest side was rebuilt since the build: "
                    "keep the rest of the manifest")
    ap.add_argument("variants", nargs="+", metavar="VARIANT",
                    help="the variants this build produced")


def _manifest(a: argparse.Namespace) -> int:
    top = checkout_top()
    art = artifacts.artifacts_dir()
    build = os.environ.get("BUILD") or os.path.join(top, "build")
    path = os.path.join(art, "manifest.json")
    variants = a.variants
    record = None
    old = artifacts.read_json(path) \
        if a.update and os.path.exists(path) else None
    if old:
        # (a variant whose directory went away since is no longer part of it)
        variants = [v for v in old.get("variants", {})
                    if os.path.exists(os.path.join(art, v, "variant.json"))
                    ] + variants
        # what the manifest says about the build stays: no kernel was rebuilt
        record = {k: v for k, v in old.items()
                  if k not in ("variants", "kernels", "packages")}
    out, sums = artifacts.manifest(
        art, variants, manifest.build_record(top, build) if record is None else record)
    artifacts.write_manifest(art, out, sums)
    print("%-40s ok (%d variants, %d kernels)" % (
        "manifest.json + SHA256SUMS", len(out["variants"]),
        len(out["kernels"])), file=sys.stderr)
    return 0


COMMANDS = [Command('artifacts', ARTIFACTS, None, None, subcommands=(
    Command('stale', STALE, _stale_args, _stale),
    Command('manifest', MANIFEST, _manifest_args, _manifest),
))]
