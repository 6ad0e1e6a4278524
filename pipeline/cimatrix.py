"""The CI matrices, from configs/ alone: which kernels the CI build jobs
build (each once) and which variants its boot jobs boot (each from its
kernel's artifact set). The default set (config.default_names(), what
`scripts/pipeline config list` prints) decides both, so a new
configs/NAME.variant is built and booted in CI with no other edit
(ci/matrix prints them: GitHub's job outputs for fromJSON, GitLab's
child pipeline).

Python 3.11 standard library only (Debian 12).
"""

from __future__ import annotations

import json

from pipeline import Fail, config

# The file of GitLab's child pipeline jobs (.build, .boot, summary) the
# generated pipeline extends, relative to the project's top.
GITLAB_JOBS = 'ci/gitlab-kernels.yml'


def matrix() -> tuple[list[str], list[dict[str, str]]]:
    """The kernels to build, in order and each once, and every variant of
    the default set with the kernel whose set it boots."""
    boots = [{'variant': n, 'kernel': config.Variant(n).kernel}
             for n in config.default_names()]
    if not boots:
        raise Fail('no variant in the default set: an empty CI matrix '
                   'would test nothing')
    kernels = list(dict.fromkeys(b['kernel'] for b in boots))
    return kernels, boots


def github_lines() -> list[str]:
    """NAME=JSON lines for $GITHUB_OUTPUT: kernels (the build matrix's
    `kernel`), boots (the boot matrix's `include`)."""
    kernels, boots = matrix()
    return ['kernels=' + json.dumps(kernels, separators=(',', ':')),
            'boots=' + json.dumps(boots, separators=(',', ':'))]


def gitlab_child() -> str:
    """GitLab's child pipeline (JSON is YAML): the jobs of GITLAB_JOBS
    with the matrices filled in."""
    kernels, boots = matrix()
    child = {
        'include': [{'local': GITLAB_JOBS}],
        'build': {'extends': '.build',
                  'parallel': {'matrix': [{'KERNEL': kernels}]}},
        'boot': {'extends': '.boot',
                 'parallel': {'matrix': [{'VARIANT': b['variant'],
                                          'KERNEL': b['kernel']}
                                         for b in boots]}},
    }
    return json.dumps(child, indent=1)
