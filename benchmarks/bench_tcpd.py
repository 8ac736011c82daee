"""Change points on real annotated series: the Turing Change Point Dataset (TCPD).

The dataset (van den Burg & Williams 2020, <https://github.com/alan-turing-institute/TCPD>)
holds real-world series, each marked by several annotators. This scores the robust detector
with the dataset's own two metrics, written here from their published definitions:

* **F1** with a margin of 5 readings: precision ``|TP(union_k T_k, X)| / |X|`` and recall
  ``mean_k |TP(T_k, X)| / |T_k|``, with ``X`` the detected change points and ``T_k``
  annotator ``k``'s, both including the start (index 0); ``TP(T, X)`` the annotations
  matched, each to a different detection within the margin;
* **cover**: the covering of each annotator's partition by the detected one (Arbelaez et al.
  2011), ``(1/n) sum_A |A| max_A' |A & A'| / |A | A'|`` over the annotator's segments ``A``,
  averaged over the annotators.

Beside the detector with ``perfcast edm``'s defaults (alpha 0.01, ``min_effect`` 0.05) and
without its effect filter, it scores "no change at all" (the baseline the published table
starts from) and, where ruptures (Truong, Oudre & Vayatis 2020) is installed, binary
segmentation and PELT (Killick, Fearnhead & Eckley 2012) with the setting the dataset's paper
calls default: a change of mean and variance of normal readings (ruptures' ``normal`` cost,
twice the negative log-likelihood) with the penalty ``3 log n`` per change point, the leading
term of MBIC (the changepoint R package's default), segments of at least 2 readings, every
reading a candidate; binary segmentation also with at most 5 changes (the R package's
default ``Q`` for it). ruptures is a benchmark-only extra (``pip install -e '.[bench]'``,
never a dependency of perfcast); without it those two rows are skipped, saying so.
Univariate series without missing values only (those a downloader must fetch are scored
when present).

``TCPD_DIR=/path/to/TCPD python benchmarks/bench_tcpd.py`` (a local copy of the repository:
``annotations.json`` and ``datasets/*/*.json``; the data are not ours to ship, so nothing is
downloaded here) prints a table and writes benchmarks/out/tcpd.json.

References
----------
G. J. J. van den Burg, C. K. I. Williams, "An Evaluation of Change Point Detection
Algorithms", arXiv:2003.06222, 2020.

C. Truong, L. Oudre, N. Vayatis, "Selective review of offline change point detection
methods", Signal Processing 167:107299, 2020, doi:10.1016/j.sigpro.2019.107299 (ruptures).

R. Killick, P. Fearnhead, I. A. Eckley, "Optimal detection of changepoints with a linear
computational cost", Journal of the American Statistical Association 107(500):1590-1598,
2012, doi:10.1080/01621459.2012.737745 (PELT).

P. Arbelaez, M. Maire, C. Fowlkes, J. Malik, "Contour Detection and Hierarchical Image
Segmentation", IEEE TPAMI 33(5):898-916, 2011, doi:10.1109/TPAMI.2010.161 (covering).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

from perfcast.warmup.edm_robust import edm_robust  # noqa: E402

MARGIN = 5


def true_positives(truth: set[int], found: set[int], margin: int = MARGIN) -> set[int]:
    """The annotations in ``truth`` matched to a detection within ``margin``, each detection
    used once (the closest free one)."""
    free = set(found)
    hits = set()
    for t in sorted(truth):
        near = [x for x in free if abs(x - t) <= margin]
        if near:
            x = min(near, key=lambda v: (abs(v - t), v))
            free.discard(x)
            hits.add(t)
    return hits


def f1(annotations: dict[str, list[int]], found: list[int]) -> float:
    """F1 of ``found`` against every annotator's marks (see the module docstring).

    Precision matches the detections once against the union of all annotators' marks (a
    detection counts once however many annotators marked near it); recall is each annotator's
    own, averaged.

    Examples
    --------
    The known answers of the dataset's own ``f_measure``:

    >>> f1({"1": [10, 20], "2": [11, 20], "3": [10], "4": [0, 5]}, [10, 20])
    1.0
    >>> round(f1({"1": [], "2": [10], "3": [50]}, [10]), 10)
    0.9090909091
    >>> round(f1({"1": [], "2": [10], "3": [50]}, []), 10)
    0.8
    """
    x = set(found) | {0}
    marks = [set(m) | {0} for m in annotations.values()]
    precision = len(true_positives(set().union(*marks), x)) / len(x)
    recall = float(np.mean([len(true_positives(t, x)) / len(t) for t in marks]))
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def _partition(cps: list[int], n: int) -> list[tuple[int, int]]:
    b = sorted({0, n, *[c for c in cps if 0 < c < n]})
    return list(zip(b[:-1], b[1:], strict=True))


def cover(annotations: dict[str, list[int]], found: list[int], n: int) -> float:
    """Covering of each annotator's partition by ``found``'s, averaged over annotators."""
    pred = _partition(found, n)
    scores = []
    for truth in annotations.values():
        total = 0.0
        for a, b in _partition(truth, n):
            best = 0.0
            for c, d in pred:
                inter = max(0, min(b, d) - max(a, c))
                if inter:
                    best = max(best, inter / (max(b, d) - min(a, c)))
            total += (b - a) * best
        scores.append(total / n)
    return float(np.mean(scores))


def load(root: Path) -> list[tuple[str, np.ndarray, dict[str, list[int]]]]:
    """(name, readings, annotations) of each univariate series without missing values."""
    ann = json.loads((root / "annotations.json").read_text())
    out = []
    for f in sorted((root / "datasets").glob("*/*.json")):
        d = json.loads(f.read_text())
        if d.get("n_dim") != 1 or d.get("name") not in ann:
            continue
        raw = d["series"][0]["raw"]
        if any(v is None for v in raw):
            continue
        out.append((d["name"], np.asarray(raw, dtype=float), ann[d["name"]]))
    return out


def ruptures_methods() -> dict:
    """Binary segmentation and PELT of ruptures with the dataset paper's default setting (see the
    module docstring); empty, saying so, when ruptures is not installed."""
    try:
        import ruptures
    except ImportError:
        print("ruptures is not installed (pip install -e '.[bench]'): binary segmentation and "
              "PELT are not scored")
        return {}

    def run(algo, max_changes: int | None = None):
        def fn(x: np.ndarray) -> list[int]:
            if x.shape[0] < 4:
                return []
            # standardised: the normal cost is scale-free, its numerics are not
            y = ((x - x.mean()) / (x.std() or 1.0)).reshape(-1, 1)
            pen = 3.0 * np.log(x.shape[0])
            fit = algo(model="normal", min_size=2, jump=1).fit(y)
            bkps = fit.predict(pen=pen)
            if max_changes is not None and len(bkps) - 1 > max_changes:
                bkps = fit.predict(n_bkps=max_changes)  # the first splits, in greedy order
            return sorted(int(b) for b in bkps if b < x.shape[0])
        return fn

    return {"binary segmentation (ruptures, normal, 3 log n)": run(ruptures.Binseg),
            "binary segmentation, at most 5 changes": run(ruptures.Binseg, 5),
            "PELT (ruptures, normal, 3 log n)": run(ruptures.Pelt)}


def main() -> None:
    root = os.environ.get("TCPD_DIR")
    if not root or not (Path(root) / "annotations.json").exists():
        print("set TCPD_DIR to a local copy of https://github.com/alan-turing-institute/TCPD "
              "(annotations.json and datasets/); nothing to score")
        return
    series = load(Path(root))
    methods = {
        "zero": lambda x: [],
        "robust (perfcast edm defaults)": lambda x: edm_robust(x, alpha=0.01, min_effect=0.05),
        "robust, min_effect 0": lambda x: edm_robust(x, alpha=0.01, min_effect=0.0),
    }
    methods.update(ruptures_methods())
    rows = {}
    for name, fn in methods.items():
        per = []
        for sname, x, ann in series:
            cps = fn(x)
            per.append({"series": sname, "n": int(x.shape[0]), "change_points": cps,
                        "f1": f1(ann, cps), "cover": cover(ann, cps, x.shape[0])})
        rows[name] = {"f1": float(np.mean([p["f1"] for p in per])),
                      "cover": float(np.mean([p["cover"] for p in per])),
                      "no_change": sum(not p["change_points"] for p in per), "series": per}
        print(f"{name:>32}: F1 {rows[name]['f1']:.3f}, cover {rows[name]['cover']:.3f}, "
              f"no change on {rows[name]['no_change']} of {len(per)} series", flush=True)
    save("tcpd", {"series": len(series), "methods": rows})


if __name__ == "__main__":
    main()
