"""Rule counters_figure: IPC over time, both generations, every benchmark."""

from perfcast.counters.run import ipc_figure
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):  # noqa: F821
    p = snakemake.params  # noqa: F821
    files: dict[str, dict[str, str]] = {}
    for (gen, bench), path in zip(p.runs, snakemake.input, strict=True):  # noqa: F821
        files.setdefault(bench, {})[gen] = path
    ipc_figure(files, tuple(p.gens), snakemake.output[0], p.note)  # noqa: F821
