"""Settings of the alignment and model stages, from the validated ``align`` and ``model`` config
sections.

Frozen dataclasses without defaults: every default lives in the schema
(``src/perfcast/schemas/align.schema.yaml``, ``model.schema.yaml``), which
:func:`perfcast.settings.validate` applies before :func:`perfcast.settings.build` (or
:func:`perfcast.settings.from_section`, the command line's way) makes these objects. Fields are
keys of the section.

Each rule of the stages receives one settings object (its one ``settings`` param, built by a
function of ``workflow/rules/common/model.smk``), which nests the section's object with what the
job needs besides (its benchmark, the new generation's clock...): :class:`AlignRunSettings`,
:class:`TrainsetSettings`, :class:`TrainSettings`, :class:`EvaluateSettings`,
:class:`PredictRunSettings`, :class:`PredictFigureSettings`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

#: the largest ridge penalty (``model.ridge_alphas``' schema maximum, and the largest a model
#: file may hold): beyond it every coefficient is zero to double precision and the ridge is
#: the constant mean of the log ratio
MAX_RIDGE_ALPHA = 1e12


@dataclass(frozen=True)
class AlignSettings:
    """The ``align`` section: how an old and a new run of a benchmark are aligned.

    Attributes
    ----------
    method : str
        ``exact`` (the DTW optimum in O(n + m)) or ``dtw`` (tslearn's ``dtw_path``).
    sakoe_chiba_radius : int or None
        ``dtw`` only: the Sakoe-Chiba band radius in intervals (None: full DTW).
    instruction_tolerance : float
        the largest relative difference of the two runs' total instructions.
    """

    method: str
    sakoe_chiba_radius: int | None
    instruction_tolerance: float


@dataclass(frozen=True)
class KnnSettings:
    """The keys of the ``model`` section the model uses (train and evaluate): the candidate
    families (:mod:`perfcast.model.families`), the KNN's and the ridge's grids.

    ``model.enabled`` and ``model.stable_only`` decide which jobs and inputs exist, not how the
    model is fitted, so they are not here (a change of them reruns nothing by itself).

    Attributes
    ----------
    families : tuple of str
        the candidate families (``constant``, ``ridge``, ``knn``) the
        leave-one-benchmark-out cross-validation chooses among.
    whole_run_families : tuple of str
        the candidates when the tables hold whole runs (:meth:`for_tables`).
    ridge_alphas : tuple of float
        the grid of the ridge penalty.
    n_neighbors : tuple of int
        the grid of k.
    weights : tuple of str
        the grid of ``KNeighborsRegressor`` weights (``uniform``, ``distance``).
    cv_folds : int
        GroupKFold splits on benchmark for the grid search.
    log1p : bool
        log1p-transform the PKI features before scaling.
    max_rows_per_benchmark : int or None
        evenly thin each benchmark's rows to at most this many (None: all).
    coverage : float
        of the prediction intervals (split-conformal on leave-one-benchmark-out errors).
    """

    families: tuple[str, ...]
    whole_run_families: tuple[str, ...]
    ridge_alphas: tuple[float, ...]
    n_neighbors: tuple[int, ...]
    weights: tuple[str, ...]
    cv_folds: int
    log1p: bool
    max_rows_per_benchmark: int | None
    coverage: float

    def for_tables(self, whole_run: bool) -> KnnSettings:
        """These settings with the candidates for the tables' granularity: ``families`` for
        interval tables, ``whole_run_families`` for whole runs (one row per benchmark: a KNN
        over 20-30 points, one per benchmark, has no neighbourhood to be local in)."""
        if not whole_run:
            return self
        return dataclasses.replace(self, families=self.whole_run_families)


@dataclass(frozen=True)
class PredictSettings:
    """The keys of the ``predict`` section the prediction uses.

    Attributes
    ----------
    ipc_range : (float, float)
        the plausible IPC ``(lowest, highest)``: a predicted or measured IPC outside it
        fails the job (a counter that is wrong, not a slow or fast program).
    """

    ipc_range: tuple[float, float]


@dataclass(frozen=True)
class AlignRunSettings:
    """Rule ``model_align`` (and ``perfcast align``): the alignment of one benchmark's runs.

    Attributes
    ----------
    align : AlignSettings
        the ``align`` section.
    benchmark : str
        the benchmark (metadata, figure title).
    generations : (str, str)
        ``(old, new)`` generation names (the figure's legend).
    """

    align: AlignSettings
    benchmark: str
    generations: tuple[str, str]


@dataclass(frozen=True)
class TrainsetSettings:
    """Rule ``model_trainset``: the training set of every training benchmark.

    Attributes
    ----------
    benchmarks : tuple of str
        the training benchmarks (``counters.benchmarks``), in the order of the rule's inputs.
    """

    benchmarks: tuple[str, ...]


@dataclass(frozen=True)
class TrainSettings:
    """Rule ``model_train``: fit, choose and calibrate the model.

    Attributes
    ----------
    model : KnnSettings
        the ``model`` section's keys the model uses.
    benchmarks : tuple of str
        the training benchmarks, in the order of the rule's inputs.
    clock_new_ghz : float or None
        ``counters.clock_ghz`` of the new generation (None: cycles only, no runtime).
    """

    model: KnnSettings
    benchmarks: tuple[str, ...]
    clock_new_ghz: float | None


@dataclass(frozen=True)
class EvaluateSettings:
    """Rule ``model_evaluate``: leave-one-benchmark-out evaluation.

    Attributes
    ----------
    model : KnnSettings
        the ``model`` section's keys the model uses.
    benchmarks : tuple of str
        the training benchmarks, in the order of the rule's inputs.
    clock_new_ghz : float or None
        ``counters.clock_ghz`` of the new generation (None: cycles only, no runtime).
    simulated : bool
        the counters are simulated (said at the top of the Markdown).
    stable_not_run : str or None
        why the evaluation on the stable intervals is not run (no phase labels), said in the
        Markdown and the log; None when it is run.
    """

    model: KnnSettings
    benchmarks: tuple[str, ...]
    clock_new_ghz: float | None
    simulated: bool
    stable_not_run: str | None


@dataclass(frozen=True)
class PredictRunSettings:
    """Rule ``model_predict`` (and ``perfcast predict``): one old-only benchmark's prediction.

    Attributes
    ----------
    predict : PredictSettings
        the ``predict`` section's keys the prediction uses.
    benchmark : str
        the benchmark (in the summary).
    clock_new_ghz : float or None
        ``counters.clock_ghz`` of the new generation (adds the predicted runtime; None: cycles
        only).
    """

    predict: PredictSettings
    benchmark: str
    clock_new_ghz: float | None


@dataclass(frozen=True)
class PredictFigureSettings:
    """Rule ``model_predict_figure``.

    Attributes
    ----------
    simulated : bool
        the counters are simulated (said in the title).
    """

    simulated: bool


@dataclass(frozen=True)
class EvaluationPageSettings:
    """Rule ``model_evaluation_html``: the evaluation's Markdown as an HTML page.

    Attributes
    ----------
    title : str
        the page's title.
    """

    title: str
