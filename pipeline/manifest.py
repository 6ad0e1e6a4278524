"""The manifest subcommand (scripts/pipeline artifacts manifest): what made
the artifacts, written with pipeline/artifacts.py's manifest() and
write_manifest().

A module of its own, not artifacts.py: scripts/build-kernel and
build-initramfs hash artifacts.py into every kernel's and initramfs's
inputs, and this code is an input of neither: editing it must not rebuild
them. artifacts.py lists this command in its COMMANDS, so this module
imports it only when it runs.

Python 3.11 standard library only (Debian 12).
"""

import argparse
import os
import subprocess
import sys

from pipeline import Fail, config, sha256

DOC = """Write artifacts/manifest.json and artifacts/SHA256SUMS.

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


def first_line(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True,
                             check=True).stdout
        return out.splitlines()[0] if out else ""
    except (OSError, subprocess.CalledProcessError):
        return None


def _run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              check=True).stdout.strip()
    except subprocess.CalledProcessError as e:
        raise Fail("%s failed: %s" % (" ".join(cmd), e.stderr.strip())) \
            from None


def build_record(top, build):
    """What made the artifacts: source, series, toolchain, environment
    (TOP the checkout, BUILD its build/)."""
    from pipeline import artifacts
    pin = config.series_hash()
    with open(os.path.join(top, "scripts/deps/kernel-source.txt")) as f:
        package, version = next(
            ln.split()[0] for ln in f
            if ln.strip() and not ln.startswith("#")).split("=", 1)
    tarball = os.environ.get("KSRC_TARBALL") or "/usr/src/%s.tar.xz" % package
    return {
        "format": artifacts.MANIFEST_FORMAT,
        "source": {
            "package": package,
            "version": version,
            "tarball": tarball,
            "tarball_sha256": sha256(tarball),
            "build_timestamp": _run([os.path.join(top,
                                                  "scripts/source-date")]),
        },
        "series": {
            "patches": [{"name": n, "sha256": h}
                        for n, h in config.series_entries()],
            "sha256": pin,
            "tree_head": _run(["git", "-C", os.path.join(build, "linux"),
                               "rev-parse", "HEAD"]),
        },
        "toolchain": {
            "gcc": first_line(["gcc", "--version"]),
            "binutils": first_line(["ld", "--version"]),
            "make": first_line(["make", "--version"]),
        },
        "environment": {
            "runtime": "podman" if os.environ.get("IMAGE_ID") else "native",
            "image": os.environ.get("IMAGE_NAME"),
            "image_id": os.environ.get("IMAGE_ID"),
            "base_image": os.environ.get("BASE_IMAGE_NAME"),
        },
    }


def configure(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--update", action="store_true",
                    help="their guest side was rebuilt since the build: "
                    "keep the rest of the manifest")
    ap.add_argument("variants", nargs="+", metavar="VARIANT",
                    help="the variants this build produced")


def run(a: argparse.Namespace) -> int:
    from pipeline import artifacts
    top = artifacts.top()
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
        art, variants, build_record(top, build) if record is None else record)
    artifacts.write_manifest(art, out, sums)
    print("%-40s ok (%d variants, %d kernels)" % (
        "manifest.json + SHA256SUMS", len(out["variants"]),
        len(out["kernels"])), file=sys.stderr)
    return 0
