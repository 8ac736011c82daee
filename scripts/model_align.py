"""Rule model_align: map old- to new-generation intervals on cumulative instructions."""

from perfcast.model.rules import align_files
from perfcast.model.settings import AlignSettings
from perfcast.rulekit import rule_logging
from perfcast.settings import build

with rule_logging(snakemake):
    s = snakemake
    align_files(s.input.old, s.input.new, s.output.pairs, s.output.figure,
                build(AlignSettings, s.params.settings), benchmark=s.wildcards.bench,
                generations=tuple(s.params.generations))
