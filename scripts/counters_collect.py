"""Rule collect: one perf CSV of one group run."""

from perfcast.counters.run import collect_group
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):  # noqa: F821
    p, w = snakemake.params, snakemake.wildcards  # noqa: F821
    collect_group(
        p.backend, snakemake.output[0],  # noqa: F821
        bench=w.bench, gen=w.gen, role=p.role, group=int(w.group), events=list(p.events),
        interval_ms=p.interval_ms, base=tuple(p.base), seed=p.seed, clock_ghz=p.clock_ghz,
        simulate=p.simulate, command=p.command, env=p.env, perf=p.perf, timeout_s=p.timeout_s,
        source=snakemake.input.source or None,  # noqa: F821
    )
