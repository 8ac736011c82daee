"""`perfcast` sub-commands of the sweep stage: ``fit`` (ARPE's models of any table) and
``sweep-import`` (a campaign run by the original ARPE scripts, as a run table)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from perfcast.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    """Add this stage's sub-commands to ``sub``."""
    p = sub.add_parser(
        "fit", help="fit ARPE's models of one column on others; print JSON",
        description="Univariate polynomials (order chosen by cross-validated error) and the four "
                    "multivariate OLS forms (linear, interaction, quadratic, purequadratic) of "
                    "Y on the X columns; prints every model's order or form, coefficients with "
                    "standard errors, MSE, R^2, adjusted R^2, CV MSE, and the best model.")
    p.add_argument("csv", metavar="CSV", help="table with a header row (.csv or .parquet)")
    p.add_argument("--y", required=True, metavar="COLUMN", help="the effect to model")
    p.add_argument("--x", required=True, nargs="+", metavar="COLUMN", help="regressors")
    p.add_argument("--derived", action="append", default=[], metavar="NAME=EXPR",
                   help="add a regressor computed from columns, e.g. energy_x=wall_s*power_w "
                        "(repeatable; usable in --x)")
    p.add_argument("--groups", metavar="COLUMN",
                   help="column naming each row's configuration for the CV folds (default: "
                        "'point' if present, else the distinct X tuples)")
    # defaults (None here): sweep.fit's in workflow/schemas/sweep.schema.yaml
    p.add_argument("--max-order", type=int, help="highest polynomial order (4)")
    p.add_argument("--cv-folds", type=int,
                   help="folds over configurations; leave-one-out when fewer (10)")
    p.add_argument("--forms", nargs="+", default=None,
                   choices=["linear", "interaction", "quadratic", "purequadratic"],
                   help="multivariate forms to fit (all four)")
    p.set_defaults(func=_fit)

    q = sub.add_parser(
        "sweep-import", help="read an ARPE results directory into a run table",
        description="Read results/<values>/<iteration>/APRE_timed.txt (time -p real/user/sys "
                    "and the parameter values) as written by martinamaggio/arpe.")
    q.add_argument("path", metavar="DIR", help="ARPE's results directory")
    q.add_argument("--parameters", required=True, nargs="+", metavar="NAME",
                   help="the parameter names, in ARPE's order")
    q.add_argument("--campaign", default="arpe", help="campaign name for the table (arpe)")
    q.add_argument("-o", "--out", required=True, help="output table (.parquet or .csv)")
    q.set_defaults(func=_import)


def fit_settings(args: argparse.Namespace):
    """The ``sweep.fit`` settings of ``perfcast fit``'s flags, checked and completed by the
    sweep schema (:func:`perfcast.settings.from_section`), as the workflow's.

    Raises
    ------
    InputError
        a flag value the schema refuses (``--max-order`` below 1 or above 12, ``--cv-folds``
        below 2).
    """
    from perfcast.settings import from_section
    from perfcast.sweep.settings import SweepSettings

    flags = {"max_order": args.max_order, "cv_folds": args.cv_folds, "forms": args.forms}
    fit = {k: v for k, v in flags.items() if v is not None}
    return from_section(SweepSettings, {"fit": fit}, "sweep").fit


def _fit(args: argparse.Namespace) -> int:
    from perfcast.sweep import selection
    from perfcast.sweep.analysis import add_derived
    from perfcast.sweep.expressions import expression_names
    from perfcast.sweep.runner import json_safe
    from perfcast.sweep.table import load_table

    fit = fit_settings(args)

    derived = {}
    for item in args.derived:
        name, sep, expr = item.partition("=")
        if not sep or not name.strip() or not expr.strip():
            raise InputError(None, f"--derived {item!r}", expected="NAME=EXPRESSION")
        derived[name.strip()] = expr.strip()
    repeated = sorted({x for x in args.x if args.x.count(x) > 1})
    if repeated:
        raise InputError(None, f"--x names {repeated[0]!r} twice", expected="each regressor once")
    if args.y in args.x:
        raise InputError(None, f"--y {args.y!r} is also a regressor (--x)",
                         expected="a response that is not one of its own regressors")
    needed = {args.y, *args.x} - set(derived)
    for name, expr in derived.items():
        needed |= expression_names(expr, where=f"--derived {name}") - set(derived)
    if args.groups:
        needed.add(args.groups)
    df = load_table(args.csv, sorted(needed - ({args.groups} if args.groups else set())))
    if args.groups and args.groups not in df.columns:
        raise InputError(args.csv, f"no column {args.groups!r} for --groups", row=1)
    try:
        df = add_derived(df, derived)
    except InputError as exc:  # the expression's error, in the table it was evaluated on
        raise InputError(args.csv, str(exc).removeprefix("<input>: ")) from None
    groups = df[args.groups].tolist() if args.groups else (
        df["point"].tolist() if "point" in df.columns else None)
    res = selection.fit_effect(df, args.y, args.y, args.x, groups=groups,
                               max_order=fit.max_order, cv_folds=fit.cv_folds,
                               forms=list(fit.forms))
    out = selection.result_summary(res)
    out["source"] = str(args.csv)
    out["derived"] = derived
    json.dump(json_safe(out), sys.stdout, indent=2, default=_num)
    sys.stdout.write("\n")
    return 0


def import_settings(args: argparse.Namespace):
    """``perfcast sweep-import``'s flags as an import of the ``sweep:`` section, checked by the
    sweep schema and :func:`perfcast.sweep.campaign.parse_import`, as the workflow's.

    Raises
    ------
    InputError
        a campaign or parameter name the workflow would refuse.
    """
    from perfcast.settings import from_section
    from perfcast.sweep.campaign import parse_import
    from perfcast.sweep.settings import SweepSettings

    section = {"imports": {args.campaign: {"path": args.path, "parameters": args.parameters}}}
    settings = from_section(SweepSettings, section, "sweep")
    return parse_import(args.campaign, settings.imports[args.campaign])


def _import(args: argparse.Namespace) -> int:
    from perfcast.io import write_csv, write_parquet
    from perfcast.sweep.arpe import import_arpe
    from perfcast.sweep.table import summary

    suffix = Path(args.out).suffix
    if suffix not in (".csv", ".parquet"):
        raise InputError(None, f"-o {args.out!r}: the table's format is told by its suffix, "
                         f"and {suffix or 'no suffix'!r} is neither", expected=".parquet or .csv")
    spec = import_settings(args)
    df = import_arpe(spec.path, list(spec.parameters), spec.name)
    if suffix == ".csv":
        write_csv(df, args.out)
    else:
        write_parquet(df, args.out, metadata={"campaign": args.campaign,
                                              "parameters": args.parameters,
                                              "source": f"ARPE results at {args.path}"})
    json.dump({"out": args.out, **summary(df, args.parameters)}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _num(obj):
    import numpy as np

    if isinstance(obj, np.integer | np.bool_):
        return obj.item()
    if isinstance(obj, np.floating):
        return float(obj)
    raise TypeError(type(obj).__name__)
