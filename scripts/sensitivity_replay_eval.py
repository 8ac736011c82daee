"""Rule sensitivity_replay_eval: the paper's measurements replayed, every program x epsilon."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.run import replay_evaluation

with rule_logging(snakemake):  # noqa: F821
    p, out = snakemake.params, snakemake.output  # noqa: F821
    replay_evaluation(
        snakemake.input.data, out.results, out.table, out.summary, out.cells,  # noqa: F821
        out.markdown,
        epsilons=list(p.epsilons), programs=list(p.programs) or None,
        layouts=dict(p.layouts), ceiling=p.ceiling, peaks=dict(p.peaks),
        lhs_repeats=p.lhs_repeats, seed=p.seed,
    )
