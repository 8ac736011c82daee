"""``perfcast`` sub-commands of the counters-to-prediction half.

Each calls the function its workflow rule calls (:mod:`perfcast.counters.rules`,
:mod:`perfcast.model.rules`), with settings built from its flags by
:func:`perfcast.settings.from_section`: the same schema checks them and fills the flags left
out, and the files carry the same metadata as the workflow's.

Building the parser imports nothing heavy: pandas, numpy and the stage's modules are imported
by the sub-command that runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from perfcast.settings import help_default

#: the schema of ``perfcast postprocess``'s flags
POSTPROCESS = "counters_postprocess"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("postprocess", help="perf -I -x, CSVs of one run's groups -> Parquet")
    p.add_argument("groups", nargs="+", help="one perf CSV per counter group, reference first")
    p.add_argument("--events", required=True, help="comma-separated counters to keep as PKI "
                   "(as perf's -e: a comma inside a PMU's slashes, cha/event=0x34,umask=0x1/, "
                   "belongs to the event)")
    p.add_argument("--instructions-event", help="the event counting instructions "
                   + help_default(POSTPROCESS, "base_events.instructions"))
    p.add_argument("--cycles-event", help="the event counting cycles "
                   + help_default(POSTPROCESS, "base_events.cycles"))
    p.add_argument("--join", choices=["instructions", "row"],
                   help="how group runs are joined " + help_default(POSTPROCESS, "join"))
    p.add_argument("--separator", help="perf's -x separator, auto: detected "
                   + help_default(POSTPROCESS, "read.separator"))
    p.add_argument("--select", help="comma-separated ids (shell patterns: CPU[0-3], S0-*) whose "
                   "rows are summed in -A / --per-* files "
                   + help_default(POSTPROCESS, "read.select", lambda v: ",".join(v) or "all"))
    p.add_argument("--run-tolerance", type=float, help="largest relative difference of total "
                   "instructions between group runs, when the instructions event is a hardware "
                   "count " + help_default(POSTPROCESS, "run_tolerance"))
    p.add_argument("--software-run-tolerance", type=float, help="the same where a software "
                   "event (task-clock...) stands in for instructions; the larger applies "
                   + help_default(POSTPROCESS, "software_run_tolerance"))
    p.add_argument("--coverage-tolerance", type=float, help="the largest part of the program "
                   "a group run may miss, judged by its cycle trace against the longest run's "
                   + help_default(POSTPROCESS, "coverage_tolerance"))
    p.add_argument("--min-pct-running", type=float, help="flag intervals where a counter ran "
                   "less of the time, in per cent " + help_default(POSTPROCESS, "min_pct_running"))
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=_postprocess)

    p = sub.add_parser("align", help="map old- to new-generation intervals, IPC ratio per pair")
    p.add_argument("old", help="post-processed counters of the old generation (Parquet)")
    p.add_argument("new", help="post-processed counters of the new generation (Parquet)")
    p.add_argument("--method", choices=["exact", "dtw"],
                   help="exact: the DTW optimum in O(n + m); dtw: tslearn's dtw_path "
                   + help_default("align", "method"))
    p.add_argument("--radius", type=int, default=None, help="Sakoe-Chiba radius (dtw only) "
                   + help_default("align", "sakoe_chiba_radius",
                                  lambda v: "full DTW" if v is None else str(v)))
    p.add_argument("--instruction-tolerance", type=float, help="largest relative difference of "
                   "the runs' total instructions " + help_default("align", "instruction_tolerance"))
    p.add_argument("-o", "--output", required=True, help="mapped pairs (Parquet)")
    p.set_defaults(func=_align)

    p = sub.add_parser("predict", help="new-generation IPC and runtime from old-gen counters")
    p.add_argument("counters", help="post-processed counters of the old generation (Parquet)")
    p.add_argument("--model", required=True,
                   help="the model file the train rule writes (results/model/model.parquet: "
                   "the chosen family, constant, ridge or KNN): "
                   "Parquet rows and parameters, refitted on load; nothing in it is executed")
    p.add_argument("--clock-ghz", type=float, default=None, help="new generation's clock "
                   "(checked as the config's counters.clock_ghz)")
    p.add_argument("--ipc-range", type=float, nargs=2, default=None, metavar=("LOW", "HIGH"),
                   help="plausible IPC " + help_default("predict", "ipc_range",
                                                        lambda v: f"{v[0]} {v[1]}"))
    p.add_argument("-o", "--output", required=True, help="per-interval prediction (Parquet)")
    p.set_defaults(func=_predict)


def _given(**values: object) -> dict:
    """The flags given (the schema fills those left out)."""
    return {k: v for k, v in values.items() if v is not None}


def _postprocess(args: argparse.Namespace) -> int:
    from perfcast.cli import require_new_output
    from perfcast.counters.events import split_event_list
    from perfcast.counters.rules import postprocess_files
    from perfcast.counters.settings import PostprocessRunSettings, PostprocessSettings
    from perfcast.io import parquet_metadata
    from perfcast.settings import from_section

    require_new_output(args.output, args.groups)

    base = _given(instructions=args.instructions_event, cycles=args.cycles_event)
    read = _given(separator=args.separator,
                  select=[i for i in args.select.split(",") if i] if args.select else None)
    section = _given(events=split_event_list(args.events), join=args.join,
                     base_events=base or None, read=read or None,
                     run_tolerance=args.run_tolerance,
                     software_run_tolerance=args.software_run_tolerance,
                     coverage_tolerance=args.coverage_tolerance,
                     min_pct_running=args.min_pct_running)
    settings = PostprocessRunSettings(
        postprocess=from_section(PostprocessSettings, section, POSTPROCESS), provenance=None)
    table = postprocess_files(settings, args.groups, args.output)
    print(json.dumps({"intervals": len(table),
                      "multiplexed_intervals": int(table["multiplexed"].sum()),
                      "unverified_runs": parquet_metadata(args.output)["unverified_runs"],
                      "output": args.output}))
    return 0


def _align(args: argparse.Namespace) -> int:
    from perfcast.cli import require_new_output
    from perfcast.errors import InputError
    from perfcast.model.rules import align_files
    from perfcast.model.settings import AlignRunSettings, AlignSettings
    from perfcast.settings import from_section, schema_default

    require_new_output(args.output, [args.old, args.new])
    method = args.method or schema_default("align", "method")
    if args.radius is not None and method != "dtw":  # exact takes no band: it would be ignored
        raise InputError(None, f"--radius {args.radius} applies to --method dtw only; the "
                         f"--method is {method}" + ("" if args.method else " (the default)"),
                         expected="--method dtw with --radius, or no --radius (exact finds the "
                                  "unconstrained optimum and takes no band)")

    align = from_section(AlignSettings, _given(
        method=args.method, sakoe_chiba_radius=args.radius,
        instruction_tolerance=args.instruction_tolerance), "align")
    settings = AlignRunSettings(align=align, benchmark=Path(args.old).stem,
                                generations=("old", "new"))
    pairs, cost = align_files(settings, args.old, args.new, args.output, None)
    print(json.dumps({"pairs": len(pairs), "dtw_cost": cost, "method": align.method,
                      "ipc_ratio_mean": float(pairs["ipc_ratio"].mean()),
                      "output": args.output}))
    return 0


def _predict(args: argparse.Namespace) -> int:
    from perfcast.cli import require_new_output
    from perfcast.model.rules import predict_files
    from perfcast.model.settings import PredictRunSettings, PredictSettings
    from perfcast.settings import check_value, from_section

    if args.clock_ghz is not None:
        check_value(args.clock_ghz, "counters", "/properties/clock_ghz/additionalProperties",
                    flag="--clock-ghz", key="counters.clock_ghz.<generation>")
    settings = PredictRunSettings(
        predict=from_section(PredictSettings, _given(ipc_range=args.ipc_range), "predict"),
        benchmark=Path(args.counters).stem, clock_new_ghz=args.clock_ghz)
    summary = str(Path(args.output).with_suffix(".json"))
    require_new_output(args.output, [args.counters, args.model])
    require_new_output(summary, [args.counters, args.model, args.output],
                       flag="the summary (-o with .json) of -o")
    predict_files(settings, args.model, args.counters, args.output, summary)
    print(Path(summary).read_text().strip())
    return 0
