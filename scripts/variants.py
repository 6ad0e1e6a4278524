"""Moved to pipeline/config.py, the one reader of variants, suites and the
series. This name stays only so that an entry point not yet moved to the
package (`import variants` after `import entry`) gets that very module,
never a second copy of its rules."""
import sys

import entry  # noqa: F401 - puts the package on the path
from pipeline import config

sys.modules[__name__] = config
