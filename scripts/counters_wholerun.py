"""Rule counters_wholerun: one run's whole-run counts (CSV table, perf stat -x / -j without -I)
as its counter table of one interval."""

from perfcast.counters.settings import PostprocessSettings
from perfcast.counters.wholerun import wholerun_file
from perfcast.rulekit import rule_logging
from perfcast.settings import build

with rule_logging(snakemake):
    s = snakemake
    settings = build(PostprocessSettings, s.params.settings)
    wholerun_file(s.input[0], s.output[0], benchmark=s.wildcards.bench,
                  generation=s.wildcards.gen, base=settings.base_events,
                  events=settings.events, clock_ghz=s.params.clock_ghz.get(s.wildcards.gen),
                  provenance={"backend": "wholerun", "simulated": False})
