# Stage 1: collect hardware counters (one job per generation x benchmark: one perf run per counter
# group, one after another) and post-process them into per-interval PKI / IPC tables.
# Functions: common/counters.smk.


rule counters_collect:
    input:
        collect_sources(),
    output:
        collect_outputs(),
    params:
        settings=get_collect_settings,
    wildcard_constraints:
        **RUN_WILDCARDS,
    log:
        f"{LOGS}/counters/collect/{{gen}}/{{bench}}.log",
    benchmark:
        f"{JOB_TIMINGS}/counters/collect/{{gen}}/{{bench}}.tsv"
    group:
        collect_job_group()
    threads: 1
    resources:
        **({"slurm_partition": get_collect_partition} if COLLECT_PARTITIONS else {}),
        mem_mb=500,
        runtime=collect_runtime(),
        # only when config names partitions: otherwise the profile's default partition applies
    conda:
        CONDA_ENV
    script:
        "../../scripts/counters_collect.py"


rule counters_postprocess:
    input:
        collect_outputs(),
    output:
        counters_table("{gen}", "{bench}"),
    params:
        settings=get_postprocess_settings,
    wildcard_constraints:
        **RUN_WILDCARDS,
    log:
        f"{LOGS}/counters/postprocess/{{gen}}/{{bench}}.log",
    benchmark:
        f"{JOB_TIMINGS}/counters/postprocess/{{gen}}/{{bench}}.tsv"
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
        get_counter_tables,
    output:
        report(
            f"{RESULTS}/counters/ipc_over_time.png",
            caption="../report/counters/ipc_over_time.rst",
            category="1. Counters",
        ),
    params:
        settings=get_counters_figure_settings,
    log:
        f"{LOGS}/counters/ipc_over_time.log",
    benchmark:
        f"{JOB_TIMINGS}/counters/ipc_over_time.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/counters_figure.py"


rule counters_summary:
    input:
        get_counter_tables,
    output:
        report(
            f"{RESULTS}/counters/summary.csv",
            caption="../report/counters/summary.rst",
            category="1. Counters",
        ),
    params:
        settings=get_counters_summary_settings,
    log:
        f"{LOGS}/counters/summary.log",
    benchmark:
        f"{JOB_TIMINGS}/counters/summary.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/counters_summary.py"


if COUNTERS and COUNTERS["backend"] == "wholerun":

    ruleorder: counters_wholerun > counters_postprocess

    rule counters_wholerun:
        input:
            wholerun_source(),
        output:
            counters_table("{gen}", "{bench}"),
        params:
            settings=get_wholerun_settings,
        wildcard_constraints:
            **RUN_WILDCARDS,
        log:
            f"{LOGS}/counters/wholerun/{{gen}}/{{bench}}.log",
        benchmark:
            f"{JOB_TIMINGS}/counters/wholerun/{{gen}}/{{bench}}.tsv"
        group:
            collect_job_group()
        threads: 1
        resources:
            mem_mb=500,
            runtime=10,
        conda:
            CONDA_ENV
        script:
            "../../scripts/counters_wholerun.py"
