# Stage 3: warm-up / cool-down detection and stable throughput with confidence (Pilot;
# docs/methods/warmup.md). Per workload: run the real command round after round (durably
# journalled, resumable), find each round's setup, warm-up, stable and cool-down phases, the
# stable throughput and its CI, and the WPS regression. The same phase analysis runs on the
# counters stage's traces (rule warmup_counter_phases). Functions: common/warmup.smk.


rule warmup_run:
    output:
        rounds=f"{RESULTS}/warmup/{{workload}}/rounds.parquet",
        readings=f"{RESULTS}/warmup/{{workload}}/readings.parquet",
        summary=f"{RESULTS}/warmup/{{workload}}/summary.json",
    params:
        settings=get_warmup_run_settings,
    log:
        f"{LOGS}/warmup/{{workload}}.log",
    benchmark:
        f"{JOB_TIMINGS}/warmup/{{workload}}.tsv"
    wildcard_constraints:
        workload=alternatives(warmup_workloads()),
    threads: get_warmup_threads
    resources:
        mem_mb=2000,
        runtime=get_warmup_runtime,
    conda:
        CONDA_ENV
    script:
        "../../scripts/warmup_run.py"


rule warmup_figure:
    input:
        rounds=f"{RESULTS}/warmup/{{workload}}/rounds.parquet",
        readings=f"{RESULTS}/warmup/{{workload}}/readings.parquet",
        summary=f"{RESULTS}/warmup/{{workload}}/summary.json",
    output:
        figure=report(
            f"{RESULTS}/warmup/{{workload}}/phases.png",
            caption="../report/warmup/phases.rst",
            category="3. Warm-up",
            subcategory="Workloads",
            labels={"workload": "{workload}"},
        ),
    log:
        f"{LOGS}/warmup/{{workload}}_figure.log",
    benchmark:
        f"{JOB_TIMINGS}/warmup/{{workload}}_figure.tsv"
    wildcard_constraints:
        workload=alternatives(warmup_workloads()),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/warmup_figure.py"


rule warmup_counter_phases:
    input:
        counters=counters_table("{gen}", "{bench}"),
    output:
        phases=warmup_counter_phases_path("{gen}", "{bench}"),
        summary=f"{RESULTS}/warmup/counters/{{gen}}/{{bench}}.json",
    params:
        settings=get_warmup_counter_phases_settings,
    log:
        f"{LOGS}/warmup/counters/{{gen}}/{{bench}}.log",
    benchmark:
        f"{JOB_TIMINGS}/warmup/counters/{{gen}}/{{bench}}.tsv"
    wildcard_constraints:
        gen=WARMUP_TRACE_NAME,
        bench=WARMUP_TRACE_NAME,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/warmup_counter_phases.py"


rule warmup_paper:
    input:
        summaries=expand(f"{RESULTS}/warmup/{{w}}/summary.json", w=warmup_workloads()),
        rounds=expand(f"{RESULTS}/warmup/{{w}}/rounds.parquet", w=warmup_workloads()),
        readings=expand(f"{RESULTS}/warmup/{{w}}/readings.parquet", w=warmup_workloads()),
    output:
        figure=report(
            f"{RESULTS}/paper/warmup_phases.png",
            caption="../report/warmup/paper_phases.rst",
            category="3. Warm-up",
            subcategory="Paper",
        ),
        table=f"{RESULTS}/paper/warmup_throughput.csv",
    params:
        settings=warmup_paper_settings(),
    log:
        f"{LOGS}/paper/warmup.log",
    benchmark:
        f"{JOB_TIMINGS}/paper/warmup.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/warmup_paper.py"


rule warmup_paper_counters:
    input:
        summaries=[f"{RESULTS}/warmup/counters/{g}/{b}.json" for g, b in warmup_counter_traces()],
    output:
        table=f"{RESULTS}/paper/warmup_counters_stable_ipc.csv",
    log:
        f"{LOGS}/paper/warmup_counters.log",
    benchmark:
        f"{JOB_TIMINGS}/paper/warmup_counters.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/warmup_paper_counters.py"
