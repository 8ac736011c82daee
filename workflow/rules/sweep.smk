# Stage 5: parameter-sweep campaigns and their models (ARPE; docs/methods/sweep.md).
#
# One job per configuration x iteration (the configuration is one wildcard named like a
# Snakemake Paramspace with filename_params="*": size~256_workers~2), so a campaign runs in
# parallel locally or on a cluster, and adding a value to a parameter adds only the new jobs (a
# run's params hold its own command and sensors, nothing another configuration changes).
#   sweep_sensors      sensors.json     every sensor tried once; refuses the campaign if one is missing
#   sweep_run          runs/{point}/iter{iteration}.json   one measured run (failed runs recorded)
#   sweep_run_table    runs.parquet     the campaign's run table
#   sweep_import       runs.parquet     the same table from an ARPE results directory
#   sweep_models       models.*, coefficients, fitted, predictions, figures
#   sweep_paper_table  results/paper/sweep_models.{csv,md}, sweep_fit.png
# Each rule's one settings param is a dataclass of perfcast.sweep.job_settings built by
# common/sweep.smk from the checked campaign; each script hands it to the function of
# perfcast.sweep.rules named like the rule.


rule sweep_sensors:
    output:
        f"{SWEEP_DIR}/{{campaign}}/sensors.json",
    params:
        settings=get_sweep_sensors_settings,
    wildcard_constraints:
        campaign=SWEEP_RUN_NAMES,
    log:
        f"{LOGS}/sweep/{{campaign}}/sensors.log",
    benchmark:
        f"{JOB_TIMINGS}/sweep/{{campaign}}/sensors.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sweep_sensors.py"


rule sweep_run:
    input:
        # ancient: a re-check of the sensors must not rerun every measured run
        ancient(f"{SWEEP_DIR}/{{campaign}}/sensors.json"),
    output:
        f"{SWEEP_DIR}/{{campaign}}/runs/{{point}}/iter{{iteration}}.json",
    params:
        settings=get_sweep_run_settings,
    wildcard_constraints:
        campaign=SWEEP_RUN_NAMES,
        point=r"[^/]+",
        iteration=r"[0-9]+",
    log:
        f"{LOGS}/sweep/{{campaign}}/runs/{{point}}/iter{{iteration}}.log",
    benchmark:
        f"{JOB_TIMINGS}/sweep/{{campaign}}/runs/{{point}}/iter{{iteration}}.tsv"
    threads: get_sweep_run_threads
    resources:
        # the configuration's threads on a cluster, where threads are capped at --cores
        # (profiles/slurm: 1)
        cpus_per_task=get_sweep_run_threads,
        mem_mb=get_sweep_run_mem_mb,
        runtime=get_sweep_run_runtime,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sweep_run.py"


rule sweep_run_table:
    input:
        get_sweep_run_records,
    output:
        f"{SWEEP_DIR}/{{campaign}}/runs.parquet",
    params:
        settings=get_sweep_run_table_settings,
    wildcard_constraints:
        campaign=SWEEP_RUN_NAMES,
    log:
        f"{LOGS}/sweep/{{campaign}}/run_table.log",
    benchmark:
        f"{JOB_TIMINGS}/sweep/{{campaign}}/run_table.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sweep_run_table.py"


rule sweep_import:
    input:
        get_sweep_import_files,
    output:
        f"{SWEEP_DIR}/{{campaign}}/runs.parquet",
    params:
        settings=get_sweep_import_settings,
    wildcard_constraints:
        campaign=SWEEP_IMPORT_NAMES,
    log:
        f"{LOGS}/sweep/{{campaign}}/import.log",
    benchmark:
        f"{JOB_TIMINGS}/sweep/{{campaign}}/import.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sweep_import.py"


rule sweep_models:
    input:
        f"{SWEEP_DIR}/{{campaign}}/runs.parquet",
    output:
        json=f"{SWEEP_DIR}/{{campaign}}/models.json",
        models=f"{SWEEP_DIR}/{{campaign}}/models.parquet",
        coefficients=f"{SWEEP_DIR}/{{campaign}}/coefficients.parquet",
        fitted=f"{SWEEP_DIR}/{{campaign}}/fitted.parquet",
        predictions=f"{SWEEP_DIR}/{{campaign}}/predictions.parquet",
        fits=report(
            f"{SWEEP_DIR}/{{campaign}}/figures/fits.png",
            caption="../report/sweep/fits.rst",
            category="5. Parameter sweeps",
            subcategory="{campaign}",
        ),
        residuals=report(
            f"{SWEEP_DIR}/{{campaign}}/figures/residuals.png",
            caption="../report/sweep/residuals.rst",
            category="5. Parameter sweeps",
            subcategory="{campaign}",
        ),
    params:
        settings=get_sweep_models_settings,
    wildcard_constraints:
        campaign=SWEEP_ALL_NAMES,
    log:
        f"{LOGS}/sweep/{{campaign}}/models.log",
    benchmark:
        f"{JOB_TIMINGS}/sweep/{{campaign}}/models.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sweep_models.py"


rule sweep_paper_table:
    input:
        unpack(get_sweep_paper_inputs),
    output:
        csv=f"{RESULTS}/paper/sweep_models.csv",
        md=f"{RESULTS}/paper/sweep_models.md",
        png=report(
            f"{RESULTS}/paper/sweep_fit.png",
            caption="../report/sweep/paper_fit.rst",
            category="5. Parameter sweeps",
            subcategory="paper",
        ),
    params:
        settings=sweep_paper_table_settings(),
    log:
        f"{LOGS}/sweep/paper_table.log",
    benchmark:
        f"{JOB_TIMINGS}/sweep/paper_table.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sweep_paper_table.py"
