"""`perfcast` sub-commands of the warmup stage: change points, CI of a mean, WPS regression.

Each reads a user's own data and prints JSON on stdout:

* ``perfcast edm FILE [--mode pilot|robust]``: one reading per line; change points, segments
  and the stable (dominant) segment with warm-up / cool-down lengths;
* ``perfcast ci FILE [--ac-limit X | --preset P] [--cl X] [--harmonic]``: mean, subsession
  size q, CI, variance, autocorrelation, required sample size, and ``used``, the readings
  the mean is of (the newest ``n_used``, whole subsessions of q);
* ``perfcast stable FILE [--rates]``: the stable segment (robust change points, MSER-5, a
  stationarity test), its mean and CI, median and distribution-free CI, and for rates the
  harmonic mean, in one JSON naming the segment used (:mod:`perfcast.warmup.stable`); ``ci``
  on readings that are not one stable phase warns and points here;
* ``perfcast wps FILE``: a CSV with columns work,duration_s (one row per round); alpha, v and
  its CI, q, rounds used, prediction error;
* ``perfcast watch [FILE|-] [--target REL] [--cl X] [--min-readings N]``: readings of a running
  benchmark, one per line as they come (a pipe); one JSON line per analysis (``n``, ``phase``,
  ``stable`` and ``used`` as ``{begin, end}``, ``mean``, ``lower``, ``upper``, ``q``,
  ``required_readings``, ``waiting_for``) and, once the warm-up has visibly ended and the
  stable readings reach their required sample size within the target
  (:func:`perfcast.warmup.watch.assess`), a last line with ``"stop": true`` and exit status 0.
  Input that ends first: the last line says ``"end_of_input": true`` and the exit status is 1.

``FILE`` may be ``-`` for stdin. The flags are settings of
``src/perfcast/schemas/warmup_cli.schema.yaml``, which gives their defaults and checks them (a value
it refuses is an error naming the setting). Bad input (empty, not a number, NaN, negative) is
one line on stderr and exit status 2; data that cannot support the estimate (fewer than 30
readings for a CI, autocorrelation that no subsession size removes, fewer than 3 usable rounds)
likewise.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from perfcast.errors import InputError

# The choices of --mode and --preset, spelled here so that building the parser imports no numpy
# or scipy (perfcast.warmup's detectors do); tests/unit/test_cli_startup.py checks they are the
# library's (perfcast.warmup.changepoint.MODES, perfcast.warmup.subsession.PRESETS).
MODES = ("robust", "pilot")
PRESET_NAMES = ("normal", "quick", "strict")
#: pilot mode warns from this many readings on (its O(n^2 log n) then runs for minutes)
PILOT_WARN_READINGS = 20_000


def _print(obj: dict[str, Any]) -> None:
    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return v

    json.dump(clean(obj), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


def _allow_negative(args: argparse.Namespace) -> bool:
    """``--allow-negative`` (the ``input`` settings of the CLI schema)."""
    from perfcast.warmup.cli_settings import command_settings

    given = True if args.allow_negative else None
    return command_settings("input", {"allow_negative": given}).allow_negative


def _cycles(args: argparse.Namespace) -> bool | None:
    """``--keep-cycles``: False; otherwise None (the schema's default, true)."""
    return False if args.keep_cycles else None


def _keep_cycles_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--keep-cycles", action="store_true",
                   help="judge changes against a cycle's swing, as if it were noise (cycles: "
                        "false; by default a cycle the same in both halves of the readings is "
                        "taken out before the search)")


def _number(text: str) -> float:
    """A flag's value as a number (its range is the schema's to check)."""
    v = float(text)
    if math.isnan(v):
        raise argparse.ArgumentTypeError(f"{text} is not a number")
    return v


#: the flag of a setting whose name is not the flag's (``--`` and the name with dashes)
_FLAGS = {"target_relative_width": "--target", "confidence": "--cl",
          "lower_bound_s": "--lower-bound", "cycles": "--keep-cycles"}


def _settings(args: argparse.Namespace, **values: Any) -> Any:
    """The settings of sub-command ``args.command`` from its flags (None: the schema's default;
    :func:`perfcast.warmup.cli_settings.command_settings`); a value the schema refuses is an
    :class:`~perfcast.errors.InputError` naming the flag as well as the setting."""
    from perfcast.warmup.cli_settings import command_settings

    flags = {k: _FLAGS.get(k, "--" + k.replace("_", "-")) for k in values}
    return command_settings(args.command, values, flags)


def cmd_edm(args: argparse.Namespace) -> int:
    """``perfcast edm``: change points, segments and the stable segment of readings
    (:func:`perfcast.warmup.segments.detect_phases` with the ``edm`` settings of
    ``warmup_cli.schema.yaml``); JSON on stdout. Returns the exit status (0)."""
    from perfcast.warmup.ci import MIN_READINGS
    from perfcast.warmup.readings import read_readings
    from perfcast.warmup.segments import segments

    edm = _settings(args, mode=args.mode, min_size=args.min_size, alpha=args.alpha,
                    min_effect=args.min_effect, cycles=_cycles(args))
    phases = _phases(args)
    x = read_readings(args.file, allow_negative=_allow_negative(args))
    if edm.mode == "pilot" and x.shape[0] >= PILOT_WARN_READINGS:
        print(f"perfcast edm: warning: {args.file}: {x.shape[0]} readings in pilot mode "
              "(Pilot's EDM_percent, O(n^2 log n)) will take minutes; --mode robust "
              "(the default, O(n log n)) takes about a second", file=sys.stderr, flush=True)
    ph = phases.detect(x, edm)
    out: dict[str, Any] = {
        "file": args.file, "n": int(x.shape[0]), "mode": edm.mode,
        "settings": edm.to_dict() | phases.to_dict(),
        "change_points": list(ph.change_points),
        "segments": [{"begin": a, "end": b, "length": b - a, "median": float(
            _median(x[a:b]))} for a, b in segments(ph.n, list(ph.change_points))],
        "stable": None if ph.stable is None else {"begin": ph.stable[0], "end": ph.stable[1]},
        "warmup_len": ph.warmup_len, "cooldown_len": ph.cooldown_len, "rule": ph.rule,
        "season": _season(x, args.file, "edm", edm.cycles if edm.mode == "robust" else False),
    }
    if ph.rule == "short":
        out["note"] = (f"fewer than {MIN_READINGS} readings: not split, all kept as stable "
                       "(Pilot's rule)")
    elif ph.rule == "final":
        out["note"] = ("no segment holds more than half of the readings: the stable phase is "
                       f"the last segment, at least {phases.final_share:.3g} of them "
                       "(--fallback final; --fallback none: Pilot's rule, no stable phase)")
    elif ph.rule == "none":
        out["note"] = phases.no_stable_note
    _print(out)
    return 0


def _phases(args: argparse.Namespace) -> Any:
    """The ``phases`` settings from ``--fallback`` and ``--final-share``."""
    from perfcast.warmup.cli_settings import command_settings

    return command_settings("phases", {"fallback": args.fallback,
                                       "final_share": args.final_share})


def _median(x) -> float:
    import numpy as np

    return float(np.median(x))


def cmd_ci(args: argparse.Namespace) -> int:
    """``perfcast ci``: the mean of readings with its subsession-analysis CI
    (:func:`perfcast.warmup.ci.mean_ci` with the ``ci`` settings), and a warning when the
    readings are not one stable phase; JSON on stdout. Returns the exit status (0)."""
    from perfcast.warmup.ci import NotEnoughDataError, mean_ci
    from perfcast.warmup.readings import read_readings

    settings = _settings(args, preset=args.preset, ac_limit=args.ac_limit, confidence=args.cl,
                         target_relative_width=args.target, harmonic=args.harmonic,
                         min_samples=args.min_samples)
    x = read_readings(args.file, allow_negative=_allow_negative(args),
                      positive_for="the harmonic mean (--harmonic)" if settings.harmonic
                      else None)
    try:
        ci = mean_ci(x, ac_limit=settings.limit, confidence=settings.confidence,
                     harmonic=settings.harmonic,
                     target_relative_width=settings.target_relative_width,
                     min_samples=settings.samples_min)
    except NotEnoughDataError as exc:
        raise InputError(args.file, str(exc)) from exc
    out = {"file": args.file, **ci.to_dict(), "used": {"begin": ci.n - ci.n_used, "end": ci.n},
           "season": _season(x, args.file, "ci")}
    warnings = [w for w in (ci.warning, _phases_warning(x, args.file)) if w]
    if warnings:
        out["warning"] = "; ".join(warnings)
        for warning in warnings:
            print(f"perfcast ci: warning: {args.file}: {warning}", file=sys.stderr)
    _print(out)
    return 0


def _season(x, name: str, command: str, cycles: bool | None = None) -> dict | None:
    """The readings' cycle (:func:`perfcast.warmup.season.season`) as JSON, with a warning on
    stderr when there is one (:func:`perfcast.warmup.season.season_note`). ``cycles``: the
    detector's setting, when the command ran it on these readings; ``taken_out`` then says
    whether it took the cycle out (:func:`perfcast.warmup.season.component`), else it is
    null."""
    from perfcast.warmup.season import component, season, season_note

    cycle = season(x)
    if cycle is None:
        return None
    taken_out = None if cycles is None else cycles and component(x, cycle) is not None
    print(f"perfcast {command}: warning: {name}: {season_note(cycle, taken_out)}",
          file=sys.stderr)
    return cycle.to_dict() | {"taken_out": taken_out}


def _phases_warning(x, name: str) -> str | None:
    """A warning when the readings are not one stable phase (the CI of all of them then mixes
    phases), saying how to use the stable segment only."""
    ph = _command_settings("phases").detect(x, _command_settings("edm"))
    if ph.stable == (0, int(x.shape[0])):
        return None
    where = ("no segment holds more than half of them" if ph.stable is None else
             f"the stable segment is readings {ph.stable[0]}..{ph.stable[1] - 1}")
    return (f"the readings change at {list(ph.change_points)} ({where}), so this interval "
            f"mixes phases; `perfcast stable {name}` gives the stable segment's mean and CI")


def _command_settings(command: str) -> Any:
    from perfcast.warmup.cli_settings import command_settings

    return command_settings(command, {})


def cmd_stable(args: argparse.Namespace) -> int:
    """``perfcast stable``: the stable segment's mean, median (and harmonic mean) with their
    CIs (:func:`perfcast.warmup.stable.stable_throughput` with the ``stable`` settings); JSON on
    stdout. Returns the exit status: 0, or 1 when there is no stable phase; fewer than 30
    readings are refused as by ``perfcast ci`` (exit 2)."""
    from perfcast.warmup.ci import NotEnoughDataError
    from perfcast.warmup.readings import read_readings
    from perfcast.warmup.stable import stable_throughput

    settings = _settings(args, min_size=args.min_size, alpha=args.alpha,
                         min_effect=args.min_effect, cycles=_cycles(args), preset=args.preset,
                         ac_limit=args.ac_limit,
                         min_samples=args.min_samples, confidence=args.cl,
                         target_relative_width=args.target, rates=args.rates)
    x = read_readings(args.file, allow_negative=_allow_negative(args),
                      positive_for="the harmonic mean of rates (--rates)" if settings.rates
                      else None)
    phases = _phases(args)
    try:
        res = stable_throughput(x, settings, phases)
    except NotEnoughDataError as exc:
        raise InputError(args.file, str(exc)) from exc
    if res.note:
        print(f"perfcast stable: warning: {args.file}: {res.note}", file=sys.stderr)
    _print({"file": args.file, "settings": {k: getattr(settings, k) for k in (
        "min_size", "alpha", "min_effect", "cycles", "preset", "confidence", "rates")} | {
        "ac_limit": settings.limit, "min_samples": settings.samples_min} | phases.to_dict(),
        **res.to_dict(), "season": _season(x, args.file, "stable", settings.cycles)})
    return 0 if res.stable is not None else 1


def cmd_wps(args: argparse.Namespace) -> int:
    """``perfcast wps``: the work-per-second regression of rounds
    (:func:`perfcast.warmup.wps.wps_regression` with the ``wps`` settings); JSON on stdout.
    Returns the exit status (0)."""
    from perfcast.warmup.ci import NotEnoughDataError
    from perfcast.warmup.readings import read_rounds
    from perfcast.warmup.wps import wps_regression

    settings = _settings(args, preset=args.preset, ac_limit=args.ac_limit, confidence=args.cl,
                         lower_bound_s=args.lower_bound,
                         max_prediction_error=args.max_prediction_error)
    work, dur = read_rounds(args.file)
    try:
        res = wps_regression(work, dur, lower_bound_s=settings.lower_bound_s,
                             ac_limit=settings.limit, confidence=settings.confidence,
                             max_prediction_error=settings.max_prediction_error)
    except NotEnoughDataError as exc:
        raise InputError(args.file, str(exc)) from exc
    if res.warning:
        print(f"perfcast wps: warning: {args.file}: {res.warning}", file=sys.stderr)
    _print({"file": args.file, "rounds": int(work.shape[0]), **res.to_dict()})
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    """``perfcast watch``: live phases of readings as they arrive, one JSON line per analysis
    (:func:`perfcast.warmup.watch.watch` with the ``watch`` settings). Returns the exit status:
    0 on a stop, 1 when the input ends first."""
    from array import array

    import numpy as np

    from perfcast.io import text_lines
    from perfcast.warmup.readings import is_header, parse_reading
    from perfcast.warmup.season import HEAD as SEASON_HEAD
    from perfcast.warmup.watch import watch

    settings = _settings(args, target_relative_width=args.target, confidence=args.cl,
                         preset=args.preset, ac_limit=args.ac_limit,
                         min_samples=args.min_samples, min_readings=args.min_readings,
                         growth=args.growth, min_size=args.min_size, alpha=args.alpha,
                         min_effect=args.min_effect, cycles=_cycles(args))
    name = "<stdin>" if args.file == "-" else args.file
    negative = _allow_negative(args)

    from perfcast.checks import MAX_MAGNITUDE

    smallest = 1.0 / MAX_MAGNITUDE

    seen = array("d")  # the readings the cycle test of the last line looks at

    def keep(v: float) -> None:
        if len(seen) < SEASON_HEAD:
            seen.append(v)

    def values():
        first = True
        for lineno, line in text_lines(args.file):  # read as it arrives, each line bounded
            try:  # the common case, fast; anything else gets parse_reading's checks (the same
                # range: finite, >= 0, of a magnitude that sums and squares can carry; a 0
                # goes there too, where a literal such as 1e-400 that only reads as 0 is refused)
                v = float(line)
                if (smallest <= abs(v) <= MAX_MAGNITUDE and (v >= 0 or negative)
                        and "_" not in line):
                    first = False
                    keep(v)
                    yield v
                    continue
            except ValueError:
                pass
            if first and line.strip() and not line.lstrip().startswith("#"):
                first = False
                if is_header(line):
                    continue
            v = parse_reading(line, name, lineno, allow_negative=negative)
            if v is not None:
                keep(v)
                yield v

    pending = None
    for up in watch(values(), settings):
        if pending is not None:
            print(json.dumps(pending.to_dict(), sort_keys=True), flush=True)
        pending = up
    if pending is None:
        raise InputError(name, "no readings (the input is empty)",
                         expected="one number per line")
    line = pending.to_dict()
    if not pending.stop:
        line["end_of_input"] = True
    if pending.ci is not None and pending.ci.target_undefined:
        print(f"perfcast watch: warning: {name}: {pending.ci.warning}", file=sys.stderr)
    line["season"] = _season(np.frombuffer(seen), name, "watch", settings.cycles)
    print(json.dumps(line, sort_keys=True), flush=True)
    return 0 if pending.stop else 1


def _default(command: str, key: str) -> str:
    """``"(default: X)"``: the default of flag ``key`` of ``perfcast COMMAND``, read from its
    section of ``warmup_cli.schema.yaml`` (a null default is the preset's or the mode's own)."""
    from perfcast.settings import help_default

    own = {"ac_limit": "the preset's", "min_samples": "the preset's, Pilot's quick 30, normal 50, "
           "strict 200", "min_size": "the mode's own, 10 robust, 30 pilot"}
    return help_default("warmup_cli", f"{command}.{key}",
                        lambda v: own.get(key, "none") if v is None else str(v))


def _stats_options(p: argparse.ArgumentParser, command: str) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--ac-limit", type=_number, default=None, metavar="X",
                   help="largest |lag-1 autocorrelation| of subsession means "
                        f"{_default(command, 'ac_limit')}")
    g.add_argument("--preset", choices=PRESET_NAMES, default=None,
                   help="Pilot's limits: quick 0.8, normal 0.2, strict 0.1 "
                        f"{_default(command, 'preset')}")
    p.add_argument("--cl", type=_number, default=None, metavar="X",
                   help=f"confidence level {_default(command, 'confidence')}")


def _input_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-negative", action="store_true",
                   help="accept readings below 0 (centred or differenced data); a first line "
                        "that is one column name is a header in every reader "
                        f"{_default('input', 'allow_negative')}")


def _detector_options(p: argparse.ArgumentParser, command: str) -> None:
    """The robust change-point detector's options of ``stable`` and ``watch``."""
    p.add_argument("--min-size", type=int, default=None,
                   help=f"shortest segment {_default(command, 'min_size')}")
    p.add_argument("--alpha", type=_number, default=None,
                   help="false-alarm probability of the change-point detector "
                        f"{_default(command, 'alpha')}")
    p.add_argument("--min-effect", type=_number, default=None,
                   help="drop changes smaller than this fraction of the median "
                        f"{_default(command, 'min_effect')}")
    _keep_cycles_option(p)


def _phases_options(p: argparse.ArgumentParser) -> None:
    """Where no segment dominates: ``edm`` and ``stable``'s ``--fallback``, ``--final-share``."""
    p.add_argument("--fallback", choices=("none", "final"), default=None,
                   help="where no segment holds more than half of the readings: final = the "
                        "last segment if it holds --final-share of them, none = no stable "
                        f"phase (Pilot) {_default('phases', 'fallback')}")
    p.add_argument("--final-share", type=_number, default=None, metavar="X",
                   help="--fallback final: the last segment's smallest share of the readings "
                        "(default: a sixth)")


def _min_samples_option(p: argparse.ArgumentParser, command: str) -> None:
    p.add_argument("--min-samples", type=int, default=None, metavar="N",
                   help="fewest subsession means the required sample size asks for "
                        f"{_default(command, 'min_samples')}")


def register(sub: argparse._SubParsersAction) -> None:
    """Add this stage's sub-commands to ``sub``."""
    p = sub.add_parser("edm", help="change points and the stable phase of unit readings",
                       description="Change points of readings (one per line) and the stable "
                                   "segment (the one holding more than half of the readings, "
                                   "else, with --fallback final, the last if long enough); "
                                   "JSON on stdout.")
    p.add_argument("file", help="readings, one per line ('-' for stdin)")
    p.add_argument("--mode", choices=MODES, default=None,
                   help="robust or pilot (Pilot's EDM_percent, O(n^2 log n)) "
                        f"{_default('edm', 'mode')}")
    p.add_argument("--min-size", type=int, default=None,
                   help=f"shortest segment {_default('edm', 'min_size')}")
    p.add_argument("--alpha", type=_number, default=None,
                   help="robust: false-alarm probability on a series without change "
                        f"{_default('edm', 'alpha')}")
    p.add_argument("--min-effect", type=_number, default=None,
                   help="robust: drop changes of the median or spread smaller than this "
                        f"fraction of the overall median {_default('edm', 'min_effect')}")
    _keep_cycles_option(p)
    _phases_options(p)
    _input_options(p)
    p.set_defaults(func=cmd_edm)

    p = sub.add_parser("ci", help="mean and its confidence interval (subsession analysis)",
                       description="Mean of readings (one per line), subsession size q, CI, "
                                   "variance, autocorrelation, required sample size; JSON.")
    p.add_argument("file", help="readings, one per line ('-' for stdin)")
    _stats_options(p, "ci")
    p.add_argument("--harmonic", action="store_true",
                   help="harmonic mean (for rates), CI by the reciprocal of the 1/x interval "
                        f"{_default('ci', 'harmonic')}")
    p.add_argument("--target", type=_number, default=None, metavar="X",
                   help="target CI width as a fraction of the mean "
                        f"{_default('ci', 'target_relative_width')}")
    _min_samples_option(p, "ci")
    _input_options(p)
    p.set_defaults(func=cmd_ci)

    p = sub.add_parser("stable", help="the stable segment's mean, median and their CIs",
                       description="The stable segment of readings (one per line): robust "
                                   "change points, MSER-5 truncation and a stationarity test; "
                                   "of the segment's last 1/1.75 ('used', as perfcast watch): "
                                   "the mean with its subsession-analysis CI (the whole "
                                   "segment's variance), the median with a distribution-free "
                                   "CI and, with --rates, the harmonic mean; one JSON. "
                                   "Exit 1 when there is no stable phase.")
    p.add_argument("file", help="readings, one per line ('-' for stdin)")
    _stats_options(p, "stable")
    p.add_argument("--rates", action="store_true",
                   help="the readings are rates (e.g. ops/s): give the harmonic mean too "
                        f"{_default('stable', 'rates')}")
    p.add_argument("--target", type=_number, default=None, metavar="X",
                   help="CI width as a fraction of the mean that required_readings is for "
                        f"{_default('stable', 'target_relative_width')}")
    _min_samples_option(p, "stable")
    _detector_options(p, "stable")
    _phases_options(p)
    _input_options(p)
    p.set_defaults(func=cmd_stable)

    p = sub.add_parser("wps", help="work-per-second regression t = alpha + w / v",
                       description="Stable speed v from rounds (CSV with work,duration_s); "
                                   "JSON on stdout.")
    p.add_argument("file", help="CSV with columns work,duration_s ('-' for stdin)")
    _stats_options(p, "wps")
    p.add_argument("--lower-bound", type=_number, default=None, metavar="S",
                   help="drop rounds shorter than S seconds (Pilot: 20 strict, 3 quick) "
                        f"{_default('wps', 'lower_bound_s')}")
    p.add_argument("--max-prediction-error", type=_number, default=None, metavar="X",
                   help="warn when a round's residual standard error is above this fraction of "
                        f"the mean duration {_default('wps', 'max_prediction_error')}")
    p.set_defaults(func=cmd_wps)

    p = sub.add_parser("watch", help="live phases of a running benchmark's readings; says stop",
                       description="Readings one per line as a benchmark prints them (a pipe): "
                                   "one JSON line per analysis, a last line with \"stop\": "
                                   "true (exit 0) once the warm-up has visibly ended (MSER-5, "
                                   "a stationarity test, a first part of the stable readings "
                                   "as evidence) and the rest reach their required sample "
                                   "size within the target; exit 1 if the input ends first. "
                                   "A warm-up at a constant level longer than about twice "
                                   "the readings the target needs cannot be told from a "
                                   "plateau before it ends: --min-readings N waits for N.")
    p.add_argument("file", nargs="?", default="-", help="readings, one per line ('-' or none: "
                                                        "stdin)")
    _stats_options(p, "watch")
    p.add_argument("--target", type=_number, default=None, metavar="REL",
                   help="CI width as a fraction of the mean to stop at "
                        f"{_default('watch', 'target_relative_width')}")
    _min_samples_option(p, "watch")
    p.add_argument("--min-readings", type=int, default=None, metavar="N",
                   help=f"no analysis before N readings {_default('watch', 'min_readings')}")
    p.add_argument("--growth", type=_number, default=None, metavar="G",
                   help="next analysis after at most G times the readings so far "
                        f"{_default('watch', 'growth')}")
    _detector_options(p, "watch")
    _input_options(p)
    p.set_defaults(func=cmd_watch)
