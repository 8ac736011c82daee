"""Rule sweep_run: one measured run of one configuration x iteration."""

from perfcast.rulekit import rule_logging
from perfcast.sweep.steps import run

with rule_logging(snakemake):  # noqa: F821
    s = snakemake  # noqa: F821
    run(dict(s.params.run), s.output[0], stop_marker=s.params.stop_marker,
        failed_record=s.params.failed_record)
