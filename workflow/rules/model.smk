# Stages 2-3: align old and new generation runs, build the training set, train the IPC model,
# evaluate it leave-one-benchmark-out, predict benchmarks measured on the old generation only.
# Functions: common/model.smk.

# model.stable_only without the warmup stage's phase labels: refused here, before any job
check_stable_only()


rule model_align:
    input:
        old=counters_table(OLD, "{bench}"),
        new=counters_table(NEW, "{bench}"),
    output:
        pairs=f"{RESULTS}/aligned/{{bench}}.parquet",
        figure=report(
            f"{RESULTS}/aligned/{{bench}}.png",
            caption="../report/counters/alignment.rst",
            category="2. Model",
            subcategory="Alignment and training set",
            labels={"benchmark": "{bench}"},
        ),
    params:
        settings=get_align_settings,
    wildcard_constraints:
        bench=RUN_WILDCARDS["bench"],
    log:
        f"{LOGS}/align/{{bench}}.log",
    benchmark:
        f"{JOB_TIMINGS}/align/{{bench}}.tsv"
    threads: 1
    resources:
        mem_mb=align_mem_mb(),
        runtime=30,
    conda:
        CONDA_ENV
    script:
        "../../scripts/model_align.py"


rule model_trainset:
    input:
        aligned=expand(f"{RESULTS}/aligned/{{bench}}.parquet", bench=TRAIN_BENCHMARKS),
        old=get_training_tables,
        phases=get_trainset_phases,
    output:
        table=f"{RESULTS}/train/trainset.parquet",
        figure=report(
            f"{RESULTS}/train/ipc_ratio.png",
            caption="../report/counters/ipc_ratio.rst",
            category="2. Model",
            subcategory="Alignment and training set",
        ),
    params:
        settings=trainset_settings(),
    log:
        f"{LOGS}/train/trainset.log",
    benchmark:
        f"{JOB_TIMINGS}/train/trainset.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/model_trainset.py"


rule model_train:
    input:
        trainset=f"{RESULTS}/train/trainset.parquet",
        old=get_training_tables,
        new=get_new_tables,
    output:
        model=f"{RESULTS}/model/model.parquet",
        card=f"{RESULTS}/model/model.json",
    params:
        settings=train_settings(),
    log:
        f"{LOGS}/model/train.log",
    benchmark:
        f"{JOB_TIMINGS}/model/train.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        CONDA_ENV
    script:
        "../../scripts/model_train.py"


rule model_evaluate:
    input:
        trainset=f"{RESULTS}/train/trainset.parquet",
        old=get_training_tables,
        new=get_new_tables,
        phases=get_evaluation_phases,
    output:
        table=f"{RESULTS}/model/evaluation.parquet",
        csv=f"{RESULTS}/model/evaluation.csv",
        md=f"{RESULTS}/model/evaluation.md",
        figure=report(
            f"{RESULTS}/model/predicted_vs_measured.png",
            caption="../report/counters/predicted_vs_measured.rst",
            category="2. Model",
            subcategory="Evaluation",
        ),
    params:
        settings=evaluate_settings(),
    log:
        f"{LOGS}/model/evaluate.log",
    benchmark:
        f"{JOB_TIMINGS}/model/evaluate.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        CONDA_ENV
    script:
        "../../scripts/model_evaluate.py"


rule model_predict:
    input:
        model=f"{RESULTS}/model/model.parquet",
        counters=counters_table(OLD, "{bench}"),
    output:
        table=f"{RESULTS}/predict/{{bench}}.parquet",
        summary=f"{RESULTS}/predict/{{bench}}.json",
    params:
        settings=get_predict_settings,
    wildcard_constraints:
        bench=RUN_WILDCARDS["bench"],
    log:
        f"{LOGS}/predict/{{bench}}.log",
    benchmark:
        f"{JOB_TIMINGS}/predict/{{bench}}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/model_predict.py"


rule model_evaluation_html:
    input:
        f"{RESULTS}/model/evaluation.md",
    output:
        report(
            f"{RESULTS}/model/evaluation.html",
            caption="../report/counters/evaluation.rst",
            category="2. Model",
            subcategory="Evaluation",
        ),
    params:
        settings=evaluation_page_settings(),
    log:
        f"{LOGS}/model/evaluation_html.log",
    benchmark:
        f"{JOB_TIMINGS}/model/evaluation_html.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/model_evaluation_html.py"


rule model_predict_figure:
    input:
        table=f"{RESULTS}/predict/{{bench}}.parquet",
        summary=f"{RESULTS}/predict/{{bench}}.json",
    output:
        report(
            f"{RESULTS}/predict/{{bench}}.png",
            caption="../report/counters/prediction.rst",
            category="2. Model",
            subcategory="Predictions",
            labels={"benchmark": "{bench}"},
        ),
    params:
        settings=predict_figure_settings(),
    wildcard_constraints:
        bench=RUN_WILDCARDS["bench"],
    log:
        f"{LOGS}/predict/{{bench}}_figure.log",
    benchmark:
        f"{JOB_TIMINGS}/predict/{{bench}}_figure.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/model_predict_figure.py"
