"""Fast resource-sensitivity profiling (Wang et al. 2017, PLoS ONE 12(4): e0175861).

How a program's performance falls as it gets less CPU, memory, disk or network bandwidth, measured
in a fraction of the brute-force runs: a resource ceiling from one monitored unrestricted run,
binary recursive search for the levels worth measuring, their Cartesian product measured (for real
under cgroup limits, or replayed from a measured grid), the rest filled by sequential 1-D PCHIP.

Modules: :mod:`.resources` (dimensions, levels, ceiling), :mod:`.metrics` (Eq. 1),
:mod:`.sampling` (binary search, Latin hypercube), :mod:`.interpolation` (sequential PCHIP),
:mod:`.monitor` (peak usage from /proc), :mod:`.cgroups`, :mod:`.devices`, :mod:`.netshape`
(limits), :mod:`.programs`, :mod:`.backends` (cgroup), :mod:`.replay` (measured grids),
:mod:`.profile` (one campaign), :mod:`.evaluation` and :mod:`.paper` (the paper's data and
figures), :mod:`.plots`, :mod:`.run` (one function per rule).
"""

from perfcast.sensitivity.interpolation import sequential_pchip
from perfcast.sensitivity.metrics import Metric, sensitivity
from perfcast.sensitivity.profile import ProfileResult, profile
from perfcast.sensitivity.resources import Dimension, ResourceModel, ceiling_range
from perfcast.sensitivity.sampling import binary_recursive_search, lhs_levels

__all__ = [
    "Dimension", "Metric", "ProfileResult", "ResourceModel", "binary_recursive_search",
    "ceiling_range", "lhs_levels", "profile", "sensitivity", "sequential_pchip",
]
