"""Rule counters_wholerun: one run's whole-run counts (CSV table, perf stat -x / -j without -I)
as its counter table of one interval."""

from perfcast.counters.settings import WholerunSettings
from perfcast.counters.wholerun import wholerun_file
from perfcast.rulekit import rule_logging, rule_settings

with rule_logging(snakemake):
    wholerun_file(rule_settings(snakemake, WholerunSettings), source=snakemake.input[0],
                  out=snakemake.output[0])
