"""Polynomial design matrices: the terms of ARPE's models and their numerically sane fitting.

A term is a tuple of exponents, one per regressor: ``(1, 0)`` is ``a``, ``(1, 1)`` is ``a*b``,
``(2, 0)`` is ``a^2``, ``(0, 0)`` the intercept. ARPE's models (its paper's eq. 1 and 3) are:

- univariate polynomial of order n in one parameter: ``x0 + x1 p + ... + xn p^n``;
- the four multivariate forms of MATLAB's ``x2fx``/``regstats`` (``analyzedata.m``):
  ``linear`` (a); ``interaction`` (a + products of pairs, b); ``quadratic`` (b + squares, c);
  ``purequadratic`` (a + squares, d).

The design is built on standardised regressors z = (x - mean) / std, so p^6 at p ~ 1000 does
not wreck the conditioning; coefficients are mapped back to raw units exactly (each term set
is closed under divisors, so every expanded monomial is itself a term) and the covariance with
them: raw = T @ scaled, cov_raw = T cov T'. Terms that are linear combinations of earlier ones
(a square of a two-level parameter, a regressor that never varies) are dropped and reported.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from math import comb

import numpy as np

Term = tuple[int, ...]
FORMS = ("linear", "interaction", "quadratic", "purequadratic")
#: a column whose residual on the earlier ones is below this fraction of its norm is dependent
RANK_TOL = 1e-8


def polynomial_terms(order: int) -> list[Term]:
    """Intercept, p, p^2, ..., p^order of a single regressor."""
    return [(k,) for k in range(order + 1)]


def form_terms(form: str, n_vars: int) -> list[Term]:
    """Terms of one of ARPE's four forms (MATLAB ``x2fx`` order: constant, linear, products,
    squares)."""
    if form not in FORMS:
        raise ValueError(f"unknown form {form!r}; expected one of {FORMS}")
    unit = [tuple(int(i == j) for j in range(n_vars)) for i in range(n_vars)]
    terms: list[Term] = [(0,) * n_vars, *unit]
    if form in ("interaction", "quadratic"):
        terms += [tuple(int(k in (i, j)) for k in range(n_vars))
                  for i, j in itertools.combinations(range(n_vars), 2)]
    if form in ("quadratic", "purequadratic"):
        terms += [tuple(2 * int(i == j) for j in range(n_vars)) for i in range(n_vars)]
    return terms


def term_name(term: Term, names: Sequence[str]) -> str:
    """``const``, ``size``, ``size*threads``, ``size^2``."""
    parts = [n if e == 1 else f"{n}^{e}" for n, e in zip(names, term, strict=True) if e]
    return "*".join(parts) if parts else "const"


def _divides(a: Term, b: Term) -> bool:
    return all(x <= y for x, y in zip(a, b, strict=True))


class Standardiser:
    """z = (x - center) / scale per column; a constant column keeps scale 1. With ``w``, the
    rows are weighted (a row standing for ``w`` runs: the runs' mean and standard deviation)."""

    def __init__(self, X: np.ndarray, w: np.ndarray | None = None) -> None:
        X = np.asarray(X, dtype=float)
        if w is None:
            self.center = X.mean(axis=0)
            scale = X.std(axis=0)
        else:
            self.center = np.average(X, axis=0, weights=w)
            scale = np.sqrt(np.average((X - self.center) ** 2, axis=0, weights=w))
        self.scale = np.where(scale > 0, scale, 1.0)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return (np.asarray(X, dtype=float) - self.center) / self.scale


def design(Z: np.ndarray, terms: Sequence[Term]) -> np.ndarray:
    """Columns prod_j z_j^e_j, one per term (intercept included when a term is all zeros)."""
    Z = np.asarray(Z, dtype=float)
    cols = [np.prod(Z ** np.asarray(t, dtype=float), axis=1) for t in terms]
    return np.column_stack(cols) if cols else np.empty((Z.shape[0], 0))


def independent_terms(D: np.ndarray, terms: Sequence[Term]) -> tuple[list[int], list[int]]:
    """Indices of terms to keep / drop: Gram-Schmidt in term order keeps a column only when it
    adds a direction; a term whose divisor was dropped is dropped too (keeps the set closed)."""
    basis: list[np.ndarray] = []
    keep: list[int] = []
    for i in range(D.shape[1]):
        col = D[:, i].astype(float)
        r = col.copy()
        for q in basis:
            r -= (q @ r) * q
        norm = np.linalg.norm(col)
        if norm > 0 and np.linalg.norm(r) > RANK_TOL * max(norm, 1.0):
            basis.append(r / np.linalg.norm(r))
            keep.append(i)
    kept_terms = {terms[i] for i in keep}
    changed = True
    while changed:
        changed = False
        for i in list(keep):
            t = terms[i]
            if any(_divides(d, t) and d != t and d not in kept_terms for d in terms):
                keep.remove(i)
                kept_terms.discard(t)
                changed = True
    drop = [i for i in range(D.shape[1]) if i not in keep]
    return keep, drop


def raw_transform(terms: Sequence[Term], center: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """T with raw_coef = T @ scaled_coef, for polynomials in z = (x - center) / scale.

    prod_j ((x_j - c_j)/s_j)^e_j = sum over k <= e of prod_j C(e_j, k_j) (-c_j)^(e_j-k_j)
    x_j^k_j / s_j^e_j; the term set must contain every such monomial k (closed under divisors).

    Parameters
    ----------
    terms : sequence of Term
        The exponent tuples of the polynomial, closed under divisors.
    center, scale : numpy.ndarray
        The standardisation of each regressor.

    Returns
    -------
    numpy.ndarray
        (len(terms), len(terms)) matrix T.
    """
    index = {t: i for i, t in enumerate(terms)}
    T = np.zeros((len(terms), len(terms)))
    for col, e in enumerate(terms):
        for k in itertools.product(*(range(ej + 1) for ej in e)):
            c = 1.0
            for ej, kj, cj, sj in zip(e, k, center, scale, strict=True):
                c *= comb(ej, kj) * (-cj) ** (ej - kj) / sj**ej
            if c == 0.0:
                continue
            if k not in index:
                raise ValueError(f"term set not closed under divisors: {k} missing for {e}")
            T[index[k], col] += c
    return T


def lstsq_predict(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray,
                  terms: Sequence[Term], w: np.ndarray | None = None) -> np.ndarray:
    """Predictions of an OLS fit of ``terms`` on (X_train, y_train) at X_test (for CV folds;
    dependent terms are dropped on the training part as in the full fit).

    Parameters
    ----------
    X_train, y_train : numpy.ndarray
        The training fold's regressors (n, d) and effect (n,).
    X_test : numpy.ndarray
        The held-out rows' regressors.
    terms : sequence of Term
        The exponent tuples of the design.
    w : numpy.ndarray, optional, default=None
        The number of runs each training row stands for (``y_train`` their means): the fit
        of the runs.

    Returns
    -------
    numpy.ndarray
        One prediction per row of ``X_test``.
    """
    std = Standardiser(X_train, w)
    D = design(std(X_train), terms)
    if w is not None:
        sw = np.sqrt(w)
        D, y_train = D * sw[:, None], y_train * sw
    keep, _ = independent_terms(D, terms)
    beta, *_ = np.linalg.lstsq(D[:, keep], y_train, rcond=None)
    return design(std(X_test), [terms[i] for i in keep]) @ beta
