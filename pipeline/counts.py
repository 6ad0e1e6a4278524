"""A section's counts, the one typed result make check adds up
(scripts/check): the "counts" object of a JSON file. summarize writes it
into summary.json; scripts/run-tests and `baseline check` write it to the
file make check names for the section ($SECTION_COUNTS). One reader, so
that no section's total is scraped from a line of its output.
"""

import dataclasses
import json

from pipeline import Fail


@dataclasses.dataclass(frozen=True)
class Counts:
    """Tests passed, failed and skipped; benchmarks that ran are no
    passes (summarize's; 0 elsewhere)."""
    passed: int
    failed: int
    skipped: int
    benchmarks: int = 0

    def to_dict(self) -> dict:
        return {'counts': dataclasses.asdict(self)}


def read(path: str) -> Counts:
    """PATH's "counts"; Fail when it is missing or not counts (make check
    makes that one failure of the section)."""
    try:
        with open(path, encoding='utf-8') as f:
            c = json.load(f)['counts']
        # (benchmarks: summarize's alone)
        fields = {k: c[k] for k in ('passed', 'failed', 'skipped')}
        fields['benchmarks'] = c.get('benchmarks', 0)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise Fail('no counts in %s (%s)' % (path, e)) from None
    for k, v in fields.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise Fail('no counts in %s (%s is %r)' % (path, k, v))
    return Counts(**fields)


def write(path: str, c: Counts) -> None:
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(c.to_dict(), f)
        f.write('\n')
