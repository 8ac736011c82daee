"""`perfcast` sub-commands of the sweep stage: ``fit`` (ARPE's and normal-form models of any
table or Extra-P text or JSON input) and
``sweep-import`` (a campaign run by the original ARPE scripts, as a run table)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from perfcast.errors import InputError
from perfcast.settings import help_default


def register(sub: argparse._SubParsersAction) -> None:
    """Add this stage's sub-commands to ``sub``."""
    p = sub.add_parser(
        "fit", usage="perfcast fit [-h] TABLE [--y COLUMN] [--x COLUMN [COLUMN ...]] "
                     "[options]",
        help="find the model of one column on others (ARPE forms, normal form); JSON",
        description="Univariate polynomials (order chosen by cross-validated error), the four "
                    "multivariate OLS forms (linear, interaction, quadratic, purequadratic) and "
                    "the performance model normal form c0 + sum c p^i log2(p)^j of Y on the X "
                    "columns; prints every model with its coefficients, statistics and CV "
                    "errors, the best one (lowest CV SMAPE over configurations) as a formula, "
                    "its family, and predictions with intervals. Reads a CSV/Parquet table, "
                    "an Extra-P text (.txt) or JSON (.json) input file, or an ARPE results "
                    "directory.")
    p.add_argument("csv", metavar="TABLE", nargs="?",
                   help="first, before --x/--parameters/--predict (which take several values): "
                        "table with a header row (.csv or .parquet), Extra-P text or JSON "
                        "input (.txt, .json: Y defaults to the measured value, X to its "
                        "parameters), or an ARPE results directory (with --parameters; "
                        "Y defaults to wall_s)")
    p.add_argument("--parameters", nargs="+", metavar="NAME",
                   help="ARPE results directory: the parameter names, in ARPE's order")
    p.add_argument("--level", action="append", default=[], metavar="NAME=VALUE",
                   help="keep the rows where a (categorical) column has this value; "
                        "repeatable (one model per level: run once per level)")
    p.add_argument("--y", metavar="COLUMN", help="the effect to model (required for a table)")
    p.add_argument("--x", nargs="+", metavar="COLUMN", help="regressors (required for a table)")
    p.add_argument("--region", help="Extra-P input: the region (call path) to model")
    p.add_argument("--metric", help="Extra-P input: the metric to model")
    p.add_argument("--derived", action="append", default=[], metavar="NAME=EXPR",
                   help="add a regressor computed from columns, e.g. energy_x=wall_s*power_w "
                        "(repeatable; usable in --x)")
    p.add_argument("--groups", metavar="COLUMN",
                   help="column naming each row's configuration for the CV folds; without "
                        "it, 'point' if present, else the distinct X tuples")
    p.add_argument("--predict", nargs="+", default=[], metavar="X=V,...",
                   help="points to predict with intervals, e.g. p=128 p=256 or p=128,n=5")
    p.add_argument("--plot", metavar="FILE", help="draw data, best model and intervals (.png)")
    # defaults (None here): sweep.fit's in src/perfcast/schemas/sweep.schema.yaml
    p.add_argument("--max-order", type=int, help="highest polynomial order "
                   + help_default("sweep", "fit.max_order"))
    p.add_argument("--cv-folds", type=int,
                   help="folds over configurations; leave-one-out when fewer "
                        + help_default("sweep", "fit.cv_folds"))
    p.add_argument("--forms", nargs="+", default=None,
                   choices=["linear", "interaction", "quadratic", "purequadratic"],
                   help="multivariate forms to fit "
                        + help_default("sweep", "fit.forms", " ".join))
    p.add_argument("--alpha", type=float, help="intervals at level 1 - alpha "
                   + help_default("sweep", "fit.alpha"))
    p.add_argument("--aggregate", choices=["mean", "median"],
                   help="repetitions per configuration for the normal form "
                        + help_default("sweep", "fit.normal_form.aggregate"))
    p.add_argument("--max-terms", type=int, help="normal-form terms per parameter, 1-2 "
                   + help_default("sweep", "fit.normal_form.max_terms"))
    p.add_argument("--no-normal-form", action="store_true",
                   help="ARPE's candidates only, chosen by CV MSE")
    p.set_defaults(func=_fit)

    q = sub.add_parser(
        "sweep-import", help="read an ARPE results directory or an Extra-P file into a run table",
        description="Read results/<values>/<iteration>/APRE_timed.txt (time -p real/user/sys "
                    "and the parameter values) as written by martinamaggio/arpe, or with "
                    "--format extrap one region and metric of an Extra-P input file (text or "
                    "JSON; the measurements in column value).")
    q.add_argument("path", metavar="PATH",
                   help="ARPE's results directory, or the Extra-P file (--format extrap)")
    q.add_argument("--format", choices=["arpe", "extrap"],
                   help="what PATH is " + help_default("sweep", "imports.*.format"))
    q.add_argument("--parameters", required=True, nargs="+", metavar="NAME",
                   help="the parameter names, in ARPE's order or as the Extra-P file declares "
                        "them")
    q.add_argument("--region", help="the Extra-P region to read (default: the file's only one)")
    q.add_argument("--metric", help="the Extra-P metric to read (default: the file's only one)")
    q.add_argument("--campaign", default="arpe",
                   help="the import's name, written in the table (a name, not a setting: "
                        "arpe when not given)")
    q.add_argument("-o", "--out", required=True, help="output table (.parquet or .csv)")
    q.set_defaults(func=_import)


#: flag of each sweep.fit key, to name flags (not config keys) in errors
FLAGS = {"fit.max_order": "--max-order", "fit.cv_folds": "--cv-folds", "fit.forms": "--forms",
         "fit.alpha": "--alpha", "fit.normal_form.aggregate": "--aggregate",
         "fit.normal_form.max_terms": "--max-terms"}


def fit_settings(args: argparse.Namespace):
    """The ``sweep.fit`` settings of ``perfcast fit``'s flags, checked and completed by the
    sweep schema (:func:`perfcast.settings.validate_flags`), as the workflow's.

    Parameters
    ----------
    args : argparse.Namespace
        ``perfcast fit``'s parsed flags; a flag left out is None (the schema's default).

    Returns
    -------
    FitSettings
        ``sweep.fit`` (:class:`perfcast.sweep.settings.FitSettings`).

    Raises
    ------
    InputError
        a flag value the schema refuses (``--max-order`` below 1 or above 12, ``--cv-folds``
        below 2), naming the flag and the schema key.

    Examples
    --------
    >>> args = argparse.Namespace(max_order=3, cv_folds=None, forms=None, alpha=None,
    ...                           aggregate=None, max_terms=None, no_normal_form=True)
    >>> fit = fit_settings(args)
    >>> fit.max_order, fit.cv_folds, fit.alpha, fit.normal_form.enabled
    (3, 10, 0.05, False)
    """
    from perfcast.settings import build, validate_flags
    from perfcast.sweep.settings import SweepSettings

    flags = {"max_order": args.max_order, "cv_folds": args.cv_folds, "forms": args.forms,
             "alpha": args.alpha}
    fit = {k: v for k, v in flags.items() if v is not None}
    nf = {"aggregate": args.aggregate, "max_terms": args.max_terms}
    fit["normal_form"] = {k: v for k, v in nf.items() if v is not None}
    if args.no_normal_form:
        fit["normal_form"]["enabled"] = False
    return build(SweepSettings, validate_flags({"fit": fit}, "sweep", FLAGS), where="sweep").fit


def parse_points(items: list[str]) -> list[dict[str, float]]:
    """``--predict`` values: each ``x=v,z=w`` one point.

    Parameters
    ----------
    items : list of str
        The ``--predict`` values.

    Returns
    -------
    list of dict of str to float
        One point per item.

    Raises
    ------
    InputError
        an item that is not NAME=NUMBER pairs separated by commas, names a parameter twice or
        gives a value that is not a finite number.

    Examples
    --------
    >>> parse_points(["p=128", "p=256,n=5"])
    [{'p': 128.0}, {'p': 256.0, 'n': 5.0}]
    """
    points = []
    for item in items:
        point = {}
        for pair in item.split(","):
            name, sep, value = pair.partition("=")
            name = name.strip()
            try:
                number = float(value)
            except ValueError:
                sep = ""
            if not sep or not name or name in point or not math.isfinite(number):
                raise InputError(None, f"--predict {item!r}",
                                 expected="NAME=NUMBER[,NAME=NUMBER...] per point, each name "
                                          "once and each number finite, e.g. p=128 or "
                                          "p=128,n=5 (several points: p=128 p=256)")
            point[name] = number
        points.append(point)
    return points


#: the flags of ``perfcast fit`` that take several values, so swallow a TABLE given after them
MULTI_VALUE_FLAGS = ("x", "parameters", "predict")
#: the endings of the inputs ``perfcast fit`` reads
TABLE_SUFFIXES = (".csv", ".parquet", ".txt", ".json")


def table_argument(args: argparse.Namespace) -> str:
    """``perfcast fit``'s TABLE, or a clear refusal when it is missing: given after a flag of
    several values (``--x a b runs.csv``), argparse hands it to that flag, and the message then
    names the flag, the value taken for the table and the two ways to write it.

    Parameters
    ----------
    args : argparse.Namespace
        ``perfcast fit``'s parsed arguments (``csv`` is None when no TABLE was left over).

    Returns
    -------
    str
        The TABLE.

    Raises
    ------
    InputError
        no TABLE; naming the swallowed value when a flag of several values took an existing
        path or a file name ending in .csv, .parquet, .txt or .json.

    Examples
    --------
    >>> ns = argparse.Namespace(csv=None, x=["a", "b", "runs.csv"], parameters=None,
    ...                         predict=[])
    >>> table_argument(ns)
    Traceback (most recent call last):
    ...
    perfcast.errors.InputError: <input>: no TABLE: --x took 'runs.csv' as one of its values ...
    """
    if args.csv is not None:
        return args.csv
    for dest in MULTI_VALUE_FLAGS:
        values = getattr(args, dest, None) or []
        if values and (Path(values[-1]).exists() or values[-1].endswith(TABLE_SUFFIXES)):
            flag, table = f"--{dest}", values[-1]
            rest = " ".join(values[:-1])
            raise InputError(None, f"no TABLE: {flag} took {table!r} as one of its values",
                             expected=f"the TABLE first, perfcast fit {table} {flag} {rest} "
                                      f"..., or -- after {flag}'s values")
    raise InputError(None, "no TABLE", expected="perfcast fit TABLE [--y COLUMN] "
                                                "[--x COLUMN ...]: a .csv/.parquet table, an "
                                                "Extra-P .txt or .json file, or an ARPE "
                                                "results directory")


def _fit(args: argparse.Namespace) -> int:
    import pandas as pd

    from perfcast.sweep import selection
    from perfcast.sweep.analysis import add_derived
    from perfcast.sweep.expressions import expression_names
    from perfcast.sweep.runner import json_safe
    from perfcast.sweep.tables import pooled_categories, read_fit_input

    args.csv = table_argument(args)
    fit = fit_settings(args)
    points = parse_points(args.predict)

    derived = {}
    for item in args.derived:
        name, sep, expr = item.partition("=")
        if not sep or not name.strip() or not expr.strip():
            raise InputError(None, f"--derived {item!r}", expected="NAME=EXPRESSION")
        derived[name.strip()] = expr.strip()
    inp = read_fit_input(args.csv, y=args.y, x=args.x, parameters=args.parameters,
                         levels=args.level, region=args.region, metric=args.metric,
                         derived=derived, groups=args.groups)
    df, y, x = inp.data, inp.y, inp.x
    repeated = sorted({c for c in x if list(x).count(c) > 1})
    if repeated:
        raise InputError(None, f"--x names {repeated[0]!r} twice", expected="each regressor once")
    if y in x:
        raise InputError(None, f"--y {y!r} is also a regressor (--x)",
                         expected="a response that is not one of its own regressors")
    if args.groups and args.groups not in df.columns:
        raise InputError(args.csv, f"no column {args.groups!r} for --groups", row=1)
    try:
        df = add_derived(df, derived)
    except InputError as exc:  # the expression's error, in the table it was evaluated on
        raise InputError(args.csv, str(exc).removeprefix("<input>: ")) from None
    # a table's other columns, once the derived ones exist (ARPE folders refuse such columns)
    pooled = [*inp.notes, *(pooled_categories(df, {y, *x, *derived, args.groups, "point"}, x)
                            if inp.is_table else [])]
    groups = df[args.groups].tolist() if args.groups else (
        df["point"].tolist() if "point" in df.columns else None)
    extra = pd.DataFrame(points)
    if points:
        for name, expr in derived.items():
            if expression_names(expr) <= set(extra.columns):
                extra = add_derived(extra, {name: expr})
    try:
        res = selection.fit_effect(df, y, y, x, fit=fit, groups=groups,
                                   asked=extra if points else None)
    except InputError as exc:  # a column's error, in the table it comes from
        raise InputError(args.csv, str(exc).removeprefix("<input>: ")) from None
    out = selection.result_summary(res)
    out["notes"] = [*out["notes"], *pooled]
    for note in pooled:
        print(f"perfcast fit: warning: {args.csv}: {note}", file=sys.stderr)
    out["source"] = str(args.csv)
    out["derived"] = derived
    if points:
        need = res.best.x if res.best is not None else x
        lacking = sorted(set(need) - set(extra.columns))
        if lacking:
            raise InputError(None, f"--predict points lack {lacking}",
                             expected=f"a value for each of {list(need)}")
        _check_points(points, df, y, x, derived)
        pred = selection.predict_frame(res, extra, fit.alpha, source="--predict",
                                       positive=selection.positive_effect(df, y, x))
        out["alpha"] = fit.alpha
        out["predictions"] = pred.to_dict(orient="records")
        for _, row in pred[pred["extrapolation"] != ""].iterrows():
            at = ",".join(f"{n}={row[n]:g}" for n in res.best.x)
            print(f"perfcast fit: note: {at} is an extrapolation, {row['extrapolation']}: "
                  f"{row['mean']:.4g} [{row['obs_ci_lower']:.4g}, {row['obs_ci_upper']:.4g}], "
                  "the interval widened by the spread of the competitive models there "
                  f"({row['model_spread']:.3g})", file=sys.stderr)
    if args.plot:
        from perfcast.sweep.figures import plot_model

        rows = df[selection.usable_rows(df, y, x)]
        plot_model(res, rows, args.plot, fit.alpha, extra=extra if points else None)
        out["plot"] = str(args.plot)
    json.dump(json_safe(out), sys.stdout, indent=2, default=_num)
    sys.stdout.write("\n")
    return 0


def _check_points(points: list[dict[str, float]], df, y: str, x: list[str],
                  derived: dict[str, str]) -> None:
    """Refuse a ``--predict`` point that names no regressor (a typo would be echoed back
    and ignored) or sets one the data do not vary (measured at one value, it is not in the
    model, which then says nothing of another value)."""
    import numpy as np

    from perfcast.sweep.selection import usable_rows

    rows = df[usable_rows(df, y, x)]
    for point in points:
        text = ",".join(f"{k}={v:g}" for k, v in point.items())
        for name, value in point.items():
            if name not in x and name not in derived:
                raise InputError(None, f"--predict {text}: {name!r} is not a regressor",
                                 expected=f"values of the regressors {list(x)}")
            if name in x:
                seen = np.unique(rows[name].to_numpy(dtype=float))
                if len(seen) == 1 and value != seen[0]:
                    raise InputError(None, f"--predict {text}: {name} was measured at "
                                           f"{seen[0]:g} only, so the model leaves it out and "
                                           f"says nothing of {name}={value:g}",
                                     expected=f"{name}={seen[0]:g} (or measurements at "
                                              f"other values of {name})")


def import_settings(args: argparse.Namespace):
    """``perfcast sweep-import``'s flags as an import of the ``sweep:`` section, validated by
    the sweep schema and checked by :func:`perfcast.sweep.campaign_parser.parse_sweep`: the
    settings of rule ``sweep_import`` (:class:`perfcast.sweep.job_settings.ImportTableSettings`),
    built as the workflow builds them.

    Parameters
    ----------
    args : argparse.Namespace
        ``perfcast sweep-import``'s parsed flags (``path``, ``parameters``, ``campaign``).

    Returns
    -------
    ImportTableSettings
        What :func:`perfcast.sweep.rules.import_table` takes.

    Raises
    ------
    InputError
        a campaign or parameter name the workflow would refuse.

    Examples
    --------
    >>> args = argparse.Namespace(path="results", parameters=["threads"], campaign="old",
    ...                           format=None, region=None, metric=None)
    >>> s = import_settings(args)
    >>> s.campaign, s.format, s.path, s.parameters, s.region
    ('old', 'arpe', 'results', ('threads',), None)
    """
    from perfcast.settings import schema_default, validate
    from perfcast.sweep.campaign_parser import parse_sweep

    given = {k: getattr(args, k) for k in ("format", "region", "metric")
             if getattr(args, k, None) is not None}
    section = {"imports": {args.campaign: {"path": args.path, "parameters": args.parameters,
                                           **given}}}
    # an import runs nothing: the seed (of campaigns' {seed}) is the config's default
    return parse_sweep(validate(section, "sweep"),
                       seed=schema_default("config", "seed")).import_settings(args.campaign)


def _import(args: argparse.Namespace) -> int:
    from perfcast.sweep.rules import import_format, import_table

    import_format(args.out, f"-o {args.out!r}")  # before reading, naming the flag
    meta = import_table(import_settings(args), out=args.out)
    summary = {k: v for k, v in meta.items() if k not in ("campaign", "parameters", "source")}
    json.dump({"out": args.out, **summary}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _num(obj):
    import numpy as np

    if isinstance(obj, np.integer | np.bool_):
        return obj.item()
    if isinstance(obj, np.floating):
        return float(obj)
    raise TypeError(type(obj).__name__)
