"""The alignment, training-set, model and prediction rules, one function each
(``workflow/rules/model.smk``): glue from files to the stage's modules, nothing else. The command
line (``perfcast align``, ``perfcast predict``) calls the same functions, so its files carry the
same metadata.

Each takes the job's settings object whole (:mod:`perfcast.model.settings`) and file paths. The
input tables and their checks are :mod:`perfcast.model.tables` and :mod:`perfcast.model.checks`,
the model file :mod:`perfcast.model.modelfile`, the evaluation's Markdown
:mod:`perfcast.model.report`, the figures :mod:`perfcast.model.figures`.

scikit-learn, the figures (matplotlib) and the alignment (numba) are imported by the functions
that use them: an alignment job (one per benchmark, thousands in a large campaign) does not need
scikit-learn, whose import took a third of its CPU time, and a training or prediction job draws
nothing and aligns nothing (matplotlib's and numba's imports: about a second of CPU a job
here).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfcast.checks import require_values
from perfcast.errors import InputError
from perfcast.io import (
    parquet_metadata,
    read_parquet,
    require_numeric,
    write_csv,
    write_json,
    write_parquet,
    write_text,
)
from perfcast.model.checks import check_alignable, check_prediction, require_readings
from perfcast.model.families import CHOICE_RULE
from perfcast.model.modelfile import MAX_LOG_ERROR, load_model, save_model
from perfcast.model.report import evaluation_markdown
from perfcast.model.settings import (
    AlignRunSettings,
    EvaluateSettings,
    EvaluationPageSettings,
    KnnSettings,
    PredictFigureSettings,
    PredictRunSettings,
    TrainsetSettings,
    TrainSettings,
)
from perfcast.model.tables import WHOLE_RUN, granularity, read_counters, stable_intervals
from perfcast.model.trainset import (
    GROUP,
    benchmark_rows,
    build_trainset,
    feature_columns,
    keep_intervals,
)

log = logging.getLogger(__name__)


def align_files(settings: AlignRunSettings, old: str, new: str, out: str,
                figure: str | None) -> tuple[pd.DataFrame, float]:
    """Rule ``model_align`` (and ``perfcast align``): map the old run's intervals to the new
    run's (:func:`perfcast.model.align.align_runs`).

    Parameters
    ----------
    settings : AlignRunSettings
        the ``align`` section, the benchmark's name (metadata, figure title) and the
        ``(old, new)`` generation names (figure).
    old, new : str
        the two runs' counter tables.
    out : str
        the pairs to write (Parquet; metadata: benchmark, method, radius, DTW cost, the input
        paths, whether the data are simulated).
    figure : str or None
        the alignment figure to write (None: no figure).

    Returns
    -------
    (pandas.DataFrame, float)
        the pairs and the DTW cost, as :func:`~perfcast.model.align.align_runs`.

    Raises
    ------
    InputError
        naming the file: a table that cannot be aligned (:func:`perfcast.model.checks.
        check_alignable`), runs of different work (``align.instruction_tolerance``), or runs
        too long for tslearn's DTW (``align.method: dtw``;
        :func:`perfcast.model.align.dtw_too_large`), named with both files before anything is
        allocated.

    Examples
    --------
    Two runs of different work (the new one retired 30 % more instructions) are refused before
    any alignment, naming both files and totals:

    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from perfcast.errors import InputError
    >>> from perfcast.io import write_parquet
    >>> from perfcast.model.settings import AlignRunSettings, AlignSettings
    >>> from perfcast.settings import from_section
    >>> def run(n):  # n intervals of 1e9 instructions at IPC 1
    ...     return pd.DataFrame({"interval": range(n), "time": [0.1 * (k + 1) for k in range(n)],
    ...         "duration_s": 0.1, "instructions": 1e9, "cycles": 1e9, "ipc": 1.0,
    ...         "instructions_cumulative_sum": [1e9 * (k + 1) for k in range(n)]})
    >>> settings = AlignRunSettings(from_section(AlignSettings, {}, "align"), "mcf", ("g2", "g3"))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     old, new = str(Path(tmp, "old.parquet")), str(Path(tmp, "new.parquet"))
    ...     write_parquet(run(10), old); write_parquet(run(13), new)
    ...     try:
    ...         align_files(settings, old, new, str(Path(tmp, "pairs.parquet")), None)
    ...     except InputError as err:
    ...         print("30.0% apart" in str(err), Path(tmp, "pairs.parquet").exists())
    True False
    """
    from perfcast.model import figures
    from perfcast.model.align import align_runs, check_same_work, dtw_too_large

    o, n = read_counters(old), read_counters(new)
    for table, path in ((o, old), (n, new)):
        check_alignable(table, path)
    align, benchmark = settings.align, settings.benchmark
    check_same_work(o, n, align.instruction_tolerance, old_path=old, new_path=new)
    too_large = align.method == "dtw" and dtw_too_large(len(o), len(n), align.sakoe_chiba_radius)
    if too_large:  # refused before tslearn allocates anything
        raise InputError(old, f"and {new}: {too_large}",
                         expected="align.method: exact (perfcast align --method exact: the same "
                                  "optimal path in O(n + m) memory), or runs of fewer intervals "
                                  "(a longer counters.interval_ms)")
    pairs, cost = align_runs(o, n, align)
    require_values([cost], old, f"DTW cost of {old} and {new}", low=0, low_inclusive=True)
    log.info("%s: %d x %d intervals -> %d pairs, DTW cost %.6g (%s)", benchmark, len(o), len(n),
             len(pairs), cost, align.method)
    radius = align.sakoe_chiba_radius if align.method == "dtw" else None  # the one used
    meta = {"benchmark": benchmark, "method": align.method,
            "sakoe_chiba_radius": radius, "dtw_cost": cost,
            "old": old, "new": new, "simulated": parquet_metadata(old).get("simulated", False)}
    write_parquet(pairs, out, metadata=meta)
    if figure:
        figures.alignment(o, n, pairs, settings.generations, benchmark, Path(figure),
                          note=figures.simulated_note(meta["simulated"]))
    return pairs, cost


def trainset_files(settings: TrainsetSettings, aligned: Sequence[str],
                   old_counters: Sequence[str], out: str, figure: str,
                   phases: Sequence[str] | None) -> None:
    """Rule ``model_trainset``: the training set of every benchmark (features: the old run's PKI
    columns; target: the IPC ratio of each aligned pair).

    Parameters
    ----------
    settings : TrainsetSettings
        the training benchmarks.
    aligned, old_counters : sequence of str
        per benchmark (same order as ``settings.benchmarks``), its pairs and its old run's
        table.
    out, figure : str
        the training set (Parquet) and its IPC-ratio figure.
    phases : sequence of str or None
        per benchmark, the warmup stage's phase labels of its old run: keep only the intervals
        labelled stable (``model.stable_only``). None: every interval.

    Raises
    ------
    InputError
        naming the file: a counter without any reading, a benchmark without a training row.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from perfcast.io import write_parquet
    >>> from perfcast.model.settings import TrainsetSettings
    >>> old = pd.DataFrame({"interval": [0, 1], "time": [0.1, 0.2], "duration_s": 0.1,
    ...     "instructions": 1e9, "cycles": 1e9, "ipc": 1.0,
    ...     "instructions_cumulative_sum": [1e9, 2e9], "x_pki": [2.0, 4.0]})
    >>> pairs = pd.DataFrame({"old_interval": [0, 1], "new_interval": [0, 1],
    ...                       "ipc_ratio": [1.2, 1.4]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_parquet(old, Path(tmp, "old.parquet"))
    ...     write_parquet(pairs, Path(tmp, "pairs.parquet"))
    ...     trainset_files(TrainsetSettings(("mcf",)), [str(Path(tmp, "pairs.parquet"))],
    ...                    [str(Path(tmp, "old.parquet"))], str(Path(tmp, "train.parquet")),
    ...                    str(Path(tmp, "ratio.png")), phases=None)
    ...     train = pd.read_parquet(Path(tmp, "train.parquet"))
    >>> train[["benchmark", "ipc_ratio", "x_pki"]].values.tolist()
    [['mcf', 1.2, 2.0], ['mcf', 1.4, 4.0]]
    """
    from perfcast.model import figures

    benchmarks = settings.benchmarks
    parts = []
    for i, bench in enumerate(benchmarks):
        keep = stable_intervals(phases[i]) if phases else None
        old = read_counters(old_counters[i])
        # a counter without any reading would drop every row of the benchmark: fail instead
        require_readings(old, feature_columns(old), old_counters[i])
        pairs = read_parquet(aligned[i])
        rows = benchmark_rows(bench, old, pairs, keep)
        if rows.empty:
            raise InputError(aligned[i], f"benchmark {bench!r} gives no training row: none of "
                             f"its {len(pairs)} aligned pairs has finite counters and IPC ratio"
                             + (" in its stable phase" if keep is not None else ""),
                             expected="aligned pairs with readings")
        log.info("%s: %d of %d aligned pairs are training rows", bench, len(rows), len(pairs))
        parts.append(rows)
    train = build_trainset(parts)
    log.info("training set: %d rows, %d benchmarks, stable_only=%s", len(train), len(parts),
             bool(phases))
    simulated = any(parquet_metadata(p).get("simulated", False) for p in old_counters)
    write_parquet(train, out, metadata={"benchmarks": list(benchmarks),
                                        "stable_only": bool(phases),
                                        "features": feature_columns(train),
                                        "simulated": simulated})
    figures.ratio_distribution(train, Path(figure), note=figures.simulated_note(simulated))


def _candidates(model: KnnSettings, grain: str) -> KnnSettings:
    """The model settings with the candidate families for the old tables' granularity
    (:func:`perfcast.model.tables.granularity`), logged when they differ."""
    chosen = model.for_tables(grain == WHOLE_RUN)
    if chosen.families != model.families:
        log.info("whole-run tables: candidate families %s (model.whole_run_families)",
                 ", ".join(chosen.families))
    return chosen


def check_neighbours(train: pd.DataFrame, model: KnnSettings, trainset: str, *,
                     nested: bool) -> None:
    """Every ``model.n_neighbors`` fits the KNN's smallest training fold
    (:func:`perfcast.model.knn.neighbour_limit`; ``nested``: of the leave-one-benchmark-out
    evaluation's inner searches) when the KNN is a candidate. A larger ``k`` would be clipped
    to the fold, so that the grid named a model it never fitted.

    Parameters
    ----------
    train : pandas.DataFrame
        the training set (or its stable intervals).
    model : KnnSettings
        the ``model`` section with the candidates for the tables' granularity.
    trainset : str
        the training set's file (in the error).
    nested : bool
        check the folds of the evaluation's searches (without each held-out benchmark).

    Raises
    ------
    InputError
        naming the training set, the key, the value, the limit and the training rows.
    """
    from perfcast.model.knn import neighbour_limit

    if "knn" not in model.families:
        return
    limit = neighbour_limit(train, model, nested=nested)
    over = [k for k in model.n_neighbors if limit is not None and k > limit]
    if over:
        where = ("the smallest training fold of the leave-one-benchmark-out evaluation's "
                 "searches" if nested else "the smallest training fold of the KNN's search")
        raise InputError(trainset, f"model.n_neighbors {max(over)} exceeds the {limit} rows of "
                         f"{where} ({len(train)} training rows, "
                         f"{train[GROUP].nunique()} benchmarks, model.cv_folds "
                         f"{model.cv_folds})",
                         expected=f"model.n_neighbors of at most {limit} (or more training "
                                  "rows, fewer model.cv_folds, or knn not among the families)")


def train_files(settings: TrainSettings, trainset: str, old: Sequence[str], new: Sequence[str],
                model_out: str, card_out: str) -> None:
    """Rule ``model_train``: fit every candidate family on the training benchmarks, choose one
    by leave-one-benchmark-out error (:func:`perfcast.model.families.select`), whose errors are
    also the calibration of its prediction intervals; write it (:func:`save_model`: the rows the
    chosen family was fitted on, the family, its hyper-parameters, features, calibration and the
    library versions) and its model card (JSON, :func:`perfcast.model.families.model_card`).

    Parameters
    ----------
    settings : TrainSettings
        the ``model`` section's keys (``settings.model``), the training benchmarks and the new
        generation's clock (runtime intervals; None: cycles only).
    trainset : str
        the training set.
    old, new : sequence of str
        per benchmark (same order as ``settings.benchmarks``), its old and new run tables: the
        measured totals the choice and the calibration compare with.
    model_out, card_out : str
        the model file (:func:`perfcast.model.modelfile.save_model`) and its card (JSON).

    Raises
    ------
    InputError
        naming the file: a benchmark whose leave-one-out prediction is not finite.

    Examples
    --------
    Three benchmarks whose new generation is 1.2, 1.25 and 1.3 times the old one's IPC,
    whatever their counter: the constant family's ratio is their median.

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from perfcast.io import write_parquet
    >>> from perfcast.model.settings import KnnSettings, TrainSettings
    >>> from perfcast.settings import from_section
    >>> def run(ipc):  # three intervals of 1e9 instructions
    ...     return pd.DataFrame({"interval": [0, 1, 2], "time": [0.1, 0.2, 0.3],
    ...         "duration_s": 0.1, "instructions": 1e9, "cycles": 1e9 / ipc, "ipc": ipc,
    ...         "instructions_cumulative_sum": [1e9, 2e9, 3e9], "x_pki": 2.0})
    >>> model = from_section(KnnSettings, {"families": ["constant"]}, "model")
    >>> settings = TrainSettings(model, benchmarks=("a", "b", "c"), clock_new_ghz=None)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     old, new, rows = [], [], []
    ...     for b, ratio in (("a", 1.2), ("b", 1.25), ("c", 1.3)):
    ...         old.append(str(Path(tmp, f"{b}.old.parquet")))
    ...         new.append(str(Path(tmp, f"{b}.new.parquet")))
    ...         write_parquet(run(1.0), old[-1]); write_parquet(run(ratio), new[-1])
    ...         rows.append(pd.DataFrame({"benchmark": b, "old_interval": [0, 1, 2],
    ...             "new_interval": [0, 1, 2], "ipc_ratio": ratio, "x_pki": 2.0}))
    ...     write_parquet(pd.concat(rows, ignore_index=True), Path(tmp, "train.parquet"))
    ...     train_files(settings, str(Path(tmp, "train.parquet")), old, new,
    ...                 str(Path(tmp, "model.parquet")), str(Path(tmp, "model.json")))
    ...     card = json.loads(Path(tmp, "model.json").read_text())
    >>> card["family"], card["best_params"]
    ('constant', {'ratio': 1.25})
    """
    model, benchmarks = settings.model, settings.benchmarks
    from perfcast.model.families import model_card, select
    from perfcast.model.knn import thin

    train = read_parquet(trainset)
    features = feature_columns(train)
    grain = granularity(old)
    model = _candidates(model, grain)
    check_neighbours(train, model, trainset, nested=False)
    co = {b: read_counters(p) for b, p in zip(benchmarks, old, strict=True)}
    cn = {b: read_counters(p) for b, p in zip(benchmarks, new, strict=True)}
    sel = select(train, co, cn, features, model, settings.clock_new_ghz)
    cal = sel.calibration
    bad = [b for b, e in cal.cycles.items() if not np.isfinite(e)]
    if bad:
        raise InputError(old[list(benchmarks).index(bad[0])],
                         f"benchmark {bad[0]}: its total cycles predicted without it are not "
                         "finite and positive, so it cannot calibrate the prediction intervals",
                         expected="counter tables with finite positive IPC and instructions")
    for kind in ("cycles", "runtime"):  # what load_model accepts (check_calibration)
        far = [b for b, e in getattr(cal, kind).items() if abs(e) > MAX_LOG_ERROR]
        if far:
            raise InputError(old[list(benchmarks).index(far[0])],
                             f"benchmark {far[0]}: its total {kind} predicted without it is "
                             f"exp({getattr(cal, kind)[far[0]]:.4g}) times the measured one",
                             expected=f"a log error of magnitude at most {MAX_LOG_ERROR:.4g}: "
                                      "counters that measure this run")
    card = model_card(sel, features, train, model)
    train_meta = parquet_metadata(trainset)
    card["stable_only"] = train_meta.get("stable_only", False)
    card["simulated"] = bool(train_meta.get("simulated", False))
    card["granularity"] = grain
    card["choice_rule"] = CHOICE_RULE
    q, used = cal.quantile("cycles")
    card["calibration"] = cal.as_dict() | {"coverage_used": used,
                                           "cycles_log_quantile": q}
    if used < model.coverage:
        log.warning("%d training benchmarks allow prediction intervals of at most %.3f "
                    "coverage, not %.3f", len(co), used, model.coverage)
    log.info("candidates (mean |log error| of total cycles, leave one benchmark out): %s",
             ", ".join(f"{f} {sel.score(f):.4f}" for f in sel.fitted))
    log.info("chosen: %s %s (%s), interval factor x/÷ %.3f at %.3f coverage", sel.chosen,
             card["best_params"], CHOICE_RULE, np.exp(q), used)
    save_model(sel, thin(train, model.max_rows_per_benchmark), features, model,
               calibration=cal.as_dict(), versions=card["versions"], path=model_out,
               simulated=card["simulated"])
    write_json(card, card_out)


def evaluate_files(settings: EvaluateSettings, trainset: str, old: Sequence[str],
                   new: Sequence[str], out: str, csv: str, md: str, figure: str,
                   phases: Sequence[str] | None) -> None:
    """Rule ``model_evaluate``: leave-one-benchmark-out on all intervals
    (:func:`perfcast.model.evaluation.evaluate_lobo`), and on stable ones when phases are given.

    Parameters
    ----------
    settings : EvaluateSettings
        the model's settings (``settings.model``), the training benchmarks, the new
        generation's clock (runtime errors; None: cycles only), whether the data are simulated
        (said at the top of the Markdown) and, without ``phases``, why the stable-interval
        evaluation was not run (said in the Markdown and the log).
    trainset : str
        the training set.
    old, new : sequence of str
        per benchmark (same order as ``settings.benchmarks``), its old and new run's table.
    out, csv, md, figure : str
        the evaluation as Parquet, CSV, Markdown and a figure.
    phases : sequence of str or None
        per benchmark, the warmup stage's phase labels of its old run: the evaluation is
        repeated on the stable intervals (``training_rows = stable``).

    Raises
    ------
    InputError
        naming the file: a benchmark without training rows, a leave-one-out prediction that is
        not finite and positive.
    Examples
    --------
    Every training benchmark is evaluated, or the job says which one cannot be and writes
    nothing (here the training set has no row of ``c``):

    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from perfcast.errors import InputError
    >>> from perfcast.io import write_parquet
    >>> from perfcast.model.settings import EvaluateSettings, KnnSettings
    >>> from perfcast.settings import from_section
    >>> settings = EvaluateSettings(from_section(KnnSettings, {}, "model"), ("a", "b", "c"),
    ...                             clock_new_ghz=None, simulated=False, stable_not_run=None)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_parquet(pd.DataFrame({"benchmark": ["a", "b"], "old_interval": [0, 0],
    ...         "new_interval": [0, 0], "ipc_ratio": [1.2, 1.3], "x_pki": [2.0, 2.0]}),
    ...         Path(tmp, "train.parquet"))
    ...     out = [str(Path(tmp, f"evaluation.{k}")) for k in ("parquet", "csv", "md", "png")]
    ...     try:
    ...         evaluate_files(settings, str(Path(tmp, "train.parquet")), [], [], *out,
    ...                        phases=None)
    ...     except InputError as err:
    ...         print("no training row of benchmark(s) ['c']" in str(err),
    ...               any(Path(p).exists() for p in out))
    True False
    """
    from perfcast.model import figures
    from perfcast.model.evaluation import evaluate_lobo

    model, benchmarks, clock_new_ghz = settings.model, settings.benchmarks, settings.clock_new_ghz
    simulated, stable_not_run = settings.simulated, settings.stable_not_run

    train = read_parquet(trainset)
    features = feature_columns(train)
    absent = sorted(set(benchmarks) - set(train[GROUP]))
    if absent:  # every benchmark is evaluated, or the job says which is not and why
        raise InputError(trainset, f"no training row of benchmark(s) {absent}: they cannot be "
                         "evaluated", expected=f"rows of every benchmark {sorted(benchmarks)}")
    co = {b: read_counters(p) for b, p in zip(benchmarks, old, strict=True)}
    cn = {b: read_counters(p) for b, p in zip(benchmarks, new, strict=True)}
    for b in benchmarks:  # a different instruction count is an error no IPC model can remove
        ratio = float(co[b]["instructions"].sum() / cn[b]["instructions"].sum())
        log.info("%s: old/new instructions %.6f (%+.3f %%)", b, ratio, 100 * (ratio - 1))
    grain = granularity(old)
    log.info("granularity: %s", grain)
    model = _candidates(model, grain)
    check_neighbours(train, model, trainset, nested=True)
    results = [evaluate_lobo(train, co, cn, features, model, clock_new_ghz, label="all")]
    if phases:
        keep = {b: stable_intervals(p) for b, p in zip(benchmarks, phases, strict=True)}
        stable = keep_intervals(train, keep)
        check_neighbours(stable, model, trainset, nested=True)
        results.append(evaluate_lobo(stable, co, cn, features, model, clock_new_ghz,
                                     label="stable"))
    elif stable_not_run:
        log.warning("stable-interval evaluation not run: %s", stable_not_run)
    ev = pd.concat(results, ignore_index=True)
    for col in ("predicted_cycles", "predicted_runtime_s"):  # what each benchmark's error is of
        if col in ev:
            require_values(ev[col], trainset, f"leave-one-out {col}", low=0,
                           labels=ev["benchmark"].tolist(), label="benchmark")
    write_parquet(ev, out, metadata={"simulated": simulated, "granularity": grain})
    # a CSV has no metadata: the data's source is a column, read by any CSV reader
    write_csv(ev.assign(data_source="simulated" if simulated else "measured"), csv)
    write_text(evaluation_markdown(ev, simulated, None if phases else stable_not_run,
                                   granularity=grain), md)
    figures.predicted_vs_measured(ev, Path(figure), note=figures.simulated_note(simulated))


def predict_files(settings: PredictRunSettings, model: str, counters: str, out: str,
                  summary: str) -> dict[str, Any]:
    """Rule ``model_predict`` (and ``perfcast predict``): the new generation's IPC, cycles and
    runtime of a benchmark measured on the old generation only
    (:func:`perfcast.model.knn.predict_run`).

    Parameters
    ----------
    settings : PredictRunSettings
        the ``predict`` section (``settings.predict``: the plausible IPC range), the
        benchmark's name (in the summary) and the new generation's clock (adds the predicted
        runtime; None: cycles only).
    model : str
        the trained model (:func:`perfcast.model.modelfile.load_model`).
    counters : str
        the benchmark's old-generation table.
    out : str
        the per-interval prediction (Parquet; the summary as its metadata).
    summary : str
        the summary (JSON): totals and means, predicted and measured.

    Returns
    -------
    dict
        the summary written.

    Raises
    ------
    InputError
        an unreadable model or table, a table without the model's counters or with a counter
        that has no reading in any interval, a table align refuses (an interval repeated,
        cumulative instructions not growing: :func:`~perfcast.model.checks.check_alignable`),
        or a prediction that is not finite and plausible
        (:func:`~perfcast.model.checks.check_prediction`): nothing is written then.

    Examples
    --------
    A file that is not a perfcast model (here a pickle, whose loading could run any code) is
    refused unread, naming it:

    >>> import pickle, tempfile
    >>> from pathlib import Path
    >>> from perfcast.errors import InputError
    >>> from perfcast.model.settings import PredictRunSettings, PredictSettings
    >>> from perfcast.settings import from_section
    >>> settings = PredictRunSettings(from_section(PredictSettings, {}, "predict"), "nab", 2.6)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     model = Path(tmp, "model.parquet")
    ...     _ = model.write_bytes(pickle.dumps({"any": "object"}))
    ...     try:
    ...         predict_files(settings, str(model), "nab.parquet", str(Path(tmp, "p.parquet")),
    ...                       str(Path(tmp, "p.json")))
    ...     except InputError as err:
    ...         print(str(err).startswith(f"{model}: not a perfcast model file"))
    True
    """
    benchmark, clock_new_ghz = settings.benchmark, settings.clock_new_ghz
    bundle = load_model(model)  # first: a file that is no model is refused before any import

    from perfcast.model.conformal import Calibration, bounds
    from perfcast.model.knn import predict_run

    table = read_counters(counters)
    missing = [f for f in bundle["features"] if f not in table.columns]
    if missing:
        raise InputError(counters, f"lacks the model's counters {missing}",
                         expected="the events the model was trained on")
    cal = Calibration(**bundle["calibration"])  # its keys and scores checked by load_model
    require_numeric(table, list(bundle["features"]), counters)
    for f in bundle["features"]:  # a missing reading (NaN) is imputed; any other is a number
        x = table[f].to_numpy(dtype=float)
        given = ~np.isnan(x)
        require_values(x[given], counters, f, low=0, low_inclusive=True,
                       labels=table["interval"].to_numpy()[given].tolist())
    require_readings(table, bundle["features"], counters)
    check_alignable(table, counters)  # one run: align's checks (a run twice is refused)
    require_values(table["duration_s"], counters, "duration_s", low=0,
                   labels=table["interval"].tolist())
    pred = predict_run(bundle["model"], table, bundle["features"], clock_new_ghz)
    if len(pred) and pred["imputed"].all():  # nothing to borrow a ratio from
        raise InputError(counters, f"none of its {len(pred)} intervals has a reading of every "
                         f"counter {list(bundle['features'])}",
                         expected="at least one interval with all the model's counters")
    check_prediction(pred, counters, settings.predict)
    total_cycles = float(pred["cycles_new_pred"].sum())
    q, used = cal.quantile("cycles")
    lo, hi = bounds(total_cycles, q)
    info = {
        "benchmark": benchmark,
        "family": bundle.get("family", "knn"),
        "intervals": int(len(pred)),
        "imputed_intervals": int(pred["imputed"].sum()),
        "old_total_cycles": float(table["cycles"].sum()),
        "old_runtime_s": float(table["duration_s"].sum()),
        "predicted_new_total_cycles": total_cycles,
        "predicted_new_total_cycles_lower": lo,
        "predicted_new_total_cycles_upper": hi,
        "interval_coverage": used,
        "interval_method": "split-conformal on leave-one-benchmark-out log errors of "
                           f"{len(cal.cycles)} training benchmarks",
        "predicted_mean_ipc_new": float(pred["instructions"].sum() / total_cycles),
        "measured_mean_ipc_old": float(table["instructions"].sum() / table["cycles"].sum()),
        "clock_new_ghz": clock_new_ghz,
        "simulated": parquet_metadata(counters).get("simulated", False),
    }
    if clock_new_ghz:
        runtime = total_cycles / (clock_new_ghz * 1e9)
        if all(np.isfinite(list(cal.runtime.values()))):
            q_rt, _ = cal.quantile("runtime")
        else:  # calibrated without a clock: the runtime error is the cycles error
            q_rt = q
        rt_lo, rt_hi = bounds(runtime, q_rt)
        info |= {"predicted_new_runtime_s": runtime, "predicted_new_runtime_s_lower": rt_lo,
                 "predicted_new_runtime_s_upper": rt_hi}
    info["ipc_range"] = list(settings.predict.ipc_range)
    write_parquet(pred, out, metadata=info)
    write_json(info, summary)
    return info


def evaluation_html(settings: EvaluationPageSettings, markdown: str, out: str) -> None:
    """Rule ``model_evaluation_html``: the evaluation's Markdown as an HTML page the report
    shows in place (:func:`perfcast.mdhtml.convert_file`).

    Parameters
    ----------
    settings : EvaluationPageSettings
        the page's title.
    markdown : str
        ``evaluation.md``.
    out : str
        the HTML page to write.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.model.settings import EvaluationPageSettings
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     md, page = Path(tmp, "evaluation.md"), Path(tmp, "evaluation.html")
    ...     _ = md.write_text("| benchmark | cycles_error_pct |\\n|---|---|\\n| mcf | 1.50 |\\n")
    ...     evaluation_html(EvaluationPageSettings("Evaluation"), str(md), str(page))
    ...     html = page.read_text()
    >>> "<td>mcf</td>" in html and "Evaluation" in html
    True
    """
    from perfcast.mdhtml import convert_file

    convert_file(markdown, out, settings.title)


def predict_figure_file(settings: PredictFigureSettings, table: str, summary: str,
                        out: str) -> None:
    """Rule ``model_predict_figure``: an old-only benchmark's predicted new-generation IPC over
    time (:func:`perfcast.model.figures.predicted_ipc_over_time`).

    Parameters
    ----------
    settings : PredictFigureSettings
        whether the data are simulated (said in the title).
    table, summary : str
        the prediction (Parquet) and its summary (JSON) of rule ``model_predict``.
    out : str
        the PNG to write.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from perfcast.io import write_parquet
    >>> from perfcast.model.settings import PredictFigureSettings
    >>> pred = pd.DataFrame({"time": [0.1, 0.2, 0.3], "ipc_old": [1.0, 1.2, 1.1],
    ...                      "ipc_new_pred": [1.3, 1.5, 1.4]})
    >>> info = {"benchmark": "imagick", "predicted_new_total_cycles": 1e9,
    ...         "predicted_new_total_cycles_lower": 0.95e9,
    ...         "predicted_new_total_cycles_upper": 1.05e9, "interval_coverage": 0.9,
    ...         "predicted_mean_ipc_new": 1.4}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_parquet(pred, Path(tmp, "imagick.parquet"))
    ...     _ = Path(tmp, "imagick.json").write_text(json.dumps(info))
    ...     predict_figure_file(PredictFigureSettings(simulated=True),
    ...                         str(Path(tmp, "imagick.parquet")),
    ...                         str(Path(tmp, "imagick.json")), str(Path(tmp, "imagick.png")))
    ...     Path(tmp, "imagick.png").read_bytes()[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    """
    from perfcast.model import figures

    figures.predicted_ipc_over_time(read_parquet(table), json.loads(Path(summary).read_text()),
                                    Path(out), figures.simulated_note(settings.simulated))
