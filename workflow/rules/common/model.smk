# Settings and input functions of the alignment / model stages (rules: ../model.smk).
#
# The model reads the counters stage's tables (counters_table) and, for the stable intervals,
# the warmup stage's phase labels of the old generation's counter traces
# (get_warmup_counter_phases). One switch decides whether those labels exist: the warmup
# stage's counter-phase analysis (warmup_counter_phases_enabled). Without it,
# model.stable_only: true is refused at parse time (check_stable_only), and the evaluation
# says in evaluation.md that its stable-interval half was not run, and why. The model stage
# needs the counters stage: enabled without it, the workflow stops at parse time
# (check_counters_enabled). It asks the counters stage for the old-generation tables of its
# predict-only benchmarks (request_counter_runs).
import functools

from snakemake.exceptions import WorkflowError

from perfcast.model.settings import (
    AlignRunSettings,
    AlignSettings,
    EvaluateSettings,
    EvaluationPageSettings,
    KnnSettings,
    PredictFigureSettings,
    PredictRunSettings,
    PredictSettings,
    TrainSettings,
    TrainsetSettings,
)
from perfcast.settings import as_params, build

MODEL = section("model")
ALIGN = section("align")
PREDICT = section("predict")
#: benchmarks measured on the old generation only, whose new-generation IPC is predicted
PREDICT_BENCHMARKS = sorted(PREDICT["benchmarks"]) if PREDICT else []
#: why the stable-interval evaluation is missing when the warmup stage labels no phases
STABLE_NOT_RUN = (
    "the intervals labelled stable come from the warmup stage's phase analysis of the counter "
    "traces, which is off (warmup.enabled, or no warmup section)"
)


def model_enabled():
    return is_activated("counters") and is_activated("model")


def check_counters_enabled():
    """The model stage learns from the counters stage's tables: with counters.enabled: false
    it would plan nothing, so the workflow stops before any job, naming both keys, rather than
    leave the user to wonder where the model went. (Without a counters section the model
    section holds only the schema's defaults, its enabled: true included, and the stage is
    simply not part of the run.)"""
    if COUNTERS and is_activated("model") and not is_activated("counters"):
        raise WorkflowError(
            "model.enabled: true needs the counters stage's tables, but counters.enabled is "
            "false: enable the counters stage (counters: {enabled: true}) or turn the model "
            "stage off (model: {enabled: false})"
        )


check_counters_enabled()


#: the fewest benchmarks measured on both generations the model stage can evaluate: one held out,
#: and of the others each predicted once without itself to calibrate the interval
MIN_MODEL_BENCHMARKS = 3


def check_enough_benchmarks():
    """The evaluation holds each benchmark out and calibrates the prediction interval on the
    others, each predicted by a model fitted without itself: with fewer than three benchmarks
    nothing is left to calibrate on, and the model's jobs would fail after the counters stage
    has run. The workflow stops before any job instead, naming the key."""
    if not model_enabled():
        return
    benchmarks = COUNTERS.get("benchmarks", [])
    if len(benchmarks) < MIN_MODEL_BENCHMARKS:
        raise WorkflowError(
            f"model.enabled: true needs at least {MIN_MODEL_BENCHMARKS} benchmarks measured on "
            f"both generations, but counters.benchmarks holds {len(benchmarks)} "
            f"({', '.join(benchmarks)}): each is predicted by a model of the others, whose "
            "interval is calibrated on the rest; add benchmarks or turn the model stage off "
            "(model: {enabled: false}); predict-only benchmarks go in predict.benchmarks"
        )


check_enough_benchmarks()
if model_enabled():
    # the model stage's own runs: its predict-only benchmarks, on the old generation
    request_counter_runs(OLD, PREDICT_BENCHMARKS)


def model_targets():
    if not model_enabled():
        return []
    return (
        [
            f"{RESULTS}/model/model.parquet",
            f"{RESULTS}/model/evaluation.parquet",
            f"{RESULTS}/model/predicted_vs_measured.png",
            f"{RESULTS}/train/ipc_ratio.png",
            f"{RESULTS}/model/evaluation.html",
        ]
        + [f"{RESULTS}/predict/{b}.{ext}" for b in PREDICT_BENCHMARKS for ext in ("json", "png")]
        + [f"{RESULTS}/aligned/{b}.png" for b in TRAIN_BENCHMARKS]
    )


def model_paper_targets():
    if not model_enabled():
        return []
    return [f"{RESULTS}/paper/ipc_prediction.{ext}" for ext in ("csv", "md", "png")]


def check_stable_only():
    """model.stable_only trains on stable intervals only: without the warmup stage's phase
    labels there are none to train on, so the workflow stops before any job (naming both keys).
    """
    if model_enabled() and MODEL["stable_only"] and not warmup_counter_phases_enabled():
        raise WorkflowError(
            "model.stable_only: true needs the warmup stage's phase labels of the counter "
            "traces, but the warmup stage is off (warmup.enabled, or no warmup section): "
            "enable it (warmup: {enabled: true}) or set model.stable_only: false"
        )


def get_align_settings(wildcards):
    """Rule model_align (perfcast.model.settings.AlignRunSettings): the align section, the
    benchmark and the generations' names."""
    return as_params(
        AlignRunSettings(align=_align_section(), benchmark=wildcards.bench, generations=(OLD, NEW))
    )


@functools.cache
def _align_section():
    return build(AlignSettings, ALIGN)


def align_mem_mb():
    """Full DTW holds the n x m cost matrix; the exact method is linear."""
    return 8000 if ALIGN["method"] == "dtw" else 2000


def _knn_section():
    """The model section's keys the model uses (perfcast.model.settings.KnnSettings): a change
    of model.enabled or model.stable_only reruns nothing by itself."""
    return build(KnnSettings, MODEL)


def trainset_settings():
    """Rule model_trainset (perfcast.model.settings.TrainsetSettings)."""
    return as_params(TrainsetSettings(benchmarks=tuple(TRAIN_BENCHMARKS)))


def train_settings():
    """Rule model_train (perfcast.model.settings.TrainSettings)."""
    return as_params(
        TrainSettings(
            model=_knn_section(),
            benchmarks=tuple(TRAIN_BENCHMARKS),
            clock_new_ghz=new_clock_ghz(),
        )
    )


def evaluate_settings():
    """Rule model_evaluate (perfcast.model.settings.EvaluateSettings)."""
    return as_params(
        EvaluateSettings(
            model=_knn_section(),
            benchmarks=tuple(TRAIN_BENCHMARKS),
            clock_new_ghz=new_clock_ghz(),
            simulated=SIMULATED,
            stable_not_run=stable_evaluation_not_run(),
        )
    )


def get_predict_settings(wildcards):
    """Rule model_predict (perfcast.model.settings.PredictRunSettings): the predict section's
    keys the prediction uses (a change of predict.benchmarks reruns nothing by itself), the
    benchmark and the new generation's clock."""
    return as_params(
        PredictRunSettings(
            predict=_predict_section(),
            benchmark=wildcards.bench,
            clock_new_ghz=new_clock_ghz(),
        )
    )


@functools.cache
def _predict_section():
    return build(PredictSettings, PREDICT)


def predict_figure_settings():
    """Rule model_predict_figure (perfcast.model.settings.PredictFigureSettings)."""
    return as_params(PredictFigureSettings(simulated=SIMULATED))


def evaluation_page_settings():
    """Rule model_evaluation_html (perfcast.model.settings.EvaluationPageSettings)."""
    return as_params(EvaluationPageSettings(title="Leave-one-benchmark-out evaluation"))


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
