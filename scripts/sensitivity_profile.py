"""Rule sensitivity_profile: one program's campaign (ceiling, sampling, runs, interpolation)."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.run import profile_program

with rule_logging(snakemake):  # noqa: F821
    p, out = snakemake.params, snakemake.output  # noqa: F821
    profile_program(
        out.grid, out.runs, out.summary,
        name=snakemake.wildcards.sprog, program=dict(p.program), backend=p.backend,  # noqa: F821
        epsilon=p.epsilon, sampling=p.sampling, compare=list(p.compare), seed=p.seed,
        spare_cores=p.spare_cores, dimensions=p.dimensions, cgroup=p.cgroup, network=p.network,
        timeout_s=p.timeout_s, monitor_interval_s=p.monitor_interval_s, repeats=p.repeats,
        baseline_repeats=p.baseline_repeats, replay=p.replay,
    )
