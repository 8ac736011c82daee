# Settings and input functions of the alignment / model stages (rules: ../model.smk).
#
# The model reads the counters stage's tables (counters_table) and, for the stable intervals,
# the warmup stage's phase labels of the old generation's counter traces
# (get_warmup_counter_phases). One switch decides whether those labels exist: the warmup
# stage's counter-phase analysis (warmup_counter_phases_enabled). Without it,
# model.stable_only: true is refused at parse time (check_stable_only), and the evaluation
# says in evaluation.md that its stable-interval half was not run, and why.
from snakemake.exceptions import WorkflowError

from perfcast.model.settings import AlignSettings, KnnSettings, PredictSettings
from perfcast.settings import as_params, build

MODEL = section("model")
ALIGN = section("align")
PREDICT = section("predict")
#: why the stable-interval evaluation is missing when the warmup stage labels no phases
STABLE_NOT_RUN = (
    "the intervals labelled stable come from the warmup stage's phase analysis of the counter "
    "traces, which is off (warmup.enabled, or no warmup section)"
)


def model_enabled():
    return is_activated("counters") and is_activated("model")


def model_targets():
    if not model_enabled():
        return []
    return [
        f"{RESULTS}/model/knn.joblib",
        f"{RESULTS}/model/evaluation.parquet",
        f"{RESULTS}/model/predicted_vs_measured.png",
        f"{RESULTS}/train/ipc_ratio.png",
        f"{RESULTS}/model/evaluation.html",
    ] + [f"{RESULTS}/predict/{b}.{ext}" for b in PREDICT_BENCHMARKS for ext in ("json", "png")] + [
        f"{RESULTS}/aligned/{b}.png" for b in TRAIN_BENCHMARKS
    ]


def model_paper_targets():
    if not model_enabled():
        return []
    return [f"{RESULTS}/paper/ipc_prediction.{ext}" for ext in ("csv", "md", "png")]


def check_stable_only():
    """model.stable_only trains on stable intervals only: without the warmup stage's phase
    labels there are none to train on, so the workflow stops before any job (naming both keys)."""
    if model_enabled() and MODEL["stable_only"] and not warmup_counter_phases_enabled():
        raise WorkflowError(
            "model.stable_only: true needs the warmup stage's phase labels of the counter "
            "traces, but the warmup stage is off (warmup.enabled, or no warmup section): "
            "enable it (warmup: {enabled: true}) or set model.stable_only: false"
        )


def align_settings():
    """The align section (perfcast.model.settings.AlignSettings)."""
    return as_params(build(AlignSettings, ALIGN))


def align_mem_mb():
    """Full DTW holds the n x m cost matrix; the exact method is linear."""
    return 8000 if ALIGN.get("method") == "dtw" else 2000


def knn_settings():
    """The model section's keys the KNN uses (perfcast.model.settings.KnnSettings): a change of
    model.enabled or model.stable_only reruns nothing by itself."""
    return as_params(build(KnnSettings, MODEL))


def get_training_tables(wildcards):
    """The old generation's table of every training benchmark, in TRAIN_BENCHMARKS order."""
    return [counters_table(OLD, b) for b in TRAIN_BENCHMARKS]


def get_new_tables(wildcards):
    """The new generation's table of every training benchmark, in TRAIN_BENCHMARKS order."""
    return [counters_table(NEW, b) for b in TRAIN_BENCHMARKS]


def get_trainset_phases(wildcards):
    """model.stable_only: the phase labels of every training benchmark's old run, in
    TRAIN_BENCHMARKS order (check_stable_only guarantees they are computed)."""
    if not MODEL["stable_only"]:
        return []
    return get_warmup_counter_phases(OLD, TRAIN_BENCHMARKS)


def get_evaluation_phases(wildcards):
    """The phase labels of every training benchmark's old run, when the warmup stage computes
    them: the evaluation is then repeated on the stable intervals."""
    if not warmup_counter_phases_enabled():
        return []
    return get_warmup_counter_phases(OLD, TRAIN_BENCHMARKS)


def stable_evaluation_not_run():
    """Why the evaluation has no stable-interval half (None when it has one)."""
    return None if warmup_counter_phases_enabled() else STABLE_NOT_RUN


def new_clock_ghz():
    """counters.clock_ghz of the new generation (None: runtimes are not predicted)."""
    return COUNTERS["clock_ghz"].get(NEW) if COUNTERS else None


def predict_settings():
    """The predict section's keys the prediction uses (perfcast.model.settings.PredictSettings):
    a change of predict.benchmarks reruns nothing by itself."""
    return as_params(build(PredictSettings, PREDICT))
