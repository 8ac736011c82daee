"""Derived regressors: arithmetic over run-table columns, parsed and evaluated safely.

ARPE's energy case models energy from ``t_exec * power`` or ``t_exec * %cpu`` (one derived
regressor plus an offset). A config writes such a regressor as an expression string; it is parsed
with :mod:`ast` and only numbers, column names, ``+ - * / // % **``, unary minus and a few numpy
functions are accepted, so no expression can reach attributes, imports or builtins (no ``eval``).
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


def parse_expression(expr: str, *, where: str = "expression") -> ast.Expression:
    """Parse ``expr`` and check that it uses only the allowed syntax (see module docstring)."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise InputError(None, f"{where}: cannot parse {expr!r}: {exc.msg}",
                         expected="an arithmetic expression over column names") from exc
    for node in ast.walk(tree):
        if isinstance(node, ast.Expression | ast.Load | ast.Name):
            continue
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, int | float):
                raise InputError(None, f"{where}: constant {node.value!r} is not a number")
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
    """Value of ``expr`` with names bound to ``columns`` (arrays or Series broadcast as numpy)."""
    tree = parse_expression(expr, where=where)

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            return node.value
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
        return ev(tree)
