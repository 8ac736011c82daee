# Settings and input functions of the alignment / model stages (rules: ../model.smk).
M = config.get("model") or {}
A = config.get("align") or {}
PHASES = f"{RESULTS}/warmup/counters/{{gen}}/{{bench}}.parquet"  # written by the warmup stage


def model_enabled():
    return stage_enabled("counters") and M.get("enabled", True)


def use_phases():
    """Phase labels exist when the warmup stage runs on the counter traces."""
    return stage_enabled("warmup")


def model_targets():
    if not model_enabled():
        return []
    return [
        f"{RESULTS}/model/knn.joblib",
        f"{RESULTS}/model/evaluation.parquet",
        f"{RESULTS}/model/predicted_vs_measured.png",
        f"{RESULTS}/train/ipc_ratio.png",
    ] + [f"{RESULTS}/predict/{b}.json" for b in PREDICT_BENCHMARKS] + [
        f"{RESULTS}/aligned/{b}.png" for b in TRAIN_BENCHMARKS
    ]


def _knn_settings():
    keys = ["n_neighbors", "weights", "cv_folds", "log1p", "max_rows_per_benchmark"]
    return {k: M[k] for k in keys if k in M}

