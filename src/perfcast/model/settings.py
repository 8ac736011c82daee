"""Settings of the alignment and model stages, from the validated ``align`` and ``model`` config
sections.

Frozen dataclasses without defaults: every default lives in the schema
(``src/perfcast/schemas/align.schema.yaml``, ``model.schema.yaml``), which
:func:`perfcast.settings.validate` applies before :func:`perfcast.settings.build` (or
:func:`perfcast.settings.from_section`, the command line's way) makes these objects. Fields are
keys of the section.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AlignSettings:
    """The ``align`` section: how an old and a new run of a benchmark are aligned.

    Attributes
    ----------
    method : ``exact`` (the DTW optimum in O(n + m)) or ``dtw`` (tslearn's ``dtw_path``).
    sakoe_chiba_radius : ``dtw`` only: the Sakoe-Chiba band radius in intervals (None: full DTW).
    instruction_tolerance : the largest relative difference of the two runs' total instructions.
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
    families : the candidate families (``constant``, ``ridge``, ``knn``) the
        leave-one-benchmark-out cross-validation chooses among.
    ridge_alphas : the grid of the ridge penalty.
    n_neighbors : the grid of k.
    weights : the grid of ``KNeighborsRegressor`` weights (``uniform``, ``distance``).
    cv_folds : GroupKFold splits on benchmark for the grid search.
    log1p : log1p-transform the PKI features before scaling.
    max_rows_per_benchmark : evenly thin each benchmark's rows to at most this many (None: all).
    coverage : of the prediction intervals (split-conformal on leave-one-benchmark-out errors).
    """

    families: tuple[str, ...]
    ridge_alphas: tuple[float, ...]
    n_neighbors: tuple[int, ...]
    weights: tuple[str, ...]
    cv_folds: int
    log1p: bool
    max_rows_per_benchmark: int | None
    coverage: float


@dataclass(frozen=True)
class PredictSettings:
    """The keys of the ``predict`` section the prediction uses.

    Attributes
    ----------
    ipc_range : the plausible IPC ``(lowest, highest)``: a predicted or measured IPC outside it
        fails the job (a counter that is wrong, not a slow or fast program).
    """

    ipc_range: tuple[float, float]
