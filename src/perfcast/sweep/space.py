"""Parameter spaces of a campaign: value lists, linear and logarithmic ranges, their product.

A parameter is either an explicit list of values or a range ``{start, stop, step, log}``.
A linear range is ``start, start + step, ...`` up to and including ``stop``; a logarithmic one
is ``start, start * step, start * step**2, ...`` up to and including ``stop`` (``step`` is the
factor, > 1). ARPE takes the Cartesian product of the values: every configuration is
one point, run ``iterations`` times (ARPE: https://github.com/martinamaggio/arpe).

What a value may be (a number, or a word that can name a directory) is the schema's rule
(``src/perfcast/schemas/sweep.schema.yaml``); here only what it cannot express is checked.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from perfcast.errors import InputError

#: relative slack so that float ranges include their stop despite rounding (0.1 + 0.2 != 0.3)
_SLACK = 1e-9
#: cap on the number of values a single range may produce (a typo such as step 1e-9)
MAX_RANGE_VALUES = 10_000

Value = int | float | str


def _tidy(x: float) -> int | float:
    """Round away binary noise (0.30000000000000004 -> 0.3); keep integral floats as floats."""
    return float(f"{x:.12g}")


def expand_range(start: float, stop: float, step: float, *, log: bool,
                 where: str = "parameter") -> list[int | float]:
    """Values of a range, ``stop`` included when reached (see the module docstring).

    Parameters
    ----------
    start, stop : float
        First value and bound (finite numbers).
    step : float
        Increment (linear), or factor > 1 (``log``).
    log : bool
        Multiply by ``step`` instead of adding it.
    where : str, default="parameter"
        Names the parameter in an error message.

    Returns
    -------
    list of int or float
        Integers when ``start`` and ``step`` are integers, else floats rounded to 12
        significant digits (so that 0.1 + 0.2 names the directory ``0.3``).

    Raises
    ------
    InputError
        a bound that is not finite, a zero step, a logarithmic range with a bound <= 0 or a
        factor <= 1, an empty range, or more than :data:`MAX_RANGE_VALUES` values.

    Examples
    --------
    >>> expand_range(128, 1024, 2, log=True)
    [128, 256, 512, 1024]
    >>> expand_range(0.1, 0.35, 0.1, log=False)
    [0.1, 0.2, 0.3]
    """
    for key, val in (("start", start), ("stop", stop), ("step", step)):
        if not math.isfinite(val):
            raise InputError(None, f"{where}: range {key} = {val!r} is not a finite number")
    integral = isinstance(start, int) and isinstance(step, int)
    values: list[int | float] = []
    if log:
        if start <= 0 or stop <= 0:
            raise InputError(None, f"{where}: logarithmic range needs start > 0 and stop > 0",
                             expected=f"positive bounds, got start={start}, stop={stop}")
        if step <= 1:
            raise InputError(None, f"{where}: logarithmic range needs a factor step > 1",
                             expected=f"step > 1, got {step}")
        k = 0
        while True:
            v = start * step**k
            if v > stop * (1 + _SLACK):
                break
            values.append(int(v) if integral else _tidy(v))
            k += 1
            if k > MAX_RANGE_VALUES:
                break
    else:
        if step == 0:
            raise InputError(None, f"{where}: range step is 0", expected="a non-zero step")
        n = math.floor((stop - start) / step * (1 + _SLACK) + _SLACK)
        if n > MAX_RANGE_VALUES:
            raise InputError(None, f"{where}: range gives {n + 1} values",
                             expected=f"at most {MAX_RANGE_VALUES}")
        for k in range(n + 1):
            v = start + k * step
            values.append(int(v) if integral else _tidy(v))
    if not values:
        raise InputError(None, f"{where}: range is empty (start={start}, stop={stop}, "
                               f"step={step}{', log' if log else ''})",
                         expected="start to reach stop in the direction of step")
    if len(values) > MAX_RANGE_VALUES:
        raise InputError(None, f"{where}: range gives more than {MAX_RANGE_VALUES} values")
    return values


def parameter_values(name: str, spec: Any) -> list[Value]:
    """Values of one parameter as the validated config gives them.

    Parameters
    ----------
    name : str
        The parameter's name (for messages).
    spec : object
        A list of values, a single value, or a range ``{start, stop, step, log}`` (every
        key present, as ``src/perfcast/schemas/sweep.schema.yaml`` validates and fills it).

    Returns
    -------
    list of int, float or str
        The values in order: a list as given, a range expanded by :func:`expand_range`.

    Raises
    ------
    InputError
        a value that is not finite, two values naming the same run directory (``1`` and
        ``"1"``), or a bad range.

    Examples
    --------
    >>> parameter_values("size", {"start": 128, "stop": 512, "step": 2, "log": True})
    [128, 256, 512]
    >>> parameter_values("input", ["a.y4m", "b.y4m"]), parameter_values("n", 3)
    (['a.y4m', 'b.y4m'], [3])
    """
    where = f"parameter {name!r}"
    if isinstance(spec, Mapping):
        values: list[Value] = list(expand_range(spec["start"], spec["stop"], spec["step"],
                                                log=spec["log"], where=where))
    elif isinstance(spec, Sequence) and not isinstance(spec, str):
        values = list(spec)
    else:
        values = [spec]
    for v in values:
        if isinstance(v, float) and not math.isfinite(v):
            raise InputError(None, f"{where}: value {v!r} is not finite")
    if len({str(v) for v in values}) != len(values):
        raise InputError(None, f"{where}: duplicate values in {values}")
    return values


def product_points(parameters: Mapping[str, Sequence[Value]]) -> list[dict[str, Value]]:
    """Every configuration (Cartesian product), the first parameter varying slowest.

    Examples
    --------
    >>> product_points({"size": [128, 256], "workers": [1, 2]})[:3]
    [{'size': 128, 'workers': 1}, {'size': 128, 'workers': 2}, {'size': 256, 'workers': 1}]
    """
    names = list(parameters)
    return [dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(parameters[n] for n in names))]


def point_id(point: Mapping[str, Value]) -> str:
    """The run-directory name of a configuration: ``name~value_name~value`` (Snakemake's
    ``Paramspace(..., filename_params="*")`` format, so either can name the other's files).

    Examples
    --------
    >>> point_id({"size": 128, "workers": 2})
    'size~128_workers~2'
    """
    return "_".join(f"{k}~{v}" for k, v in point.items())


def is_numeric(values: Sequence[Any]) -> bool:
    """True when every value is a real number (models use numeric parameters only)."""
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
