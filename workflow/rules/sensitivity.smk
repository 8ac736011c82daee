# Stage 4: resource sensitivity (Wang et al. 2017; docs/methods/sensitivity.md). Per program:
# ceiling from a monitored unrestricted run, binary recursive sampling, the Cartesian product of
# the chosen levels measured under cgroup limits (or replayed), sequential 1-D PCHIP for the
# rest. Plus the replay evaluation on the paper's own measurements, written to results/paper/:
# the authors' raw data.zip is downloaded (a local rule: compute nodes often have no network),
# checked against its sha256 and converted into one table, unless replay.source names local
# copies. Each rule's settings are one `settings` param; functions: common/sensitivity.smk.


rule sensitivity_profile:
    input:
        data=get_sensitivity_profile_data,
    output:
        grid=f"{RESULTS}/sensitivity/{{program}}.parquet",
        runs=f"{RESULTS}/sensitivity/{{program}}.runs.parquet",
        summary=f"{RESULTS}/sensitivity/{{program}}.json",
    wildcard_constraints:
        program=alternatives(sensitivity_programs()),
    params:
        settings=get_sensitivity_profile_settings,
    log:
        f"{LOGS}/sensitivity/profile/{{program}}.log",
    benchmark:
        f"{JOB_TIMINGS}/sensitivity/profile/{{program}}.tsv"
    # a profiling campaign measures how the program runs with less CPU: it must not share the
    # machine with other jobs, so it takes every core Snakemake was given
    threads: workflow.cores
    resources:
        mem_mb=1000,
        runtime=120,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_profile.py"


rule sensitivity_figure:
    input:
        grid=f"{RESULTS}/sensitivity/{{program}}.parquet",
        summary=f"{RESULTS}/sensitivity/{{program}}.json",
    output:
        report(
            f"{RESULTS}/sensitivity/figures/{{program}}.png",
            caption="../report/sensitivity/profile.rst",
            category="4. Resource sensitivity",
            subcategory="profiles",
            labels={"program": "{program}"},
        ),
    wildcard_constraints:
        program=alternatives(sensitivity_programs()),
    log:
        f"{LOGS}/sensitivity/figure/{{program}}.log",
    benchmark:
        f"{JOB_TIMINGS}/sensitivity/figure/{{program}}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_figure.py"


rule sensitivity_summary:
    input:
        expand(f"{RESULTS}/sensitivity/{{program}}.json", program=sensitivity_programs()),
    output:
        table=f"{RESULTS}/sensitivity/summary.parquet",
        csv=report(
            f"{RESULTS}/sensitivity/summary.csv",
            caption="../report/sensitivity/profiles_summary.rst",
            category="4. Resource sensitivity",
            subcategory="profiles",
        ),
    log:
        f"{LOGS}/sensitivity/summary.log",
    benchmark:
        f"{JOB_TIMINGS}/sensitivity/summary.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_summary.py"


rule sensitivity_arcp_fetch:
    input:
        zip=get_sensitivity_arcp_zip,
    output:
        f"{SENSITIVITY_DATA_DIR}/raw_data.zip",
    params:
        settings=sensitivity_arcp_fetch_settings(),
    log:
        f"{LOGS}/sensitivity/arcp_fetch.log",
    benchmark:
        f"{JOB_TIMINGS}/sensitivity/arcp_fetch.tsv"
    localrule: True
    threads: 1
    resources:
        mem_mb=200,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_arcp_fetch.py"


rule sensitivity_arcp_table:
    input:
        f"{SENSITIVITY_DATA_DIR}/raw_data.zip",
    output:
        f"{SENSITIVITY_DATA_DIR}/arcp_measurements.csv",
    log:
        f"{LOGS}/sensitivity/arcp_table.log",
    benchmark:
        f"{JOB_TIMINGS}/sensitivity/arcp_table.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_arcp_table.py"


rule sensitivity_replay_eval:
    input:
        data=sensitivity_replay_table(),
    output:
        results=f"{RESULTS}/paper/sensitivity_eval.parquet",
        cells=f"{RESULTS}/paper/sensitivity_cells.parquet",
        table=report(
            f"{RESULTS}/paper/sensitivity_table.csv",
            caption="../report/sensitivity/table.rst",
            category="4. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
        markdown=f"{RESULTS}/paper/sensitivity_table.md",
        summary=report(
            f"{RESULTS}/paper/sensitivity_summary.csv",
            caption="../report/sensitivity/summary.rst",
            category="4. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
    params:
        settings=sensitivity_replay_eval_settings(),
    log:
        f"{LOGS}/sensitivity/replay_eval.log",
    benchmark:
        f"{JOB_TIMINGS}/sensitivity/replay_eval.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_replay_eval.py"


rule sensitivity_replay_figures:
    input:
        results=f"{RESULTS}/paper/sensitivity_eval.parquet",
        cells=f"{RESULTS}/paper/sensitivity_cells.parquet",
        table=f"{RESULTS}/paper/sensitivity_table.csv",
        summary=f"{RESULTS}/paper/sensitivity_summary.csv",
    output:
        error=report(
            f"{RESULTS}/paper/sensitivity_error_vs_epsilon.png",
            caption="../report/sensitivity/error_vs_epsilon.rst",
            category="4. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
        lhs=report(
            f"{RESULTS}/paper/sensitivity_binary_vs_lhs.png",
            caption="../report/sensitivity/binary_vs_lhs.rst",
            category="4. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
        steps=report(
            f"{RESULTS}/paper/sensitivity_steps.png",
            caption="../report/sensitivity/steps.rst",
            category="4. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
        surfaces=report(
            f"{RESULTS}/paper/sensitivity_surfaces.png",
            caption="../report/sensitivity/surfaces.rst",
            category="4. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
        runs=report(
            f"{RESULTS}/paper/sensitivity_error_vs_runs.png",
            caption="../report/sensitivity/error_vs_runs.rst",
            category="4. Resource sensitivity",
            subcategory="paper data (replay)",
        ),
    params:
        settings=sensitivity_replay_figures_settings(),
    log:
        f"{LOGS}/sensitivity/replay_figures.log",
    benchmark:
        f"{JOB_TIMINGS}/sensitivity/replay_figures.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sensitivity_replay_figures.py"
