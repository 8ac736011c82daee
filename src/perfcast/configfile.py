"""A YAML config file read once, strictly: every mapping key given once.

YAML's own loaders keep the last of two equal keys of a mapping, so a setting written twice
(``seed:`` near the top and again further down, a benchmark's ``work:`` repeated) silently takes
the second value. Every YAML config perfcast reads goes through :func:`load_config_file`, which
refuses that, naming the file, the key and both lines; the workflow re-reads the config files
Snakemake loaded (:func:`check_config_files`), since Snakemake reads them itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from perfcast.errors import InputError

#: the tag of YAML's merge key (``<<: *defaults``): merged keys may be overridden
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _require_unique_keys(root: Any, path: str) -> None:
    """Walk the composed YAML document ``root`` and refuse a mapping with a key given twice,
    naming ``path``, the key's path and both lines. Keys are compared as loaded (``yes`` and
    ``true`` are one key); a node an alias repeats is walked once."""
    import yaml
    from yaml.constructor import SafeConstructor

    constructor = SafeConstructor()
    seen_nodes: set[int] = set()
    todo: list[tuple[Any, str]] = [(root, "")]
    while todo:
        node, where = todo.pop()
        if node is None or id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            todo.extend((v, f"{where}[{i}]") for i, v in enumerate(node.value))
        if not isinstance(node, yaml.MappingNode):
            continue
        lines: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            line = key_node.start_mark.line + 1
            try:
                key = constructor.construct_object(key_node, deep=True)
                first = lines.get(key)
            except (TypeError, yaml.YAMLError):  # an unhashable key: the loader's own error
                continue
            name = f"{where}.{key}" if where else str(key)
            if first is not None:
                raise InputError(path, f"key {_show(name)} is given twice, at lines {first} "
                                 f"and {line}", row=line, expected="each key once in a mapping")
            lines[key] = line
            todo.append((value_node, name))


def _show(key: Any) -> str:
    """``key`` for a message: its repr, cut to 80 characters."""
    text = repr(key)
    return text if len(text) <= 80 else f"{text[:80]}..."


def load_config_file(path: str | Path) -> Any:
    """The contents of the YAML (or JSON) config file ``path``, each key given once.

    Parameters
    ----------
    path : str or Path
        the config file.

    Returns
    -------
    object
        the document as PyYAML's safe loader builds it (None for an empty file).

    Raises
    ------
    InputError
        naming the file: a key given twice in one mapping (both lines), a file that is not
        valid YAML (its line), a file that cannot be read.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     cfg = Path(tmp, "c.yaml")
    ...     _ = cfg.write_text("seed: 1\\ncounters:\\n  backend: perf\\nseed: 2\\n")
    ...     load_config_file(cfg)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    perfcast.errors.InputError: .../c.yaml, line 4: key 'seed' is given twice, at lines 1 and 4 \
(expected each key once in a mapping)

    Notes
    -----
    Keys are compared as loaded, so ``yes`` and ``true`` (both True in YAML 1.1) are one key,
    as they are in the loaded config. A key merged in by ``<<: *anchor`` may be overridden: that
    is what the merge key is for.
    """
    import yaml

    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(name, f"cannot be read: {getattr(exc, 'strerror', None) or exc}",
                         expected="a readable UTF-8 YAML file") from None
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        _require_unique_keys(yaml.compose(text, Loader=loader), name)
        return yaml.load(text, Loader=loader)  # noqa: S506 (a safe loader)
    except RecursionError:
        raise InputError(name, "nested too deeply to be read",
                         expected="a configuration of at most 100 levels") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        try:  # Snakemake reads a config file as JSON first: a JSON file YAML cannot parse
            return json.loads(text, object_pairs_hook=lambda pairs: _unique_pairs(pairs, name))
        except (json.JSONDecodeError, RecursionError):  # (an InputError is a ValueError)
            pass
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(name, f"not valid YAML: {problem}",
                         row=None if mark is None else mark.line + 1,
                         expected="a YAML mapping of settings") from None


def _unique_pairs(pairs: list[tuple[str, Any]], path: str) -> dict:
    """A JSON object's pairs as a dict, a key given twice refused (JSON gives no lines)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise InputError(path, f"key {_show(key)} is given twice in one object",
                             expected="each key once in an object")
        seen[key] = value
    return seen


def check_config_files(paths: Iterable[str | Path]) -> None:
    """Read each config file of ``paths`` with :func:`load_config_file`, for its errors only.

    Snakemake loads ``--configfile`` and the ``configfile:`` directive's files itself, with a
    loader that keeps the last of two equal keys; the Snakefile passes ``workflow.configfiles``
    here before it validates the merged config.

    Raises
    ------
    InputError
        as :func:`load_config_file`, for the first file with a key given twice.
    """
    for path in paths:
        load_config_file(path)
