# Stage 1: collect hardware counters (one perf run per generation x benchmark x counter group)
# and post-process them into per-interval PKI / IPC tables. Functions: common/counters.smk.

if stage_enabled("counters"):

    wildcard_constraints:
        gen="|".join(map(re.escape, [OLD, NEW])),
        bench=r"[A-Za-z0-9_.\-]+",
        group=r"\d+",

rule collect:
    input:
        source=_import_source,
    output:
        f"{RESULTS}/raw/{{gen}}/{{bench}}/group{{group}}.csv",
    params:
        backend=C.get("backend"),
        events=lambda wc: GROUPS[int(wc.group)],
        role=lambda wc: "old" if wc.gen == OLD else "new",
        interval_ms=C.get("interval_ms"),
        base=BASE.names,
        seed=config["seed"],
        clock_ghz=lambda wc: C.get("clock_ghz", {}).get(wc.gen),
        simulate=C.get("simulate"),
        command=_collect_command,
        env=_collect_env,
        perf=PERF.get("binary"),
        timeout_s=PERF.get("timeout_s"),
    log:
        f"{LOGS}/counters/collect/{{gen}}/{{bench}}/group{{group}}.log",
    benchmark:
        f"{BENCH}/counters/collect/{{gen}}/{{bench}}/group{{group}}.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=lambda wc: 10 if C.get("backend") != "perf" else int(PERF["timeout_s"] / 60) + 5,
        # only when config names partitions: otherwise the profile's default partition applies
        **({"slurm_partition": lambda wc: PARTITIONS[wc.gen]} if PARTITIONS else {}),
    conda:
        CONDA_ENV
    script:
        "../../scripts/counters_collect.py"


rule postprocess:
    input:
        lambda wc: [
            f"{RESULTS}/raw/{wc.gen}/{wc.bench}/group{k}.csv" for k in range(len(GROUPS))
        ],
    output:
        f"{RESULTS}/counters/{{gen}}/{{bench}}.parquet",
    params:
        events=C.get("events"),
        base=BASE.names,
        join=C.get("join"),
        meta=lambda wc: {
            "generation": wc.gen,
            "benchmark": wc.bench,
            "backend": C.get("backend"),
            "simulated": SIMULATED,
            "interval_ms": C.get("interval_ms"),
        },
    log:
        f"{LOGS}/counters/postprocess/{{gen}}/{{bench}}.log",
    benchmark:
        f"{BENCH}/counters/postprocess/{{gen}}/{{bench}}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/counters_postprocess.py"


rule counters_figure:
    input:
        lambda wc: [f"{RESULTS}/counters/{g}/{b}.parquet" for g, b in counters_runs()],
    output:
        report(
            f"{RESULTS}/counters/ipc_over_time.png",
            caption="../report/counters/ipc_over_time.rst",
            category="1. Counters",
        ),
    params:
        runs=lambda wc: counters_runs(),
        gens=lambda wc: (OLD, NEW),
        note="SIMULATED data" if SIMULATED else "",
    log:
        f"{LOGS}/counters/ipc_over_time.log",
    benchmark:
        f"{BENCH}/counters/ipc_over_time.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/counters_figure.py"
