"""The IPC model on real cross-machine counters: SPEC CPU whole runs of cyyself/spec-cpu-db.

The public repository https://github.com/cyyself/spec-cpu-db (no licence: read here, never
shipped with perfcast) holds one whole-run ``perf stat`` per SPEC CPU2006 / CPU2017 benchmark
and build on Kunpeng 920, Apple M1, Graviton4, Cobalt 100, CIX P1 and Zen 5 (AMD Ryzen AI Max+
395): instructions, cycles and, on some machines, branches, branch misses, conditional-branch
misses and front-end / back-end stall cycles.

Each benchmark run is one interval. For every pair of machines with builds of the same suite,
compiler and optimisation flags (``-march`` / ``-mcpu`` variants and ``nosve`` aside: one build
per machine, the one with the fewest extra flags), older machine -> newer, the script writes the
runs as perfcast's whole-run CSV table, reads it back with :mod:`perfcast.counters.wholerun`
and scores leave one benchmark out with :func:`perfcast.model.evaluation.evaluate_lobo` at the
model schema's defaults (new cycles = old cycles / predicted ratio). Features: every counter of
the old machine's build besides instructions and cycles, per kilo-instruction. A benchmark
whose run failed its output check (an ``ERROR`` note) or lacks a count is left out.

Prints, per pair: benchmarks, median |error| of total cycles of the constant ratio (median of
the training benchmarks' ratios), the KNN, the ridge and the chosen model, how often each family
was chosen, the 90 % interval coverage, and the median |old/new instruction mismatch|.

    SPEC_CPU_DB=/path/to/spec-cpu-db .venv/bin/python benchmarks/bench_spec_cpu_db.py [--db PATH]
        [--pairs SUBSTRING ...]

Writes benchmarks/out/spec_cpu_db.json (the table) and prints it as Markdown. Without a copy
of the repository it says so and exits 0.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

from perfcast.counters.settings import BaseEvents  # noqa: E402
from perfcast.counters.wholerun import read_wholerun  # noqa: E402
from perfcast.model.align import align_runs  # noqa: E402
from perfcast.model.evaluation import evaluate_lobo  # noqa: E402
from perfcast.model.settings import AlignSettings, KnnSettings  # noqa: E402
from perfcast.model.trainset import benchmark_rows, build_trainset, feature_columns  # noqa: E402
from perfcast.settings import from_section  # noqa: E402

#: machines, oldest first (the direction of every pair)
MACHINES = {
    "huawei-kunpeng920": "Kunpeng 920",
    "apple-m1": "Apple M1",
    "azure-cobalt100": "Cobalt 100",
    "aws-graviton4": "Graviton4",
    "cix-p1-a720-2.5G": "CIX P1",
    "amd-ai-max+-395": "Zen 5",
}
#: perf's event names on the machines -> one name per counter
EVENTS = {
    "instructions": "instructions", "inst_retired": "instructions",
    "cycles": "cycles", "cpu_cycles": "cycles",
    "branch-instructions": "branches", "branches": "branches", "inst_branch": "branches",
    "branch-misses": "branch_misses", "br_mis_pred_retired": "branch_misses",
    "branch_mispred_nonspec": "branch_misses",
    "branch_cond_mispred_nonspec": "cond_branch_misses",
    "stalled-cycles-frontend": "stall_frontend", "stalled-cycles-backend": "stall_backend",
}
#: build-name tokens that only pick the target ISA level (ignored when pairing builds)
ARCH_TOKENS = re.compile(r"^(armv[0-9.]+(-a)?|march|x86_64|v4|nosve|a|rate1|base|armv8|armv9\.2)$")
_LINE = re.compile(r"^\s*([0-9][0-9,]*)\s+(\S+)")
_TIME = re.compile(r"^\s*([0-9.]+)\s+seconds time elapsed")


def parse_perf_text(path: Path) -> dict[str, float]:
    """perf stat's human-readable whole-run table: ``{counter: count}`` (events of several PMUs
    summed, e.g. Apple's firestorm and icestorm cores) and ``time_s``."""
    out: dict[str, float] = {}
    for line in path.read_text(errors="replace").splitlines():
        if m := _TIME.match(line):
            out["time_s"] = float(m.group(1))
        elif m := _LINE.match(line):
            name = m.group(2).strip("/").split("/")[-1].split(":")[0]  # PMU and :u dropped
            if name in EVENTS:
                key = EVENTS[name]
                out[key] = out.get(key, 0.0) + float(m.group(1).replace(",", ""))
    return out


def build_key(name: str) -> tuple[str, frozenset[str], int]:
    """``(compiler, optimisation flags, extra tokens)`` of a build folder name:
    ``gcc2272cd2508-o3-lto`` -> ``("gcc-2272cd2508", {o3, lto}, 0)``; GCC 14.2.x is one
    compiler."""
    tokens = name.split("-")
    first = tokens[0]
    if first.startswith("gcc") and re.fullmatch(r"gcc[0-9a-f]{7,40}", first):
        compiler, rest = f"gcc-{first[3:]}", tokens[1:]
    elif re.fullmatch(r"(gcc)?14\.2\.[0-9]", first):
        compiler, rest = "gcc-14", [t for t in tokens[1:] if not re.fullmatch(r"[0-9]+", t)]
    else:
        return first, frozenset(), 0
    flags, extra = set(), 0
    for t in rest:
        if t in ("o3", "lto", "noccmp", "notree", "vectorize"):
            flags.add(t)
        elif ARCH_TOKENS.match(t):
            extra += 1
        else:
            flags.add(t)
    return compiler, frozenset(flags), extra


def load_builds(db: Path) -> dict[tuple[str, str, str], dict[str, dict[str, float]]]:
    """``{(suite, machine, build): {benchmark: counts}}`` of every run in the repository."""
    builds = {}
    for suite in ("2006", "2017"):
        for mdir in sorted((db / suite).glob("*/")):
            if mdir.name not in MACHINES:
                continue
            for bdir in sorted(p for p in mdir.iterdir() if p.is_dir()):
                failed = set()
                if (bdir / "ERROR").exists():
                    failed = set(re.findall(r"\d{3}\.\w+", (bdir / "ERROR").read_text()))
                runs = {}
                for sub in ("perf", "perf_bp", "bp_result"):
                    for f in sorted((bdir / sub).glob("*")) if (bdir / sub).is_dir() else []:
                        counts = parse_perf_text(f)
                        if f.name not in failed and counts.get("instructions") and \
                                counts.get("cycles"):
                            runs[f.name] = counts
                if runs:
                    builds[(suite, mdir.name, bdir.name)] = runs
    return builds


def pairs(builds) -> list[tuple[tuple[str, str, str], tuple[str, str, str]]]:
    """Old -> new build pairs: same suite, compiler and flags, one build per machine (the fewest
    extra tokens, then by name), machines in :data:`MACHINES` order."""
    chosen: dict[tuple, tuple] = {}
    for key in sorted(builds):
        suite, machine, build = key
        compiler, flags, extra = build_key(build)
        slot = (suite, compiler, flags, machine)
        if slot not in chosen or extra < build_key(chosen[slot][2])[2]:
            chosen[slot] = key
    order = list(MACHINES)
    out = []
    for (suite, compiler, flags, machine), key in sorted(chosen.items(), key=str):
        for (s2, c2, f2, m2), key2 in sorted(chosen.items(), key=str):
            if (s2, c2, f2) == (suite, compiler, flags) and order.index(m2) > order.index(machine):
                out.append((key, key2))
    return sorted(out, key=lambda p: (p[0][0], order.index(p[0][1]), order.index(p[1][1]),
                                      p[0][2]))


def evaluate_pair(old: dict, new: dict, workdir: Path) -> tuple[pd.DataFrame, list[str]]:
    """Leave one benchmark out on one pair, through perfcast's whole-run table reader."""
    benches = sorted(set(old) & set(new))
    counters = sorted(set.intersection(*(set(old[b]) for b in benches))
                      - {"instructions", "cycles", "time_s"})
    rows = [{"benchmark": b, "machine": m, **{k: runs[b].get(k, np.nan) for k in
                                              ("instructions", "cycles", "time_s", *counters)}}
            for b in benches for m, runs in (("old", old), ("new", new))]
    table = workdir / "runs.csv"
    pd.DataFrame(rows).to_csv(table, index=False)
    base = BaseEvents("instructions", "cycles")
    tables = {m: {b: read_wholerun(table, benchmark=b, machine=m, base=base, events=counters,
                                   clock_ghz=None)[0] for b in benches} for m in ("old", "new")}
    align = from_section(AlignSettings, {}, "align")
    train = build_trainset([benchmark_rows(b, tables["old"][b], align_runs(
        tables["old"][b], tables["new"][b], align)[0]) for b in benches])
    # the schema's defaults for whole-run tables, as the workflow uses them
    settings = from_section(KnnSettings, {} if counters else {"whole_run_families": ["constant"]},
                            "model").for_tables(whole_run=True)
    ev = evaluate_lobo(train, tables["old"], tables["new"], feature_columns(train), settings,
                       None, label="all")
    if counters and "knn" not in settings.families:  # the KNN alone, for comparison
        knn = evaluate_lobo(train, tables["old"], tables["new"], feature_columns(train),
                            dataclasses.replace(settings, families=("knn",)), None, label="all")
        ev["knn_cycles_error_pct"] = ev["benchmark"].map(
            knn.set_index("benchmark")["cycles_error_pct"])
    return ev, counters


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", default=os.environ.get("SPEC_CPU_DB"),
                    help="a local copy (work tree) of github.com/cyyself/spec-cpu-db "
                         "(default: $SPEC_CPU_DB)")
    ap.add_argument("--pairs", nargs="*", default=[],
                    help="only pairs whose description contains one of these substrings")
    args = ap.parse_args()
    if not args.db or not (Path(args.db) / "2006").is_dir():
        print("bench_spec_cpu_db: no local copy of github.com/cyyself/spec-cpu-db (set "
              "SPEC_CPU_DB or --db to its work tree); skipped")
        return
    builds = load_builds(Path(args.db))
    results = []
    for old_key, new_key in pairs(builds):
        desc = (f"CPU{old_key[0]} {MACHINES[old_key[1]]} {old_key[2]} -> "
                f"{MACHINES[new_key[1]]} {new_key[2]}")
        if args.pairs and not any(p in desc for p in args.pairs):
            continue
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            ev, counters = evaluate_pair(builds[old_key], builds[new_key], Path(tmp))
        med = {c: float(ev[f"{c}_cycles_error_pct"].abs().median())
               for c in ("constant", "ridge", "knn") if ev[f"{c}_cycles_error_pct"].notna().any()}
        row = {
            "pair": desc, "suite": old_key[0], "old": old_key[1], "new": new_key[1],
            "old_build": old_key[2], "new_build": new_key[2], "benchmarks": len(ev),
            "counters": counters,
            "constant_pct": med["constant"], "knn_pct": med.get("knn", np.nan),
            "ridge_pct": med.get("ridge", np.nan),
            "chosen_pct": float(ev["cycles_error_pct"].abs().median()),
            "chosen_families": ev["family"].value_counts().to_dict(),
            "covered": int(ev["cycles_covered"].sum()),
            "mismatch_pct": float(ev["instruction_mismatch_pct"].abs().median()),
            "per_instruction_pct": float(ev["cycles_per_instruction_error_pct"].abs().median()),
            "seconds": round(time.perf_counter() - t0, 1),
        }
        row["chosen_minus_constant"] = row["chosen_pct"] - row["constant_pct"]
        results.append(row)
        print(f"{desc}: constant {row['constant_pct']:.1f} knn {row['knn_pct']:.1f} ridge "
              f"{row['ridge_pct']:.1f} chosen {row['chosen_pct']:.1f} "
              f"{row['chosen_families']} ({row['seconds']} s)", flush=True)
    save("spec_cpu_db", {"pairs": results})
    print("\n| old -> new | benchmarks | counters | constant ratio | KNN | ridge | chosen "
          "(families) | chosen - constant | 90 % intervals covered | instruction mismatch |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        fams = ", ".join(f"{k} {v}" for k, v in sorted(r["chosen_families"].items()))
        print(f"| {r['pair']} | {r['benchmarks']} | {', '.join(r['counters']) or '-'} | "
              f"{r['constant_pct']:.1f} % | {r['knn_pct']:.1f} % | {r['ridge_pct']:.1f} % | "
              f"{r['chosen_pct']:.1f} % ({fams}) | {r['chosen_minus_constant']:+.1f} | "
              f"{r['covered']}/{r['benchmarks']} | {r['mismatch_pct']:.1f} % |")
    worst = max((r["chosen_minus_constant"] for r in results), default=float("nan"))
    print(f"\nlargest chosen - constant: {worst:+.2f} points over {len(results)} pairs")


if __name__ == "__main__":
    main()
