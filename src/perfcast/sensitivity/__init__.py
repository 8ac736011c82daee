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

# the names below load their module on first use (PEP 562): importing the package, or one of its
# light modules (.settings, which the workflow reads at parse time), does not import scipy
_EXPORTS = {
    "sequential_pchip": "interpolation", "Metric": "metrics", "sensitivity": "metrics",
    "ProfileResult": "profile", "profile": "profile", "Dimension": "resources",
    "ResourceModel": "resources", "ceiling_range": "resources",
    "binary_recursive_search": "sampling", "lhs_levels": "sampling",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
