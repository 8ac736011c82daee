"""The property-based tier: generated malformed and extreme inputs to every reader and
sub-command (hypothesis).

Profiles: ``ci`` (the default: few examples, derandomized, so a run is short and repeatable) and
``thorough`` (``HYPOTHESIS_PROFILE=thorough``: many more examples, random, for a bug hunt).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow,
                                                       HealthCheck.function_scoped_fixture,
                                                       HealthCheck.data_too_large]}
settings.register_profile("ci", max_examples=20, derandomize=True, print_blob=True, **_COMMON)
settings.register_profile("thorough", max_examples=500, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
