"""Fast resource-sensitivity profiling (Wang et al. 2017).

How a program's performance falls as it gets less CPU, memory, disk or network bandwidth, measured
in a fraction of the brute-force runs: a resource ceiling from one monitored unrestricted run,
binary recursive search for the levels worth measuring, their Cartesian product measured (for real
under cgroup limits, or replayed from a measured grid), the rest filled by sequential 1-D PCHIP.

Modules: :mod:`.resources` (dimensions, levels, ceiling), :mod:`.metrics` (Eq. 1),
:mod:`.sampling` (binary search, Latin hypercube), :mod:`.interpolation` (sequential PCHIP),
:mod:`.monitor` (peak usage from /proc), :mod:`.cgroups`, :mod:`.devices`, :mod:`.netshape`
(limits), :mod:`.programs` (program and metric), :mod:`.backends` (cgroup), :mod:`.replay`
(measured grids), :mod:`.profile` (one campaign), :mod:`.arcp` (the paper's measurements),
:mod:`.evaluation` (the replay evaluation), :mod:`.published` (the paper's published numbers),
:mod:`.plots`, :mod:`.settings` (the config section), :mod:`.rules` (one function per rule).

Reference: L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang, "Speeding up profiling program's
runtime characteristics for workload consolidation", PLoS ONE 12(4): e0175861, 2017,
doi:10.1371/journal.pone.0175861; docs/methods/sensitivity.md.
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
