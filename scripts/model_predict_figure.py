"""Rule model_predict_figure: an old-only benchmark's predicted new-generation IPC over time."""

import json
from pathlib import Path

from perfcast.io import read_parquet
from perfcast.model.plots import predicted_ipc_over_time
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):
    i = snakemake.input
    predicted_ipc_over_time(read_parquet(i.table), json.loads(Path(i.summary).read_text()),
                            Path(snakemake.output[0]), snakemake.params.note)
