"""The IPC model on the default configuration's simulated data: every candidate family and the
chosen one, leave one benchmark out.

The default config's benchmarks are simulated on both generations (``simulate.scale`` from the
command line: 1.0 is the default run, 0.15 the tiny configs' length), post-processed, aligned,
and evaluated by :func:`perfcast.model.evaluation.evaluate_lobo` at the config's model settings.
Prints each benchmark's errors and the medians: chosen family, constant ratio (the baseline),
ridge and KNN.

    .venv/bin/python benchmarks/bench_model_default.py [SCALE]

Writes benchmarks/out/model_default.json.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

from perfcast.counters.collect import collect_simulated  # noqa: E402
from perfcast.counters.events import BaseEvents, make_groups  # noqa: E402
from perfcast.counters.postprocess import postprocess  # noqa: E402
from perfcast.counters.settings import PostprocessSettings, collect_settings  # noqa: E402
from perfcast.model.align import align_runs  # noqa: E402
from perfcast.model.evaluation import evaluate_lobo  # noqa: E402
from perfcast.model.settings import AlignSettings, KnnSettings  # noqa: E402
from perfcast.model.trainset import benchmark_rows, build_trainset, feature_columns  # noqa: E402
from perfcast.settings import build, validate  # noqa: E402

ROOT = Path(__file__).parents[1]


def main(scale: float) -> None:
    cfg = validate(yaml.safe_load((ROOT / "config" / "config.yaml").read_text()), "config")
    c = cfg["counters"]
    c["simulate"]["scale"] = scale
    base = build(BaseEvents, c["base_events"])
    groups = make_groups(c["events"], c["group_size"], base)
    old, new = c["generations"]["old"], c["generations"]["new"]
    runs: dict[str, dict[str, pd.DataFrame]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for bench in c["benchmarks"]:
            for gen in (old, new):
                files = []
                for k, g in enumerate(groups):
                    f = Path(tmp) / gen / bench / f"group{k}.csv"
                    collect_simulated(collect_settings(c, generation=gen, benchmark=None, events=g,
                                                       programs={}, seed=cfg["seed"]),
                                      f, benchmark=bench, group=k)
                    files.append(f)
                runs.setdefault(gen, {})[bench] = postprocess(files,
                                                              build(PostprocessSettings, c))
    align = build(AlignSettings, cfg["align"])
    train = build_trainset([benchmark_rows(b, runs[old][b], align_runs(runs[old][b],
                                                                       runs[new][b], align)[0])
                            for b in c["benchmarks"]])
    t0 = time.perf_counter()
    ev = evaluate_lobo(train, runs[old], runs[new], feature_columns(train),
                       build(KnnSettings, cfg["model"]), c["clock_ghz"][new], label="all")
    seconds = time.perf_counter() - t0
    cols = ["cycles_error_pct", "baseline_cycles_error_pct", "ridge_cycles_error_pct",
            "knn_cycles_error_pct", "instruction_mismatch_pct"]
    print(ev[["benchmark", "family", *cols]].round(2).to_string(index=False))
    med = {c: float(ev[c].abs().median()) for c in cols}
    print(f"\nscale {scale}: {len(train)} training rows, evaluation {seconds:.0f} s")
    print(f"median |error| of total cycles: chosen {med['cycles_error_pct']:.2f} % "
          f"({ev['family'].value_counts().to_dict()}), constant ratio "
          f"{med['baseline_cycles_error_pct']:.2f} %, ridge {med['ridge_cycles_error_pct']:.2f} "
          f"%, KNN {med['knn_cycles_error_pct']:.2f} %; covered "
          f"{int(ev['cycles_covered'].sum())}/{len(ev)}")
    save("model_default", {"scale": scale, "medians": med, "rows": len(train),
                           "families": ev["family"].value_counts().to_dict()})


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
