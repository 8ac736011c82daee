"""The run summary: what a user is told at the end of a run.

Read from the stages' own outputs (nothing is recomputed), one section per stage: what ran,
what did not and why, every target met or missed, and the headline figures. A missed target, a
stage that did not run, a failed run is a *warning*: listed first in ``summary.md`` and in the
``warnings`` of ``summary.json``, never left to a log. Rule ``run_summary`` writes it; the
Snakefile's handlers print ``summary.md`` on the console (:mod:`perfcast.runend`); the report
shows its HTML (:mod:`perfcast.mdhtml`) on its first page.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from perfcast.errors import InputError


@dataclass
class Section:
    """One stage's part of the summary."""

    stage: str
    title: str
    ran: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    targets: list[dict[str, Any]] = field(default_factory=list)
    headline: list[str] = field(default_factory=list)
    numbers: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: what a reader should know that is no missed target (a cross-check that failed)
    notes: list[str] = field(default_factory=list)

    def target(self, what: str, value: Any, target: Any, met: bool, detail: str = "") -> None:
        """Record a target; a missed one is also a warning.

        Parameters
        ----------
        what : str
            The target, in words.
        value : Any
            What the run reached.
        target : Any
            What it should have reached (None: a target with no number).
        met : bool
            Whether it was reached.
        detail : str, default=""
            Said after the value.
        """
        self.targets.append({"what": what, "value": value, "target": target, "met": bool(met),
                             "detail": detail})
        if not met:
            against = f": {value} against {target}" if target is not None else ""
            self.warnings.append(f"{self.title}: {what} missed{against}"
                                 + (f" ({detail})" if detail else ""))

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("stage", "title", "ran", "not_run", "targets",
                                              "headline", "numbers", "warnings", "notes")}


def _json(path: str | Path) -> dict[str, Any]:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise InputError(path, f"cannot be read as JSON: {err}",
                         expected="a stage's summary") from None


def fmt(x: Any, digits: int = 2) -> str:
    """A number as the summary prints it (``digits`` decimals; ``n/a`` for none or NaN)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    if isinstance(x, int | bool):
        return str(x)
    return f"{x:.{digits}f}"


def pct(x: float | None) -> str:
    """A fraction as a percentage with one decimal."""
    return "n/a" if x is None else f"{100 * x:.1f} %"


# --------------------------------------------------------------------------------- stages


def model_section(evaluation: str | Path | None, predictions: Sequence[str | Path],
                  counters: str | Path | None, simulated: bool) -> Section:
    """Counters, model and predictions: the leave-one-benchmark-out error with its baseline
    (medians of |error| of total cycles, per ``training_rows`` block), each old-only
    benchmark's predicted runtime (or cycles) with its interval.

    Parameters
    ----------
    evaluation : str or Path or None
        ``model/evaluation.csv`` (None: the model stage is off).
    predictions : sequence of paths
        ``predict/<benchmark>.json`` of every old-only benchmark.
    counters : str or Path or None
        ``counters/summary.csv``.
    simulated : bool
        The counters are simulated: said in the section's title.
    """
    s = Section("model", "Counters and IPC model" + (" (SIMULATED data)" if simulated else ""))
    s.numbers["simulated"] = simulated
    if simulated:
        s.headline.append("The counters are simulated (counters.backend: simulate): two "
                          "synthetic CPU generations, not measurements.")
    if counters is not None:
        t = pd.read_csv(counters)
        s.ran.append(f"{len(t)} counter runs collected ({t['generation'].nunique()} generations,"
                     f" {t['benchmark'].nunique()} benchmarks)"
                     if {"generation", "benchmark"} <= set(t.columns)
                     else f"{len(t)} counter runs collected")
        if "multiplexed_intervals" in t.columns and t["multiplexed_intervals"].sum() > 0:
            n = int((t["multiplexed_intervals"] > 0).sum())
            s.warnings.append(f"{s.title}: {n} runs have multiplexed intervals (scaled "
                              "estimates, not counts; counters/summary.csv)")
        if "unverified_group_runs" in t.columns and t["unverified_group_runs"].sum() > 0:
            bad = t[t["unverified_group_runs"] > 0]
            names = ", ".join(f"{g}/{b}" for g, b in zip(bad["generation"], bad["benchmark"],
                                                         strict=True))
            s.warnings.append(f"{s.title}: {names}: a group run retired fewer instructions than "
                              "the longest by more than counters.coverage_tolerance, and its "
                              "trace cannot tell whether it was cut short (imported files; "
                              "counters/summary.csv, the log of counters_postprocess)")
    if evaluation is not None:
        ev = pd.read_csv(evaluation)
        for label, g in ev.groupby("training_rows", sort=True):
            err = float(g["cycles_error_pct"].abs().median())
            base = float(g["baseline_cycles_error_pct"].abs().median())
            s.numbers[f"median_error_pct_{label}"] = err
            s.numbers[f"baseline_median_error_pct_{label}"] = base
            s.headline.append(
                f"Prediction error (leave-one-benchmark-out, {len(g)} benchmarks, training on "
                f"{label} intervals): median |error| of total cycles **{fmt(err)} %** "
                f"(constant-ratio baseline {fmt(base)} %)")
            s.target(f"model beats the constant-ratio baseline ({label} intervals)",
                     f"{fmt(err)} %", f"< {fmt(base)} %", err < base)
        s.ran.append(f"model evaluated on {ev['benchmark'].nunique()} benchmarks")
    for path in predictions:
        p = _json(path)
        b = p["benchmark"]
        if p.get("predicted_new_runtime_s") is not None:
            v, lo, hi = (p["predicted_new_runtime_s"], p["predicted_new_runtime_s_lower"],
                         p["predicted_new_runtime_s_upper"])
            unit, what = "s", "runtime"
        else:
            v, lo, hi = (p["predicted_new_total_cycles"] / 1e9,
                         p["predicted_new_total_cycles_lower"] / 1e9,
                         p["predicted_new_total_cycles_upper"] / 1e9)
            unit, what = "e9 cycles", "cycles"
        s.numbers.setdefault("predictions", {})[b] = {"value": v, "lower": lo, "upper": hi,
                                                      "unit": unit}
        cov = p.get("interval_coverage")
        s.headline.append(
            f"Predicted new-generation {what} of {b} (measured on the old generation only): "
            f"**{fmt(v)} {unit}** [{fmt(lo)}, {fmt(hi)}]"
            + (f" ({pct(cov)} prediction interval)" if cov is not None else "")
            + f", old generation {fmt(p.get('old_runtime_s'))} s")
    if predictions:
        s.ran.append(f"{len(predictions)} old-only benchmarks predicted")
    return s


def warmup_section(summaries: Sequence[str | Path]) -> Section:
    """Each warm-up session: why it stopped, the CI width of the stable throughput against its
    target, every stop criterion met or missed, rounds and time against their budgets."""
    s = Section("warmup", "Warm-up and stable throughput")
    for path in summaries:
        d = _json(path)
        w = d["workload"]
        session = d.get("settings") or {}  # max_rounds, max_time_s: the session's budget
        s.ran.append(f"{w}: {d['rounds']} rounds ({d.get('rounds_used', 0)} used, "
                     f"{d.get('rounds_with_stable_phase', 0)} with a stable phase), "
                     f"{fmt(d.get('total_round_time_s'), 1)} s; stopped: {d['stop_reason']}")
        tp = d.get("throughput")
        target = d.get("target_relative_width")
        num: dict[str, Any] = {"stop_reason": d["stop_reason"], "rounds": d["rounds"],
                               "throughput": tp, "target_relative_width": target}
        if tp:
            s.headline.append(
                f"Stable throughput of {w}: **{fmt(tp['value'])} {tp.get('unit', '')}** "
                f"[{fmt(tp['lower'])}, {fmt(tp['upper'])}] ({pct(tp.get('confidence'))} CI, "
                f"width {pct(tp.get('relative_width'))} of the value)")
            rel = tp.get("relative_width")
            if target is not None:
                s.target(f"{w}: CI width of the stable throughput", pct(rel), f"<= {pct(target)}",
                         rel is not None and rel <= target)
        else:
            s.warnings.append(f"{s.title}: {w}: no stable throughput "
                              f"({d.get('unit_duration_reason') or 'no stable readings'})")
        for crit, met in sorted((d.get("target_met") or {}).items()):
            detail = ""
            if crit == "wps" and d.get("wps") and d["wps"].get("relative_width") is not None:
                detail = (f"WPS speed CI width {pct(d['wps']['relative_width'])} of a "
                          f"{pct(target)} target")
            elif crit == "wps":
                detail = (d.get("wps_reason")
                          or "the WPS speed's CI has no finite upper bound" if d.get("wps")
                          else d.get("wps_reason") or "no WPS regression")
            elif crit == "readings" and d.get("required_readings") is None:
                detail = (f"{d.get('stable_readings')} stable readings; the number required "
                          "could not be computed (no stable readings to estimate it from, or "
                          "a mean of 0)")
            elif crit == "readings":
                detail = (f"{d.get('stable_readings')} stable readings of "
                          f"{d.get('required_readings')} required")
            s.target(f"{w}: stop criterion {crit}", "met" if met else "not met", None, met,
                     detail)
        if session.get("max_rounds"):
            s.ran.append(f"{w}: rounds {d['rounds']} of a budget of {session['max_rounds']}, "
                         f"time {fmt(d.get('total_round_time_s'), 1)} s of "
                         f"{session.get('max_time_s')} s")
        for warning in d.get("warnings") or []:
            if not warning.startswith("stop criterion "):  # the targets above say so
                s.warnings.append(f"{s.title}: {w}: {warning}")
        s.notes += [f"{w}: {note}" for note in d.get("notes") or []]
        s.numbers[w] = num
    return s


def sensitivity_section(summaries: Sequence[str | Path]) -> Section:
    """Each program: profiled (steps, error against brute force when compared) or not, with
    the reason (typically the cgroup control file that refused: not root); profiled on the grid
    shipped with perfcast where the live profiling was refused (``status`` ``shipped``): the
    live profiling listed as skipped, with its reason, and the result as replayed (no warning:
    the stage has its result, and says how). The profile's own ``warnings`` (a ceiling the
    check could not repair, points above the baseline's spread) are warnings of the run."""
    s = Section("sensitivity", "Resource sensitivity")
    for path in summaries:
        d = _json(path)
        p = d["program"]
        if d.get("status") == "not_run":
            s.not_run.append(f"{p}: not profiled: {d.get('reason')} (needs {d.get('requires')})")
            s.warnings.append(f"{s.title}: {p} not profiled: {d.get('reason')}")
            s.numbers[p] = {"status": "not_run"}
            continue
        steps = d.get("steps")
        runs = steps.get("runs_total") if isinstance(steps, dict) else steps
        line = f"{p}: profiled, {runs} measured runs (epsilon {d.get('epsilon')})"
        if d.get("status") == "shipped":  # the live profiling refused: the shipped grid's
            skipped, where = d.get("skipped") or {}, d.get("shipped") or {}
            s.not_run.append(f"{p}: live profiling skipped: {skipped.get('reason')} (needs "
                             f"{skipped.get('requires')})")
            host = (where.get("host") or {}).get("cpu_model") or "a reference machine"
            line = (f"{p}: profiled on the grid shipped with perfcast (measured by its cgroup "
                    f"backend on {host}, {str(where.get('measured'))[:10]}), {runs} replayed "
                    f"runs (epsilon {d.get('epsilon')})")
        score = d.get("score")
        if score:
            truth = "the whole measured grid" if d.get("status") == "shipped" else "brute force"
            line += f", mean |error| against {truth} {fmt(score.get('mae'), 3)}"
            floor = score.get("noise_floor")
            if floor is not None and floor == floor:  # NaN: the baseline's spread is unknown
                line += f" (run-to-run noise floor {fmt(floor, 3)})"
        s.ran.append(line)
        if d.get("failed_runs"):
            s.warnings.append(f"{s.title}: {p}: {d['failed_runs']} failed runs "
                              f"({', '.join(d.get('failure_reasons') or [])})")
        for w in d.get("warnings") or []:  # e.g. a ceiling the check could not repair
            s.warnings.append(f"{s.title}: {p}: {w}")
        s.numbers[p] = {"status": d.get("status", "profiled"), "runs": runs,
                        "mae": score.get("mae") if score else None}
    return s


def replay_rows(summary_csv: str | Path, section: Section) -> None:
    """The replay of the paper's own measurements (``paper/sensitivity_summary.csv``): per
    epsilon, the mean whole-grid error of binary sampling beside the paper's (Fig. 11) and the
    measured points beside the paper's step count (Fig. 12): the runs are the product points,
    the Cartesian product of the chosen levels, of which binary search's 1-D probes are part
    (counted once, not added)."""
    t = pd.read_csv(summary_csv)
    section.ran.append(f"replay of the paper's measurements: {int(t['programs'].max())} "
                       f"programs x {len(t)} epsilons")
    rows = {}
    for _, r in t.iterrows():
        eps = float(r["epsilon"])
        ours, paper = float(r["mae_binary_mean"]), r.get("paper_fig11_mae")
        steps = int(r["product_points_total"])
        rows[f"{eps:g}"] = {"mae_binary_mean": ours, "paper_fig11_mae": paper, "steps": steps,
                            "paper_fig12_steps": r.get("paper_fig12_steps")}
        section.headline.append(
            f"Sensitivity replay, epsilon {eps:g}: mean |error| of binary sampling "
            f"**{fmt(ours, 4)}** (paper: {fmt(paper, 4)}), {steps} runs "
            f"(paper: {fmt(r.get('paper_fig12_steps'), 0)})")
    section.numbers["replay"] = rows


def sweep_section(models: Sequence[str | Path], sensors: Sequence[str | Path] = ()) -> Section:
    """Each campaign: runs succeeded against runs planned, and the best model of each effect
    (chosen by cross-validation) with its CV RMSE and adjusted R^2; each ``predict`` point
    that could not be predicted is a warning naming the reason, and each one beyond the
    measured range says so and by how far; a warning for each perf event a measured
    campaign's ``sensors.json`` says is not counted (its column is empty: a scheduler event
    perf restricted to user mode, never a 0)."""
    s = Section("sweep", "Parameter sweeps")
    for path in sensors:
        d = _json(path)
        for event, status in (d.get("perf_events") or {}).items():
            if str(status).startswith("unsupported: "):
                s.warnings.append(f"{s.title}: {Path(path).parent.name}: perf event {event} not "
                                  f"counted ({str(status).removeprefix('unsupported: ')})")
    for path in models:
        d = _json(path)
        c = d["campaign"]
        s.ran.append(f"{c}: {d['n_ok']} of {d['n_runs']} runs succeeded")
        s.target(f"{c}: runs succeeded", d["n_ok"], d["n_runs"], d["n_ok"] == d["n_runs"],
                 ", ".join(f"{k} {v}" for k, v in sorted((d.get("status") or {}).items())))
        best_of = {}
        for e in d.get("effects") or []:
            best = next((m for m in e.get("models") or [] if m.get("model") == e.get("best")),
                        None)
            if best is None:
                s.warnings.append(f"{s.title}: {c}: no model of {e['effect']} "
                                  f"({'; '.join(e.get('notes') or [])})")
                continue
            asked = e.get("predictions") or []
            best_of[e["effect"]] = {"model": best["model"], "cv_rmse": best.get("cv_rmse"),
                                    "adj_r2": best.get("adj_r2"), "y": e.get("y"),
                                    "predictions": asked}
            for p in asked:
                at = ", ".join(f"{k}={v:g}" for k, v in (p.get("point") or {}).items())
                if not p.get("predictable", True):
                    s.warnings.append(f"{s.title}: {c}: {e['effect']} at {at} not predictable "
                                      f"({p.get('note', '').removeprefix('not predictable: ')})")
                elif p.get("extrapolation"):
                    s.ran.append(f"{c}: {e['effect']} at {at}: {fmt(p.get('mean'), 4)} "
                                 f"[{fmt(p.get('obs_ci_lower'), 4)}, "
                                 f"{fmt(p.get('obs_ci_upper'), 4)}], an extrapolation "
                                 f"({p['extrapolation']})")
            s.headline.append(
                f"Best sweep model of {c} {e['effect']}: **{best['model']}** (CV RMSE "
                f"{fmt(best.get('cv_rmse'), 4)}, adjusted R^2 {fmt(best.get('adj_r2'), 3)})")
        s.numbers[c] = {"n_runs": d["n_runs"], "n_ok": d["n_ok"], "best": best_of}
    return s


# --------------------------------------------------------------------------------- whole run


def build_summary(*, evaluation: str | Path | None = None,
                  predictions: Sequence[str | Path] = (), counters: str | Path | None = None,
                  simulated: bool = False, warmup: Sequence[str | Path] = (),
                  sensitivity: Sequence[str | Path] = (),
                  sweep: Sequence[str | Path] = (), sweep_sensors: Sequence[str | Path] = (),
                  replay: str | Path | None = None, off: Sequence[str] = ()) -> dict[str, Any]:
    """The whole run's summary (``summary.json``): one section per stage that has outputs,
    the stages switched off (``off``), and every warning.

    Parameters
    ----------
    evaluation : str or Path, default=None
        ``model/evaluation.csv`` (none: the model stage is off).
    predictions : sequence of paths, default=()
        ``predict/<benchmark>.json`` of every old-only benchmark.
    counters : str or Path, default=None
        ``counters/summary.csv``.
    simulated : bool, default=False
        The counters are simulated: said in the model section's title.
    warmup, sensitivity, sweep : sequences of paths, default=()
        Each session's ``summary.json``, each program's ``<program>.json``, each campaign's
        ``models.json``.
    sweep_sensors : sequence of paths, default=()
        Each measured campaign's ``sensors.json`` (what the host counts).
    replay : str or Path, default=None
        ``paper/sensitivity_summary.csv``, the replay of the sensitivity paper's measurements
        (none: not replayed in this run).
    off : sequence of str, default=()
        Stages switched off in the config, named in the summary.

    Examples
    --------
    >>> build_summary(off=["sweep"])["warnings"]
    []
    """
    sections = []
    if evaluation is not None or predictions or counters is not None:
        sections.append(model_section(evaluation, predictions, counters, simulated))
    if warmup:
        sections.append(warmup_section(warmup))
    if sensitivity or replay is not None:
        sec = sensitivity_section(sensitivity)
        if replay is not None:
            replay_rows(replay, sec)
        sections.append(sec)
    if sweep:
        sections.append(sweep_section(sweep, sweep_sensors))
    return {
        "warnings": [w for sec in sections for w in sec.warnings],
        "stages_off": sorted(off),
        "sections": [sec.to_dict() for sec in sections],
    }


def to_markdown(summary: dict[str, Any]) -> str:
    """``summary.md``: the warnings first, then per stage what ran, what did not, targets and
    the headline figures."""
    lines = ["# perfcast run summary", ""]
    warnings = summary["warnings"]
    if warnings:
        lines += [f"**{len(warnings)} warning{'s' if len(warnings) > 1 else ''}:**", ""]
        lines += [f"- WARNING: {w}" for w in warnings]
    else:
        lines.append("No warnings: every stage that ran met its targets.")
    lines.append("")
    for sec in summary["sections"]:
        lines += [f"## {sec['title']}", ""]
        lines += [f"- {h}" for h in sec["headline"]]
        lines += [f"- Ran: {r}" for r in sec["ran"]]
        lines += [f"- Not run: {r}" for r in sec["not_run"]]
        lines += [f"- Note: {n}" for n in sec.get("notes", [])]
        for t in sec["targets"]:
            state = "met" if t["met"] else "MISSED"
            value = f"{t['value']} (target {t['target']})" if t["target"] is not None else ""
            lines.append(f"- Target {t['what']}: {state}" + (f", {value}" if value else "")
                         + (f"; {t['detail']}" if t["detail"] else ""))
        lines.append("")
    if summary["stages_off"]:
        lines += ["## Stages switched off", "",
                  f"- {', '.join(summary['stages_off'])} (`enabled: false`, or no section, "
                  "in the config)", ""]
    return "\n".join(lines)


def home_page_extras(evaluation_md: str | Path | None,
                     figures: Sequence[tuple[str, str | Path]]) -> str:
    """What the report's home page shows below the summary, so that a reader sees the results
    without a click: the evaluation table (``evaluation.md`` as HTML) and the figures
    (``(title, png)``: each embedded as a data URI, the report holds no separate files)."""
    import base64
    import html

    from perfcast.mdhtml import to_html

    parts = []
    if evaluation_md is not None:
        parts.append("<h2>Leave-one-benchmark-out evaluation</h2>")
        parts.append(to_html(Path(evaluation_md).read_text(), standalone=False))
    for title, png in figures:
        data = base64.b64encode(Path(png).read_bytes()).decode()
        parts.append(f'<figure><img alt="{html.escape(title)}" style="max-width:100%" '
                     f'src="data:image/png;base64,{data}"><figcaption>{html.escape(title)}'
                     "</figcaption></figure>")
    return "\n".join(parts) + ("\n" if parts else "")


@dataclass(frozen=True)
class SummarySettings:
    """Rule ``run_summary``'s settings, from the validated config.

    Attributes
    ----------
    simulated : bool
        The counters are simulated (``counters.backend: simulate``): said in the model
        section's title.
    stages_off : tuple of str
        The stages the config switches off, named in the summary.
    predicted : tuple of str
        The old-generation-only benchmarks whose prediction figures the report's home page
        shows, in the order of the rule's ``figures`` input.
    """

    simulated: bool
    stages_off: tuple[str, ...]
    predicted: tuple[str, ...]


def write_summary(settings: SummarySettings, *, out_json: str | Path, out_md: str | Path,
                  out_html: str | Path, out_fragment: str | Path | None = None,
                  evaluation_md: str | Path | None = None,
                  prediction_figures: Sequence[str | Path] = (),
                  **inputs: Any) -> dict[str, Any]:
    """Rule ``run_summary``: :func:`build_summary` of ``inputs`` written as JSON, Markdown,
    an HTML page (the report's result) and, when ``out_fragment`` is given, the same HTML
    without its page around it, followed by :func:`home_page_extras` (the report's home page
    includes it); each atomically, every warning also logged.

    Parameters
    ----------
    settings : SummarySettings
        What the config says beyond the files.
    out_json, out_md, out_html : str or Path
        ``summary.json``, ``summary.md``, ``summary.html``.
    out_fragment : str or Path, default=None
        The HTML fragment of the report's home page.
    evaluation_md : str or Path, default=None
        ``model/evaluation.md``, shown on the home page.
    prediction_figures : sequence of paths, default=()
        One figure per benchmark of ``settings.predicted``, in that order.
    **inputs : str, Path or sequence of paths
        :func:`build_summary`'s file arguments.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as d:
    ...     s = SummarySettings(simulated=False, stages_off=("sweep",), predicted=())
    ...     out = write_summary(s, out_json=Path(d, "s.json"), out_md=Path(d, "s.md"),
    ...                         out_html=Path(d, "s.html"))
    ...     json.loads(Path(d, "s.json").read_text())["stages_off"]
    ['sweep']
    """
    import logging

    from perfcast.io import write_json, write_text
    from perfcast.mdhtml import to_html

    if len(prediction_figures) != len(settings.predicted):
        raise ValueError(f"{len(prediction_figures)} prediction figures for "
                         f"{len(settings.predicted)} predicted benchmarks")
    figures = [(f"{name}: predicted new-generation IPC over time", png)
               for name, png in zip(settings.predicted, prediction_figures, strict=True)]
    summary = build_summary(simulated=settings.simulated, off=settings.stages_off, **inputs)
    md = to_markdown(summary)
    for w in summary["warnings"]:
        logging.getLogger(__name__).warning("%s", w)
    write_json(summary, out_json)
    write_text(md, out_md)
    write_text(to_html(md, "perfcast run summary"), out_html)
    if out_fragment is not None:
        write_text(to_html(md, standalone=False) + home_page_extras(evaluation_md, figures),
                   out_fragment)
    return summary
