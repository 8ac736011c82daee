# Stages 2-3: align old and new generation runs, build the training set, train the KNN model,
# evaluate it leave-one-benchmark-out, predict benchmarks measured on the old generation only.
rule align:
    input:
        old=f"{RESULTS}/counters/{OLD}/{{bench}}.parquet",
        new=f"{RESULTS}/counters/{NEW}/{{bench}}.parquet",
    output:
        pairs=f"{RESULTS}/aligned/{{bench}}.parquet",
        figure=report(
            f"{RESULTS}/aligned/{{bench}}.png",
            caption="../report/counters/alignment.rst",
            category="2. Alignment and training set",
            labels={"benchmark": "{bench}"},
        ),
    params:
        method=A.get("method", "exact"),
        radius=A.get("sakoe_chiba_radius"),
        gens=(OLD, NEW),
    log:
        f"{LOGS}/align/{{bench}}.log",
    benchmark:
        f"{BENCH}/align/{{bench}}.tsv"
    threads: 1
    resources:
        mem_mb=lambda wc: 8000 if A.get("method") == "dtw" else 2000,
        runtime=30,
    conda:
        CONDA_ENV
    script:
        "../../scripts/model_align.py"


rule trainset:
    input:
        aligned=expand(f"{RESULTS}/aligned/{{bench}}.parquet", bench=TRAIN_BENCHMARKS),
        old=expand(f"{RESULTS}/counters/{OLD}/{{bench}}.parquet", bench=TRAIN_BENCHMARKS),
        phases=expand(PHASES, gen=OLD, bench=TRAIN_BENCHMARKS)
        if M.get("stable_only")
        else [],
    output:
        table=f"{RESULTS}/train/trainset.parquet",
        figure=report(
            f"{RESULTS}/train/ipc_ratio.png",
            caption="../report/counters/ipc_ratio.rst",
            category="2. Alignment and training set",
        ),
    params:
        benchmarks=TRAIN_BENCHMARKS,
    log:
        f"{LOGS}/train/trainset.log",
    benchmark:
        f"{BENCH}/train/trainset.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/model_trainset.py"


rule train:
    input:
        f"{RESULTS}/train/trainset.parquet",
    output:
        model=f"{RESULTS}/model/knn.joblib",
        card=f"{RESULTS}/model/knn.json",
    params:
        settings=_knn_settings(),
    log:
        f"{LOGS}/model/train.log",
    benchmark:
        f"{BENCH}/model/train.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        CONDA_ENV
    script:
        "../../scripts/model_train.py"


rule evaluate:
    input:
        trainset=f"{RESULTS}/train/trainset.parquet",
        old=expand(f"{RESULTS}/counters/{OLD}/{{bench}}.parquet", bench=TRAIN_BENCHMARKS),
        new=expand(f"{RESULTS}/counters/{NEW}/{{bench}}.parquet", bench=TRAIN_BENCHMARKS),
        phases=expand(PHASES, gen=OLD, bench=TRAIN_BENCHMARKS) if use_phases() else [],
    output:
        table=f"{RESULTS}/model/evaluation.parquet",
        csv=f"{RESULTS}/model/evaluation.csv",
        md=report(
            f"{RESULTS}/model/evaluation.md",
            caption="../report/counters/evaluation.rst",
            category="3. Model",
        ),
        figure=report(
            f"{RESULTS}/model/predicted_vs_measured.png",
            caption="../report/counters/predicted_vs_measured.rst",
            category="3. Model",
        ),
    params:
        benchmarks=TRAIN_BENCHMARKS,
        settings=_knn_settings(),
        clock_new_ghz=C.get("clock_ghz", {}).get(NEW),
        simulated=SIMULATED,
    log:
        f"{LOGS}/model/evaluate.log",
    benchmark:
        f"{BENCH}/model/evaluate.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        CONDA_ENV
    script:
        "../../scripts/model_evaluate.py"


rule predict:
    input:
        model=f"{RESULTS}/model/knn.joblib",
        counters=f"{RESULTS}/counters/{OLD}/{{bench}}.parquet",
    output:
        table=f"{RESULTS}/predict/{{bench}}.parquet",
        summary=f"{RESULTS}/predict/{{bench}}.json",
    params:
        clock_new_ghz=C.get("clock_ghz", {}).get(NEW),
    log:
        f"{LOGS}/predict/{{bench}}.log",
    benchmark:
        f"{BENCH}/predict/{{bench}}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/model_predict.py"
