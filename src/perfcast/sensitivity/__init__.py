"""Fast resource-sensitivity profiling (Wang et al. 2017).

How a program's performance falls as it gets less CPU, memory, disk or network bandwidth, measured
in a fraction of the brute-force runs: a resource ceiling from one monitored unrestricted run,
binary recursive search for the levels worth measuring, their Cartesian product measured (for real
under cgroup limits, or replayed from a measured grid), the rest filled by sequential 1-D PCHIP.

Modules: :mod:`.resources` (dimensions, levels, ceiling), :mod:`.metrics` (Eq. 1),
:mod:`.sampling` (binary search, Latin hypercube, adaptive), :mod:`.interpolation` (sequential
PCHIP), :mod:`.monitor` (peak usage from /proc), :mod:`.cgroups`, :mod:`.devices`,
:mod:`.netshape` (limits), :mod:`.programs` (program and metric), :mod:`.backends` (cgroup),
:mod:`.replay` (measured grids), :mod:`.profile` (one campaign), :mod:`.arcp` (the paper's
measurements), :mod:`.evaluation` (the replay evaluation's scoring), :mod:`.markdown` (its
comparison as Markdown), :mod:`.published` (the paper's published numbers), :mod:`.figures`,
:mod:`.settings` (the config section and each rule's settings), :mod:`.rules` (one function per
rule). Import the names from their modules; the package itself loads nothing (the workflow reads
:mod:`.settings` at parse time without importing scipy).

Reference: L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang, "Speeding up profiling program's
runtime characteristics for workload consolidation", PLoS ONE 12(4): e0175861, 2017,
doi:10.1371/journal.pone.0175861; docs/methods/sensitivity.md.
"""
