"""Suite-wide settings.

Under CI (``CI`` set, as .ci/run's environment does) hypothesis is derandomized, so a run is
repeatable and a differential test cannot fail on an example a previous run never tried; on a
developer machine it keeps exploring new examples (where new disagreements with the reference
are found).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
