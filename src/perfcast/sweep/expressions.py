"""Derived regressors: arithmetic over run-table columns, parsed and evaluated safely.

ARPE's energy case models energy from ``t_exec * power`` or ``t_exec * %cpu`` (one derived
regressor plus an offset). A config writes such a regressor as an expression string; it is parsed
with :mod:`ast` and only numbers, column names, ``+ - * / // % **``, unary minus and a few numpy
functions are accepted, so no expression can reach attributes, imports or builtins (no ``eval``).

Bounded: an expression is at most :data:`MAX_LENGTH` characters, and every number in it is a
float, so ``9**9**9`` overflows to infinity at once instead of computing an integer of 370
million digits (Python's ``int ** int`` is exact, unbounded and uninterruptible). A value that
is not finite (``log`` of 0, a division by 0, an overflow) on some rows is left for the model
fit, which takes it as missing and names the rows in its notes (never standardised into a NaN
that silently drops the term); on every row it is an error naming the first row and the values
it read.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from perfcast.errors import InputError

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "exp": np.exp,
    "sqrt": np.sqrt,
    "abs": np.abs,
    "minimum": np.minimum,
    "maximum": np.maximum,
}


#: the longest expression accepted (characters): a formula over a few columns is far shorter,
#: and the parser's time and memory stay small
MAX_LENGTH = 1000


def parse_expression(expr: str, *, where: str = "expression") -> ast.Expression:
    """Parse ``expr`` and check that it uses only the allowed syntax (see module docstring)."""
    if len(expr) > MAX_LENGTH:
        raise InputError(None, f"{where}: an expression of {len(expr)} characters",
                         expected=f"at most {MAX_LENGTH} characters")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise InputError(None, f"{where}: cannot parse {expr!r}: {exc.msg}",
                         expected="an arithmetic expression over column names") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # an integer of 4300+ digits...
        raise InputError(None, f"{where}: cannot parse {expr!r}: {exc}",
                         expected="an arithmetic expression over column names") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Expression | ast.Load | ast.Name):
            continue
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, int | float):
                raise InputError(None, f"{where}: constant {node.value!r} is not a number")
            try:
                float(node.value)
            except OverflowError:
                raise InputError(None, f"{where}: constant of {len(str(node.value))} digits",
                                 expected="a number a float can hold") from None
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            continue
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            continue
        if type(node) in _BINARY or type(node) in _UNARY:
            continue
        if isinstance(node, ast.Call):
            if (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                    and not node.keywords):
                continue
            raise InputError(None, f"{where}: call not allowed in {expr!r}",
                             expected=f"one of the functions {sorted(FUNCTIONS)}")
        raise InputError(None, f"{where}: {type(node).__name__} not allowed in {expr!r}",
                         expected="numbers, column names, + - * / // % ** and "
                                  f"{sorted(FUNCTIONS)}")
    return tree


def expression_names(expr: str, *, where: str = "expression") -> set[str]:
    """The column names ``expr`` reads (function names excluded)."""
    tree = parse_expression(expr, where=where)
    funcs = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in funcs}


def evaluate(expr: str, columns: Mapping[str, Any], *, where: str = "expression") -> Any:
    """Value of ``expr`` with names bound to ``columns`` (arrays or Series broadcast as numpy),
    computed in floats.

    Parameters
    ----------
    expr : str
        Arithmetic over names, numbers, ``+ - * / // % **`` and the functions log, log2,
        log10, exp, sqrt, abs, minimum, maximum.
    columns : mapping of str to object
        The value of each name (a column, an array or a number).
    where : str, default="expression"
        Names the expression in an error message.

    Returns
    -------
    object
        A float array (or a float when every name is a number).

    Raises
    ------
    InputError
        when no row is finite: naming ``where``, the expression, and the first row (1-based, in
        the order of ``columns``) with the values it read.

    Examples
    --------
    >>> import numpy as np
    >>> evaluate("2 * 24 * size**3", {"size": np.array([1, 2])}).tolist()
    [48.0, 384.0]
    """
    tree = parse_expression(expr, where=where)

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            return np.float64(node.value)  # float arithmetic: bounded time, overflow -> inf
        if isinstance(node, ast.Name):
            if node.id not in columns:
                raise InputError(None, f"{where}: unknown name {node.id!r} in {expr!r}",
                                 expected=f"one of {sorted(columns)}")
            return np.asarray(columns[node.id], dtype=float)
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](ev(node.operand))
        if isinstance(node, ast.Call):
            return FUNCTIONS[node.func.id](*(ev(a) for a in node.args))  # type: ignore[attr-defined]
        raise AssertionError(f"unchecked node {type(node).__name__}")  # parse_expression guards

    with np.errstate(all="ignore"):
        value = ev(tree)
    _require_finite(value, expr, columns, where)
    return value


def _require_finite(value: Any, expr: str, columns: Mapping[str, Any], where: str) -> None:
    """Some element of ``value`` finite, else an InputError naming the first row (see
    :func:`evaluate`). Rows where the value is not finite (a log of 0 on one configuration) are
    left as they are: the model fit treats them as missing and its notes name them."""
    arr = np.atleast_1d(np.asarray(value, dtype=float))
    bad = np.flatnonzero(~np.isfinite(arr))
    if arr.size == 0 or len(bad) < arr.size:  # no row (no run succeeded): nothing to check
        return
    k = int(bad[0])
    read = []
    for name in sorted(expression_names(expr)):
        if name in columns:
            col = np.atleast_1d(np.asarray(columns[name], dtype=float))
            read.append(f"{name}={col[min(k, len(col) - 1)]:g}")
    first = f"row {k + 1}" if arr.size > 1 else "its value"
    raise InputError(None, f"{where}: {expr!r} is {arr[k]:g} in {len(bad)} of {arr.size} rows "
                     f"(first {first}" + (f": {', '.join(read)}" if read else "") + ")",
                     expected="an expression finite on some row (log of a positive number, "
                              "no division by zero, no overflow)")
