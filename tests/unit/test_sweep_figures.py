"""The sweep figures, read back from their artists: titles name the criterion the best model
was chosen by, formulas wrap inside the figure, tick labels do not overlap, a two-parameter
plot draws or names every level and labels its predicted points, and the band says which
interval it is."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402

from perfcast.settings import from_section  # noqa: E402
from perfcast.sweep import figures, selection  # noqa: E402
from perfcast.sweep.settings import SweepSettings  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def fit_of(**fit):
    return from_section(SweepSettings, {"fit": fit}, "sweep").fit


def two_parameters(levels: int, reps: int = 3, seed: int = 0) -> pd.DataFrame:
    """flop at 8 log-spaced values times ``levels`` values of th; cpu_s = 0.01 + 2e-4 flop th."""
    rng = np.random.default_rng(seed)
    f, t = np.meshgrid(2.0 ** np.arange(3, 11), np.arange(1.0, levels + 1), indexing="ij")
    f, t = np.repeat(f.ravel(), reps), np.repeat(t.ravel(), reps)
    y = 0.01 + 2e-4 * f * t + rng.normal(0, 1e-3, f.size)
    return pd.DataFrame({"flop": f, "th": t, "cpu_s": y})


def one_parameter(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = np.repeat(2.0 ** np.arange(1, 8), 3)
    return pd.DataFrame({"p": p, "t": 3 + 0.5 * p * np.log2(p) + rng.normal(0, 0.05, p.size)})


def texts(fig) -> list[str]:
    """Every title and suptitle of the figure."""
    out = [ax.get_title() for ax in fig.axes]
    if fig._suptitle is not None:
        out.append(fig._suptitle.get_text())
    return out


def legend_labels(ax) -> list[str]:
    legend = ax.get_legend()
    return [] if legend is None else [t.get_text() for t in legend.get_texts()]


@pytest.mark.parametrize("normal_form, criterion", [(True, "cv_smape"), (False, "cv_mse")])
def test_titles_name_the_criterion_the_selection_used(normal_form, criterion):
    df = one_parameter()
    res = selection.fit_effect(df, "t", "t", ["p"],
                               fit=fit_of(normal_form={"enabled": normal_form}))
    assert selection.selection_criterion(res) == criterion
    assert selection.result_summary(res)["selected_by"] == criterion
    said = figures.CRITERION_TEXT[criterion]
    fig = figures.residuals_figure([res])
    bars = fig.axes[1]
    assert said in bars.get_title()
    if criterion == "cv_smape":  # the bars are the score compared, not an RMSE
        assert "RMSE" not in bars.get_title() and "SMAPE" in bars.get_xlabel()
        assert legend_labels(bars) == ["CV SMAPE"]
        widths = sorted(p.get_width() for p in bars.patches)
        assert widths == pytest.approx(sorted(c.cv_smape for c in res.candidates if c.chosen))
    assert any(said in t for t in texts(figures.fits_figure([res], df, alpha=0.05)))
    assert any(said in t for t in texts(figures.model_figure(res, df, 0.05)))


def test_two_configurations_say_training_error():
    df = pd.DataFrame({"p": [1.0, 1, 2, 2], "t": [1.0, 1.1, 2.0, 2.1]})
    res = selection.fit_effect(df, "t", "t", ["p"], fit=fit_of())
    assert selection.selection_criterion(res) == "training_mse"
    fig = figures.residuals_figure([res])
    assert figures.CRITERION_TEXT["training_mse"] in fig.axes[1].get_title()


def test_long_formula_wraps_inside_the_figure():
    rng = np.random.default_rng(1)
    a, b = np.meshgrid(np.arange(1.0, 7), np.arange(1.0, 7), indexing="ij")
    a, b = np.repeat(a.ravel(), 2), np.repeat(b.ravel(), 2)
    y = 1 + 2.123 * a + 3.456 * b + 4.789 * a * b + 0.5123 * a**2 + 0.3123 * b**2
    df = pd.DataFrame({"a": a, "b": b, "y": y + rng.normal(0, 0.01, a.size)})
    res = selection.fit_effect(df, "y", "y", ["a", "b"], fit=fit_of(
        normal_form={"enabled": False}, forms=["quadratic"], max_order=1))
    full = res.best.formula("y")
    assert len(full) > figures.FORMULA_WIDTH
    for fig in (figures.model_figure(res, df, 0.05),
                figures.fits_figure([res], df, alpha=0.05)):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        box = fig.get_window_extent(renderer)
        titles = [ax.title for ax in fig.axes if ax.get_title()]
        titles += [fig._suptitle] if fig._suptitle is not None else []
        for title in titles:
            extent = title.get_window_extent(renderer)
            assert box.x0 <= extent.x0 and extent.x1 <= box.x1, title.get_text()
        drawn = [t for t in texts(fig) if "y = " in t]
        assert drawn
        for t in drawn:
            lines = t[t.index("y = "):].splitlines()
            assert all(len(line) <= figures.FORMULA_WIDTH for line in lines)
            # whole terms, in order: the formula's start as drawn, or every term
            assert full.startswith(" ".join(li for li in lines if not li.startswith("...")))


def test_wrap_formula_counts_the_terms_it_leaves_out():
    text = "t = " + " + ".join(f"{k} * p^{k}" for k in range(1, 30))
    lines = figures.wrap_formula(text, width=30, lines=3).splitlines()
    assert len(lines) == 3 and all(len(li) <= 30 for li in lines)
    shown = " ".join(lines[:-1]).count("*")
    assert lines[-1] == f"... {29 - shown} more terms"


def tick_boxes(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        for k, axis in enumerate((ax.xaxis, ax.yaxis)):
            lo, hi = sorted(axis.get_view_interval())
            labels = [t for t in [*axis.get_majorticklabels(), *axis.get_minorticklabels()]
                      if t.get_visible() and t.get_text() and lo <= t.get_position()[k] <= hi]
            yield ax, axis, [t.get_window_extent(renderer) for t in labels]


@pytest.mark.parametrize("levels", [2.0 ** np.arange(1, 6), 2.0 ** np.arange(10, 22)])
def test_tick_labels_do_not_overlap(levels):
    """Log-spaced levels within a decade (minor ticks labelled by default) and many large
    levels on a narrow panel."""
    rng = np.random.default_rng(2)
    p = np.repeat(levels, 3)
    df = pd.DataFrame({"flop": p, "cpu_s": 1e-6 * p * (1 + rng.normal(0, 0.02, p.size))})
    res = selection.fit_effect(df, "cpu_s", "cpu_s", ["flop"], fit=fit_of())
    for fig in (figures.fits_figure([res], df, alpha=0.05),
                figures.model_figure(res, df, 0.05),
                figures.residuals_figure([res])):
        for ax, axis, boxes in tick_boxes(fig):
            assert len(boxes) >= 2 or axis.get_scale() != "log"  # still readable
            for i, a in enumerate(boxes):
                for b in boxes[i + 1:]:
                    assert not a.overlaps(b), ax.get_title()


def curves(ax) -> list:
    """The model curves drawn (lines with data)."""
    return [line for line in ax.get_lines() if len(line.get_xdata()) > 1]


@pytest.mark.parametrize("levels", [3, figures.MAX_LINES, figures.MAX_LINES + 3])
def test_two_parameter_plot_draws_or_names_every_level(levels):
    df = two_parameters(levels)
    res = selection.fit_effect(df, "cpu_s", "cpu_s", ["flop", "th"], fit=fit_of())
    assert set(res.best.x) == {"flop", "th"}
    fig = figures.model_figure(res, df, 0.05)
    ax = fig.axes[res.best.x.index("flop")]
    names = legend_labels(ax)
    drawn = [n for n in names if n.startswith("th=")]
    assert len(curves(ax)) == len(drawn) == min(levels, figures.MAX_LINES)
    left = [n.removeprefix("not drawn: ").split("; ") for n in names
            if n.startswith("not drawn: ")]
    named = drawn + (left[0] if left else [])
    assert sorted(named) == sorted(f"th={v:g}" for v in range(1, levels + 1))
    assert len(left) == (levels > figures.MAX_LINES)


def test_predicted_points_are_labelled_with_their_level():
    df = two_parameters(3)
    res = selection.fit_effect(df, "cpu_s", "cpu_s", ["flop", "th"], fit=fit_of())
    extra = pd.DataFrame({"flop": [2048.0, 2048.0], "th": [2.0, 3.0]})
    fig = figures.model_figure(res, df, 0.05, extra=extra)
    ax = fig.axes[res.best.x.index("flop")]
    notes = sorted(t.get_text() for t in ax.texts)
    assert notes == ["th=2", "th=3"]
    assert {"predicted, th=2", "predicted, th=3"} <= set(legend_labels(ax))
    # each point in its level's colour
    by_label = dict(zip(*ax.get_legend_handles_labels()[::-1], strict=True))
    for level in ("th=2", "th=3"):
        line_color = by_label[level].get_color()
        point = by_label[f"predicted, {level}"][0]
        assert point.get_color() == line_color


def test_band_is_the_prediction_interval_and_says_so():
    df = one_parameter()
    res = selection.fit_effect(df, "t", "t", ["p"], fit=fit_of())
    fig = figures.model_figure(res, df, 0.05)
    ax = fig.axes[0]
    band = [n for n in legend_labels(ax) if "interval" in n]
    assert band and band[0].startswith("95% prediction interval of one run")
    grid = curves(ax)[0].get_xdata()
    pred = res.best.fit.predict(grid.reshape(-1, 1), alpha=0.05)
    upper = ax.collections[-1].get_paths()[0].vertices[:, 1].max()
    assert upper == pytest.approx(pred["obs_ci_upper"].max())


def test_a_band_wider_than_the_scatter_says_why():
    """A straight line through a curve: the residual SD holds the lack of fit, many times
    the runs' scatter within a configuration, and the band's label gives both."""
    rng = np.random.default_rng(3)
    p = np.repeat(np.arange(1.0, 9), 4)
    df = pd.DataFrame({"p": p, "t": p**2 + rng.normal(0, 0.01, p.size)})
    res = selection.fit_effect(df, "t", "t", ["p"], fit=fit_of(
        max_order=1, normal_form={"enabled": False}))
    label = figures.band_label(res.best, df, "t", 0.05)
    s_model = np.sqrt(res.best.fit.metrics()["mse_resid"])
    assert f"residual SD {s_model:.3g}" in label and "lack of fit" in label
    assert "within a configuration" in label
    tight = figures.band_label(selection.fit_effect(one_parameter(), "t", "t", ["p"],
                                                    fit=fit_of()).best, one_parameter(),
                               "t", 0.05)
    assert "lack of fit" not in tight


def test_many_repetitions_are_drawn_as_order_statistics():
    """10^3 runs per configuration: each drawn as MAX_RUNS_DRAWN of its runs, its smallest
    and largest among them, and the legend says so; a configuration of few runs whole."""
    rng = np.random.default_rng(4)
    p = np.repeat([1.0, 2, 3, 4, 5], [1000, 1000, 1000, 1000, 7])
    df = pd.DataFrame({"p": p, "t": 1 + p + rng.normal(0, 0.1, p.size)})
    res = selection.fit_effect(df, "t", "t", ["p"], fit=fit_of())
    ax = figures.model_figure(res, df, 0.05).axes[0]
    points = np.vstack([c.get_offsets() for c in ax.collections
                        if isinstance(c, PathCollection)])  # the scatters
    for value, runs in df.groupby("p")["t"]:
        drawn = np.sort(points[points[:, 0] == value][:, 1])
        assert len(drawn) == min(len(runs), figures.MAX_RUNS_DRAWN)
        assert drawn[0] == runs.min() and drawn[-1] == runs.max()
    assert any(n.startswith(f"runs: {figures.MAX_RUNS_DRAWN} order statistics")
               for n in legend_labels(ax))
