"""The KNN's grid search: :class:`perfcast.model.knn.NeighbourSearch` against scikit-learn's
``GridSearchCV`` on the same rows and folds, as a ratio measured in one run.

The rows are shaped like the default configuration's training set (12 benchmarks of 530 rows,
14 log-normal PKI features, the default grid of 6 k x 2 weights and 4 ``GroupKFold`` folds). The
two searches must agree on the chosen point; the ratio of their CPU times is the speed-up the
model's training and every fold of its leave-one-benchmark-out evaluation get.

    .venv/bin/python benchmarks/bench_knn_search.py

Writes benchmarks/out/knn_search.json.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import GridSearchCV, GroupKFold

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

from perfcast.model.knn import NeighbourSearch, make_pipeline  # noqa: E402


def main() -> None:
    rng = np.random.default_rng(0)
    n_bench, rows, n_feat = 12, 530, 14
    x = rng.lognormal(0.0, 1.0, size=(n_bench * rows, n_feat))
    y = 1.2 + 0.1 * np.log1p(x[:, :3]).sum(axis=1) + 0.02 * rng.normal(size=len(x))
    groups = np.repeat(np.arange(n_bench), rows)
    ks, weights, cv = [1, 3, 5, 9, 15, 25], ["uniform", "distance"], GroupKFold(n_splits=4)
    t0 = time.process_time()
    ref = GridSearchCV(make_pipeline(True), {"knn__n_neighbors": ks, "knn__weights": weights},
                       cv=cv, scoring="neg_mean_absolute_error").fit(x, y, groups=groups)
    t_grid = time.process_time() - t0
    t0 = time.process_time()
    ours = NeighbourSearch(True, ks, weights, cv).fit(x, y, groups=groups)
    t_ours = time.process_time() - t0
    result = {"rows": len(x), "features": n_feat, "grid_points": len(ks) * len(weights),
              "gridsearchcv_cpu_s": round(t_grid, 3), "neighboursearch_cpu_s": round(t_ours, 3),
              "speedup": round(t_grid / t_ours, 2),
              "same_choice": ours.best_params_ == ref.best_params_,
              "max_score_difference": float(np.max(np.abs(
                  ours.cv_results_["mean_test_score"] - ref.cv_results_["mean_test_score"])))}
    save("knn_search", result)
    print(result)


if __name__ == "__main__":
    main()
