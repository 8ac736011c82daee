"""`perfcast` sub-commands of the sensitivity stage."""

from __future__ import annotations

import argparse
import json
import sys

from perfcast.settings import help_default


def register(sub: argparse._SubParsersAction) -> None:
    """Add this stage's sub-commands to ``sub``."""
    p = sub.add_parser(
        "sensitivity-eval",
        help="replay a profiling campaign on a measured grid; JSON with steps and error",
        description="Replay ceiling + sampling + sequential PCHIP on one program of a measured "
        "grid (e.g. the paper's arcp_measurements.csv) and score it against the dense truth.",
    )
    p.add_argument("--data", required=True, help="measurement table (CSV: program, cpu_cores, "
                   "mem_gb, net_code, io_mbps, metric, value)")
    p.add_argument("--program", required=True, help="program name as in the table")
    p.add_argument("--epsilon", type=float, required=True, help="binary-search threshold on |dS|")
    # left out (None), these take the schema's defaults, and are checked by it like the config
    p.add_argument("--sampling", choices=["binary", "lhs", "adaptive"],
                   help="binary recursive search, Latin hypercube at its counts, or the "
                   "budgeted adaptive sampler (over all dimensions jointly) "
                   + help_default("sensitivity", "sampling"))
    p.add_argument("--budget", type=int, metavar="RUNS",
                   help="sampling adaptive: the most grid points measured (left out: binary "
                   "search's count at --epsilon)")
    p.add_argument("--ceiling", metavar="{table4,none}",
                   help="peak usage implied by the paper's Table 4, or none (whole grid) "
                   + help_default("sensitivity", "replay.ceiling"))
    p.add_argument("--lhs-repeats", type=int,
                   help="LHS seeds averaged (sampling lhs) "
                   + help_default("sensitivity", "replay.lhs_repeats"))
    p.add_argument("--seed", type=int,
                   help="seed of the LHS campaigns " + help_default("config", "seed"))
    p.set_defaults(func=_eval)


#: the flag of each ``sensitivity`` key sensitivity-eval sets, to name flags in errors
FLAGS = {"sampling": "--sampling", "budget": "--budget", "replay.epsilons": "--epsilon",
         "replay.programs": "--program", "replay.ceiling": "--ceiling",
         "replay.lhs_repeats": "--lhs-repeats"}
#: the flag of each top-level config key it sets
CONFIG_FLAGS = {"seed": "--seed"}


def _given(options: dict) -> dict:
    """``options`` without the flags left out (None), nested mappings included: the schema
    fills those with its defaults."""
    return {k: _given(v) if isinstance(v, dict) else v for k, v in options.items()
            if v is not None}


def _eval(args: argparse.Namespace) -> int:
    from perfcast.sensitivity.evaluation import evaluate_campaign
    from perfcast.sensitivity.settings import EvaluationSettings
    from perfcast.settings import build, validate_flags

    # the same settings as the workflow's, through the same schemas (which fill the defaults);
    # a value they refuse is named as the flag it came from
    given = {"sampling": args.sampling, "budget": args.budget,
             "replay": {"epsilons": [args.epsilon], "programs": [args.program],
                        "ceiling": args.ceiling, "lhs_repeats": args.lhs_repeats}}
    section = validate_flags(_given(given), "sensitivity", FLAGS)
    top = validate_flags(_given({"seed": args.seed}), "config", CONFIG_FLAGS)
    settings = build(EvaluationSettings, {**section["replay"], "seed": top["seed"]},
                     where="sensitivity.replay")
    out = evaluate_campaign(settings, data=args.data, program=args.program,
                            epsilon=args.epsilon, sampling=section["sampling"],
                            budget=section["budget"])
    if out["failed_cells"]:  # a failed run, or a level mistyped: the user must see which
        print(f"perfcast sensitivity-eval: warning: {args.data}: {out['failed_cells']} of "
              f"{out['grid_points']} grid cells of {args.program!r} have no measurement and "
              f"count as failed runs (sensitivity 0): "
              f"{_some(out['failed_points'])}", file=sys.stderr)
    print(json.dumps(out, indent=2, sort_keys=True))
    return 0


def _some(points: list[dict], shown: int = 5) -> str:
    """The first ``shown`` points, and how many more."""
    text = ", ".join(str(p) for p in points[:shown])
    return text + (f" and {len(points) - shown} more" if len(points) > shown else "")
