"""The resource model: dimensions, their levels, and the resource ceiling.

Wang et al. 2017 (PLoS ONE 12(4): e0175861, Table 2; docs/methods/sensitivity.md): every
controlled resource is a dimension whose levels run
from a lower bound to an upper bound in fixed increments; a profiling run fixes one level per
dimension. The *resource ceiling* (Eq. 2) cuts each dimension at the first level at or above the
program's peak usage in an unrestricted run, plus one spare core for CPU (as ARCPTool's
``searchTOP(...) + 1``). A dimension whose peak is at or below its lower bound is *non-effective*:
it is profiled once, at the lower bound, and that value stands for every level.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import TYPE_CHECKING

import numpy as np

from perfcast.errors import InputError

if TYPE_CHECKING:
    from perfcast.sensitivity.settings import Range

#: resource kinds a real backend can restrict, in ARCPTool's interpolation order (CPU, memory,
#: network, disk write, disk read; the CPU quota sits with CPU)
KINDS: tuple[str, ...] = (
    "cpu_cores", "cpu_quota", "memory", "network", "disk_write", "disk_read",
)

#: unit of a level for each kind on the cgroup backend
UNITS: dict[str, str] = {
    "cpu_cores": "cores",
    "cpu_quota": "cores",
    "memory": "MiB",
    "network": "Mbit/s",
    "disk_write": "MB/s",
    "disk_read": "MB/s",
}

#: config dimension name -> kind, for the cgroup backend (one dimension per kind)
CGROUP_DIMENSIONS: dict[str, str] = {
    "cpu_cores": "cpu_cores",
    "cpu_quota": "cpu_quota",
    "memory_mb": "memory",
    "network_mbit": "network",
    "disk_write_mbps": "disk_write",
    "disk_read_mbps": "disk_read",
}

CPU_KINDS = frozenset({"cpu_cores", "cpu_quota"})


#: the most levels a dimension's range may give (each level is measured, times the others')
MAX_LEVELS = 1000


def range_levels(lower: float, upper: float, step: float, *, name: str = "?") -> tuple[float, ...]:
    """The levels ``lower, lower + step, ..., upper`` (Wang et al. 2017, Table 2).

    Parameters
    ----------
    lower, upper, step : float
        The range; ``upper - lower`` must be a whole number of steps.
    name : str, default="?"
        Names the dimension in an error.

    Returns
    -------
    tuple of float
        the levels, rounded to 10 decimals.

    Raises
    ------
    InputError
        ``step <= 0``, ``upper < lower``, not a whole number of steps, or more than
        :data:`MAX_LEVELS` levels.

    Examples
    --------
    >>> range_levels(0.5, 2.0, 0.5)
    (0.5, 1.0, 1.5, 2.0)
    """
    if not (step > 0 and upper >= lower):
        raise InputError(None, f"dimension {name}: need step > 0 and upper >= lower",
                         expected=f"lower <= upper, step > 0 (got {lower}, {upper}, {step})")
    n = (upper - lower) / step
    if not n < MAX_LEVELS:  # (inf too: a tiny step over a wide range)
        raise InputError(None, f"dimension {name}: {lower} to {upper} in steps of {step} is "
                               f"{n + 1:.3g} levels", expected=f"at most {MAX_LEVELS} levels")
    if abs(n - round(n)) > 1e-6:
        raise InputError(None, f"dimension {name}: ({upper} - {lower}) / {step} is not whole",
                         expected="upper - lower a whole number of steps")
    return tuple(round(lower + k * step, 10) for k in range(int(round(n)) + 1))


@dataclass(frozen=True)
class Dimension:
    """One controlled resource. ``levels`` run from least to most resource.

    ``reverse`` marks an axis whose recorded value *falls* as the resource grows (a restriction
    code); interpolation then runs on ``-value`` so the coordinates still increase.
    """

    name: str
    kind: str
    levels: tuple[float, ...]
    unit: str = ""
    reverse: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InputError(None, f"dimension {self.name}: unknown kind {self.kind!r}",
                             expected=f"one of {list(KINDS)}")
        if not self.levels:
            raise InputError(None, f"dimension {self.name}: no levels")
        c = self.coords
        if len(c) > 1 and not np.all(np.diff(c) > 0):
            raise InputError(None, f"dimension {self.name}: levels must be strictly monotone",
                             expected="increasing resource order")

    @classmethod
    def from_range(cls, name: str, kind: str, lower: float, upper: float, step: float,
                   unit: str = "") -> Dimension:
        """A dimension whose levels are :func:`range_levels`.

        Parameters
        ----------
        name : str
            The dimension's name (a column of the grid).
        kind : str
            One of :data:`KINDS`.
        lower, upper, step : float
            The range (:func:`range_levels`).
        unit : str, default=""
            The levels' unit (empty: that of :data:`UNITS` for ``kind``).

        Returns
        -------
        Dimension
        """
        return cls(name, kind, range_levels(lower, upper, step, name=name),
                   unit or UNITS.get(kind, ""))

    @property
    def coords(self) -> np.ndarray:
        """Interpolation coordinates: the level values (negated on a reversed axis)."""
        v = np.asarray(self.levels, dtype=float)
        return -v if self.reverse else v

    def __len__(self) -> int:
        return len(self.levels)

    def index(self, value: float) -> int:
        """Index of the level equal to ``value`` (to 1e-9)."""
        for i, lv in enumerate(self.levels):
            if math.isclose(lv, value, rel_tol=1e-9, abs_tol=1e-9):
                return i
        raise KeyError(f"{value} is not a level of {self.name} {self.levels}")


@dataclass(frozen=True)
class AxisRange:
    """The profiled part of one dimension: levels ``0..ceiling`` (just ``0`` if non-effective)."""

    dim: Dimension
    effective: bool
    ceiling: int
    peak: float | None

    @property
    def indices(self) -> range:
        return range(0, self.ceiling + 1)

    @property
    def anchor(self) -> int:
        """The level the other dimensions' 1-D searches hold this one at (its ceiling)."""
        return self.ceiling


def ceiling_range(dim: Dimension, peak: float | None, spare_cores: float) -> AxisRange:
    """Cut ``dim`` at the resource ceiling for a measured ``peak`` (Wang et al. 2017, Eq. 2).

    Parameters
    ----------
    dim : Dimension
        The dimension.
    peak : float or None
        The unrestricted run's peak usage in the dimension's unit; None (unknown) keeps the
        whole range; at or below the lower bound the dimension is non-effective.
    spare_cores : float
        For CPU, the ceiling is the first level at or above the first level at or above the
        peak plus ``spare_cores`` (the workflow's ``sensitivity.spare_cores``; the method's
        is one, ARCPTool: ``searchTOP(min, cpu, 1) + 1``).

    Returns
    -------
    AxisRange
        the ceiling index (capped at the upper bound) and whether the dimension is effective.

    Raises
    ------
    InputError
        a peak on a reversed axis.

    Examples
    --------
    >>> cpu = Dimension("cpu_cores", "cpu_cores", tuple(float(c) for c in range(1, 9)))
    >>> r = ceiling_range(cpu, 3.2, spare_cores=1)  # 4 is the first level at or above the peak
    >>> cpu.levels[r.ceiling], r.effective
    (5.0, True)
    >>> ceiling_range(cpu, 1.0, spare_cores=1).effective  # at the lower bound: never limiting
    False
    """
    top = len(dim) - 1
    if peak is None or top == 0:
        return AxisRange(dim, top > 0, top, peak)
    if dim.reverse:
        raise InputError(None, f"dimension {dim.name}: a peak cannot be given on a reversed axis")
    lv = np.asarray(dim.levels, dtype=float)
    if peak <= lv[0] + 1e-12:
        return AxisRange(dim, False, 0, peak)
    at_or_above = np.flatnonzero(lv >= peak - 1e-12)
    c = int(at_or_above[0]) if at_or_above.size else top
    if dim.kind in CPU_KINDS and spare_cores > 0:
        more = np.flatnonzero(lv >= lv[c] + spare_cores - 1e-12)
        c = int(more[0]) if more.size else top
    return AxisRange(dim, True, c, peak)


@dataclass(frozen=True)
class ResourceModel:
    """The dimensions profiled, kept in interpolation order (:data:`KINDS`, then given order)."""

    dims: tuple[Dimension, ...]

    def __post_init__(self) -> None:
        names = [d.name for d in self.dims]
        if len(set(names)) != len(names):
            raise InputError(None, f"duplicate dimension names {names}")
        if not self.dims:
            raise InputError(None, "the resource model has no dimensions",
                             expected="at least one dimension")

    @classmethod
    def ordered(cls, dims: Sequence[Dimension]) -> ResourceModel:
        """A model of ``dims`` in ARCPTool's interpolation order (:data:`KINDS`)."""
        order = {k: i for i, k in enumerate(KINDS)}
        return cls(tuple(sorted(dims, key=lambda d: order[d.kind])))

    @classmethod
    def from_dimensions(cls, dimensions: Mapping[str, Range | None]) -> ResourceModel:
        """The cgroup backend's resource model of ``sensitivity.dimensions``.

        Parameters
        ----------
        dimensions : Mapping[str, Range]
            Dimension name -> its :class:`~perfcast.sensitivity.settings.Range` (None: left
            out); names are
            those of :data:`CGROUP_DIMENSIONS` (``cpu_cores``, ``cpu_quota``, ``memory_mb``,
            ``disk_read_mbps``, ``disk_write_mbps``, ``network_mbit``).

        Returns
        -------
        ResourceModel
            the dimensions in interpolation order (:data:`KINDS`).

        Raises
        ------
        InputError
            an unknown name, a range that is not a whole number of steps, fractional cores, or
            no dimension at all.

        Examples
        --------
        >>> from perfcast.sensitivity.settings import Range
        >>> model = ResourceModel.from_dimensions({"memory_mb": Range(32, 64, 16),
        ...                                       "cpu_quota": Range(0.5, 1.0, 0.5)})
        >>> model.names, model.shape
        (('cpu_quota', 'memory_mb'), (2, 3))
        """
        dims = []
        for name, spec in dimensions.items():
            if spec is None:  # left out (``dimensions: {name: null}``)
                continue
            if name not in CGROUP_DIMENSIONS:
                raise InputError(None, f"unknown dimension {name!r}",
                                 expected=f"one of {list(CGROUP_DIMENSIONS)}")
            kind = CGROUP_DIMENSIONS[name]
            dims.append(Dimension.from_range(name, kind, float(spec.lower), float(spec.upper),
                                             float(spec.step)))
            if kind == "cpu_cores" and any(v != int(v) or v < 1 for v in dims[-1].levels):
                raise InputError(None, f"dimension {name}: core counts must be whole and >= 1")
        return cls.ordered(dims)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dims)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(d) for d in self.dims)

    def __getitem__(self, name: str) -> Dimension:
        for d in self.dims:
            if d.name == name:
                return d
        raise KeyError(name)

    def point(self, idx: Sequence[int]) -> dict[str, float]:
        """Level values of a grid index."""
        return {d.name: d.levels[i] for d, i in zip(self.dims, idx, strict=True)}

    def indices(self) -> Iterator[tuple[int, ...]]:
        """Every grid index, in C order."""
        return product(*(range(len(d)) for d in self.dims))

    def ceilings(self, peaks: Mapping[str, float | None], spare_cores: float
                 ) -> tuple[AxisRange, ...]:
        """:func:`ceiling_range` of every dimension (``peaks`` by dimension name)."""
        return tuple(ceiling_range(d, peaks.get(d.name), spare_cores) for d in self.dims)
