"""``perfcast`` sub-commands of the counters-to-prediction half.

Building the parser imports nothing heavy: pandas, numpy and the stage's modules are imported
by the sub-command that runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("postprocess", help="perf -I -x, CSVs of one run's groups -> Parquet")
    p.add_argument("groups", nargs="+", help="one perf CSV per counter group, reference first")
    p.add_argument("--events", required=True, help="comma-separated counters to keep as PKI")
    p.add_argument("--instructions-event", default="instructions")
    p.add_argument("--cycles-event", default="cycles")
    p.add_argument("--join", choices=["instructions", "row"], default="instructions")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=_postprocess)

    p = sub.add_parser("align", help="map old- to new-generation intervals, IPC ratio per pair")
    p.add_argument("old", help="post-processed counters of the old generation (Parquet)")
    p.add_argument("new", help="post-processed counters of the new generation (Parquet)")
    p.add_argument("--method", choices=["exact", "dtw"], default="exact")
    p.add_argument("--radius", type=int, default=None, help="Sakoe-Chiba radius (dtw)")
    p.add_argument("-o", "--output", required=True, help="mapped pairs (Parquet)")
    p.set_defaults(func=_align)

    p = sub.add_parser("predict", help="new-generation IPC and runtime from old-gen counters")
    p.add_argument("counters", help="post-processed counters of the old generation (Parquet)")
    p.add_argument("--model", required=True, help="knn.joblib written by the train rule")
    p.add_argument("--clock-ghz", type=float, default=None, help="new generation's clock")
    p.add_argument("-o", "--output", required=True, help="per-interval prediction (Parquet)")
    p.set_defaults(func=_predict)


def _postprocess(args: argparse.Namespace) -> int:
    from perfcast.counters.events import BaseEvents
    from perfcast.counters.postprocess import postprocess
    from perfcast.io import write_parquet

    events = [e for e in args.events.split(",") if e]
    table = postprocess(args.groups, events, BaseEvents(args.instructions_event,
                                                        args.cycles_event), args.join)
    write_parquet(table, args.output, metadata={"join": args.join, "groups": args.groups})
    print(json.dumps({"intervals": len(table), "output": args.output}))
    return 0


def _align(args: argparse.Namespace) -> int:
    from perfcast.io import write_parquet
    from perfcast.model.align import align_runs
    from perfcast.model.run import read_counters

    old, new = read_counters(args.old), read_counters(args.new)
    pairs, cost = align_runs(old, new, args.method, args.radius)
    write_parquet(pairs, args.output, metadata={"method": args.method, "dtw_cost": cost,
                                                "old": args.old, "new": args.new})
    print(json.dumps({"pairs": len(pairs), "dtw_cost": cost, "method": args.method,
                      "ipc_ratio_mean": float(pairs["ipc_ratio"].mean()),
                      "output": args.output}))
    return 0


def _predict(args: argparse.Namespace) -> int:
    from perfcast.model.run import predict_files

    summary = args.output.rsplit(".", 1)[0] + ".json"
    predict_files(args.model, args.counters, args.output, summary,
                  bench=Path(args.counters).stem,
                  clock_new_ghz=args.clock_ghz)
    print(open(summary).read().strip())
    return 0
