"""Rule sweep_run: one measured run of one configuration x iteration."""

from perfcast.rulekit import rule_logging
from perfcast.sweep.rules import run

with rule_logging(snakemake):
    s = snakemake
    run(dict(s.params.settings), s.output[0], stop_marker=s.params.stop_marker,
        failed_record=s.params.failed_record)
