"""The build record of artifacts/manifest.json: what source, patches,
toolchain and image made the artifacts (build_record()); the manifest
itself is pipeline/artifacts.py's manifest() and write_manifest(), the
command `scripts/pipeline artifacts manifest` (pipeline/cli/artifacts.py).

Python 3.11 standard library only (Debian 12).
"""

import os
import subprocess

from pipeline import Fail, artifacts, kernel_pin, series, sha256

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
    pin = series.series_hash()
    package, version = kernel_pin()
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
                        for n, h in series.series_entries()],
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
