"""From a config section to a stage's frozen settings: one way, defaults in the schema only.

Each stage's settings are frozen dataclasses whose fields are the keys of its config section.
The section is first validated against the stage's JSON schema (``src/perfcast/schemas/``), which
fills in every default; :func:`build` then constructs the dataclass. A dataclass field has no
default of its own, so a key the schema does not default is an error here, not a silent second
default. The workflow passes a stage's settings as one ``params:`` entry (its plain dict, so that
Snakemake reruns exactly the jobs whose settings changed); the command line builds the same
objects from the same schema with :func:`from_section`.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import re
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from perfcast.errors import InputError

T = TypeVar("T")

#: the schemas of every config section: package data, read by the workflow and the command line
SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"


def schema_path(name: str) -> Path:
    """``perfcast/schemas/<name>.schema.yaml`` (shipped inside the package)."""
    path = SCHEMA_DIR / f"{name}.schema.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: schema not found (an incomplete perfcast install?)")
    return path


def schema_default(name: str, key: str) -> Any:
    """The default the schema ``name`` gives the setting ``key`` (dotted: ``"fit.cv"``; ``*``
    stands for any name of a map, ``"imports.*.format"``).

    Follows ``properties``, ``additionalProperties`` (for ``*``) and ``$ref`` (within a schema,
    ``#/$defs/...``, or to a sibling schema file), so the command line's help names the one
    default there is.

    Raises
    ------
    KeyError
        when the schema defines no such key or gives it no default (a programming error: the
        help of a flag names a key that does not exist).

    Examples
    --------
    >>> schema_default("predict", "ipc_range")
    [0.001, 16]
    >>> schema_default("sweep", "imports.*.format")
    'arpe'
    """
    path = schema_path(name)
    node, doc = _load(path), path
    for part in key.split("."):
        node, doc = _resolve(node, doc)
        props = node.get("properties") or {}
        if part == "*" and isinstance(node.get("additionalProperties"), Mapping):
            node = node["additionalProperties"]
            continue
        if part not in props:
            raise KeyError(f"{path.name}: no setting {key!r}")
        node = props[part]
    node, doc = _resolve(node, doc)
    if "default" not in node:
        raise KeyError(f"{path.name}: {key!r} has no default")
    return copy.deepcopy(node["default"])


def _resolve(node: Mapping[str, Any], doc: Path) -> tuple[Mapping[str, Any], Path]:
    """``node`` with its ``$ref`` chain followed (``file.yaml#/pointer`` or ``#/pointer``);
    local keys beside a ``$ref`` (e.g. a ``default``) win over the referenced ones."""
    seen = 0
    while "$ref" in node and seen < 20:
        target, _, pointer = node["$ref"].partition("#")
        doc = doc.with_name(target) if target else doc
        ref = _load(doc)
        for part in (p for p in pointer.split("/") if p):
            ref = ref[part]
        node = {**ref, **{k: v for k, v in node.items() if k != "$ref"}}
        seen += 1
    return node, doc


def help_default(name: str, key: str, fmt: Callable[[Any], str] = str) -> str:
    """``"(default: X)"`` with X the schema's default of ``key``, for a command-line flag's help
    text (:func:`schema_default`): the help names the one default there is.

    Parameters
    ----------
    name : str
        the schema (``perfcast/schemas/<name>.schema.yaml``).
    key : str
        the setting, dotted (``"read.separator"``).
    fmt : callable, default=str
        renders the default (e.g. a list as comma-separated text).

    Examples
    --------
    >>> help_default("predict", "ipc_range", lambda v: " to ".join(map(str, v)))
    '(default: 0.001 to 16)'
    """
    return f"(default: {fmt(schema_default(name, key))})"


@functools.cache
def _load(path: Path) -> dict:
    """A schema file of the package, parsed by libyaml where PyYAML has it (ten times faster
    than the pure-Python parser: every Snakemake start, job step and command validates)."""
    import yaml

    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def validate(section: Mapping[str, Any] | None, name: str, *, where: str | None = None) -> dict:
    """A copy of ``section`` validated against schema ``name`` with its defaults filled in.

    The same check as the workflow's (``snakemake.utils.validate`` with ``set_default``: JSON
    Schema draft 2020-12, each missing property takes the schema's ``default``), with JSON's
    meaning where Python's differs: a number is finite (YAML's ``.nan`` and ``.inf`` are
    refused) and a ``pattern`` ending in ``$`` does not accept a trailing newline. Then the
    checks no schema can express (:data:`_CROSS_CHECKS`, e.g. two distinct generations).

    First the size of the section as it would be expanded is counted without expanding it
    (:func:`_require_bounded`): YAML aliases let a few hundred bytes name billions of values
    (the "billion laughs"), which validation would visit one by one. Error messages are cut
    to :data:`MAX_MESSAGE` characters.

    Parameters
    ----------
    section : mapping or None
        the config section as loaded (None: empty); it is not modified.
    name : str
        the schema (``perfcast/schemas/<name>.schema.yaml``).
    where : str or None, default=None
        the config file, named in the error.

    Returns
    -------
    dict
        a deep copy of ``section`` with every default the schema gives filled in.

    Raises
    ------
    InputError
        naming the key path, the offending value and what the schema expects.

    Examples
    --------
    >>> validate({"benchmarks": ["mcf"]}, "predict")
    {'benchmarks': ['mcf'], 'ipc_range': [0.001, 16]}
    >>> validate({"ipc_range": [2, 1]}, "predict", where="config.yaml")
    Traceback (most recent call last):
    perfcast.errors.InputError: config.yaml: predict: ipc_range: [2, 1] is empty (expected \
[lowest, highest] with lowest < highest)
    """
    _require_bounded(section, name, where)
    data = copy.deepcopy(dict(section or {}))
    _check(name, data, where)
    for check in _CROSS_CHECKS.get(name, ()):
        check(data, name, where)
    return data


#: the most values (mappings, lists and scalars, each alias counted as what it expands to) a
#: config section may hold; a real config holds a few thousand
MAX_CONFIG_VALUES = 1_000_000
#: the longest error message validation writes (characters)
MAX_MESSAGE = 500


def _require_bounded(section: Any, name: str, where: str | None) -> None:
    """Refuse a section that would expand to more than :data:`MAX_CONFIG_VALUES` values.

    Counted on the loaded structure, in which a YAML alias is the same Python object as its
    anchor: each distinct object is counted once (memoised by identity), so a billion-laughs
    document of a few hundred bytes costs a few hundred steps here.
    """
    sizes: dict[int, int] = {}
    worst: list[tuple[int, int, str]] = []

    def size(obj: Any, key: str, depth: int) -> int:
        if not isinstance(obj, dict | list | tuple):
            return 1
        if id(obj) in sizes:
            return sizes[id(obj)]
        if depth > 100:
            raise InputError(where, f"{name}: {key or '(top level)'}: nested more than 100 "
                             "levels deep", expected="a configuration of at most 100 levels")
        sizes[id(obj)] = 0  # a cycle (a YAML alias to its own ancestor) counts nothing more
        items = obj.items() if isinstance(obj, dict) else enumerate(obj)
        n = 1 + sum(size(v, f"{key}.{k}" if key else str(k), depth + 1) for k, v in items)
        sizes[id(obj)] = n
        if n > MAX_CONFIG_VALUES and key and (not worst or depth < worst[0][0]):
            worst[:] = [(depth, n, key)]  # the shallowest key too large: the one to name
        return n

    total = size(dict(section or {}), "", 0)
    if total > MAX_CONFIG_VALUES:
        _, n, key = worst[0] if worst else (0, total, "")
        raise InputError(where, f"{name}: {key or '(top level)'}: expands to {n:.3g} values "
                         "(YAML aliases repeating aliases?)",
                         expected=f"a configuration of at most {MAX_CONFIG_VALUES:,} values")


@functools.cache
def _validator(name: str, pointer: str | None = None) -> Any:
    """The validator of schema ``name`` (its ``$id`` a file URI, for the ``$ref`` to sibling
    schemas), or with ``pointer`` of a document ``{"value": <that sub-schema>}``; built once per
    process."""
    path = schema_path(name)
    schema = {**_load(path), "$id": path.as_uri()}
    if pointer is not None:  # a document of its own beside the schema, whose $ref is retrieved
        schema = {"$id": path.with_name(f"{name}.flag").as_uri(), "type": "object",
                  "properties": {"value": {"$ref": f"{path.name}#{pointer}"}}}
    return _make_validator(schema)


def _make_validator(schema: dict) -> Any:
    """A validator of ``schema`` with JSON's meaning of numbers and patterns, filling defaults,
    over the shipped schemas' registry (:func:`_registry`)."""
    import jsonschema
    from jsonschema import Draft202012Validator, validators

    def set_defaults(validator, properties, instance, subschema):
        for prop, sub in properties.items():
            if "default" in sub and isinstance(instance, dict):
                instance.setdefault(prop, copy.deepcopy(sub["default"]))
        yield from Draft202012Validator.VALIDATORS["properties"](
            validator, properties, instance, subschema)

    def pattern(validator, patrn, instance, subschema):
        # the whole string must match: Python's ``$`` also matches before a trailing newline,
        # so "mcf\n" would pass ``^[a-z]+$`` (ECMA-262's ``$``, JSON Schema's meaning, not)
        if validator.is_type(instance, "string") and not re.search(_anchored(patrn), instance):
            why = _SAFE_NAME_RULE if patrn.startswith(_SAFE_NAME_START) else ""
            yield jsonschema.ValidationError(f"{_clip(instance)} does not match {patrn!r}{why}")

    cls = validators.extend(Draft202012Validator, {"properties": set_defaults,
                                                   "pattern": pattern},
                            type_checker=_type_checker())
    return cls(schema, registry=_registry())


@functools.cache
def _registry() -> Any:
    """Every shipped schema by its file URI, crawled once: a ``$ref`` to a sibling schema is
    then a look-up (an uncrawled registry crawls the referenced document at every ``$ref`` of
    every validation)."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    resources = []
    for path in sorted(SCHEMA_DIR.glob("*.schema.yaml")):
        # without its $schema a referenced schema is checked by the referring (defaults-filling)
        # class: jsonschema picks the validator of a $ref'd document by its $schema
        contents = dict(_load(path))
        contents.pop("$schema", None)
        resources.append((path.as_uri(),
                          Resource.from_contents(contents, default_specification=DRAFT202012)))
    return Registry().with_resources(resources).crawl()


def _check(name: str, data: Any, where: str | None, pointer: str | None = None, *,
           schema: dict | None = None) -> None:
    """Validate ``data`` in place (defaults filled) against schema ``name`` (with ``pointer``:
    ``data["value"]`` against that sub-schema; with ``schema``: against it, named ``name``)."""
    import jsonschema

    try:
        (_make_validator(schema) if schema is not None
         else _validator(name, pointer)).validate(data)
    except jsonschema.ValidationError as exc:
        key = ".".join(str(p) for p in exc.absolute_path) or "(top level)"
        message = exc.message
        if exc.validator == "not" and isinstance(exc.schema, dict) and exc.schema.get(
                "description"):  # a key refused on purpose: say why, not "should not be valid"
            message = f"{_clip(exc.instance)} is not accepted here: {exc.schema['description']}"
        if isinstance(exc.instance, float) and not math.isfinite(exc.instance):
            message = f"{exc.instance} is not a finite number ({message})"
        # a schema's own words for what it expects (its ``x-expected``), where it has them
        expected = exc.schema.get("x-expected") if isinstance(exc.schema, dict) else None
        raise InputError(where, f"{name}: {_cut(key, MAX_MESSAGE // 2)}: "
                         f"{_cut(message, MAX_MESSAGE)}", expected=expected) from None


#: how every schema pattern of a name that becomes a file or folder name starts: a letter, digit
#: or underscore first, so never ``.``, ``..``, a hidden name or an option; no separator after
_SAFE_NAME_START = ("^[A-Za-z0-9_][", "^[A-Za-z0-9][")
_SAFE_NAME_RULE = (" (a name that becomes a file or folder name: the pattern's characters, no "
                   "separator, not starting with '.' or '-'; never '.', '..', hidden or a path)")


def _cut(text: str, limit: int) -> str:
    """``text``, cut to ``limit`` characters (saying how long it was): an error message stays
    one readable line whatever was given."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _clip(value: Any, limit: int = 200) -> str:
    """``repr(value)`` cut to ``limit`` characters (:func:`_cut`)."""
    return _cut(repr(value), limit)


def _anchored(patrn: str) -> str:
    """``patrn`` with a final unescaped ``$`` as ``\\Z`` (end of string, no newline before)."""
    if patrn.endswith("$") and not patrn.endswith("\\$"):
        return patrn[:-1] + r"\Z"
    return patrn


def _finite_number(checker: Any, instance: Any) -> bool:
    """JSON numbers are finite: a YAML ``.nan`` or ``.inf`` passes no ``minimum``."""
    return (isinstance(instance, int | float) and not isinstance(instance, bool)
            and math.isfinite(instance))


@functools.cache
def _type_checker() -> Any:
    """Draft 2020-12's type checker with finite numbers (:func:`_finite_number`); built on first
    use, so that importing this module (every rule's job does) does not import jsonschema."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator.TYPE_CHECKER.redefine("number", _finite_number)


def _distinct_generations(counters: Mapping[str, Any] | None, name: str, where: str | None,
                          key: str = "counters.generations") -> None:
    gens = (counters or {}).get("generations") or {}
    if gens.get("old") is not None and gens.get("old") == gens.get("new"):
        raise InputError(where, f"{name}: {key}: old and new are both {gens['old']!r}",
                         expected="two different CPU generations")


def _clock_per_generation(counters: Mapping[str, Any] | None, name: str, where: str | None,
                          prefix: str = "counters.") -> None:
    """A ``clock_ghz`` key that is a generation's name in another case (``G2`` for ``g2``) is
    a misspelling: it is never looked up, and that generation's runtime then has no clock.
    Other keys are allowed, since a config file merged over the default keeps the default's
    generations' clocks."""
    counters = counters or {}
    gens = counters.get("generations") or {}
    known = [g for g in (gens.get("old"), gens.get("new")) if g is not None]
    for key in sorted(counters.get("clock_ghz") or {}):
        twin = [g for g in known if g != key and g.casefold() == str(key).casefold()]
        if twin:
            raise InputError(where, f"{name}: {prefix}clock_ghz: {key!r} is not the generation "
                                    f"{twin[0]!r}", expected=f"the generations' names as "
                                                             f"written: {known}")


def _distinct_base_events(counters: Mapping[str, Any] | None, name: str, where: str | None,
                          prefix: str = "counters.") -> None:
    """Instructions and cycles are two events: read from one, every IPC is 1 whatever the
    data, and every IPC ratio too."""
    base = (counters or {}).get("base_events") or {}
    ins, cyc = base.get("instructions"), base.get("cycles")
    if ins is not None and ins == cyc:
        raise InputError(where, f"{name}: {prefix}base_events: instructions and cycles are both "
                                f"{ins!r}", expected="two different events (every IPC would be 1)")


def _ascending_range(predict: Mapping[str, Any] | None, name: str, where: str | None,
                     key: str = "predict.ipc_range") -> None:
    low, high = (predict or {}).get("ipc_range") or (0, 1)
    if not low < high:
        raise InputError(where, f"{name}: {key}: [{low}, {high}] is empty",
                         expected="[lowest, highest] with lowest < highest")


def _radius_needs_dtw(align: Mapping[str, Any] | None, name: str, where: str | None,
                      prefix: str = "align.") -> None:
    """A Sakoe-Chiba radius only with ``method: dtw``: the exact method finds the unconstrained
    optimum and takes no band, so a radius given with it would be ignored (and recorded)."""
    align = align or {}
    radius, method = align.get("sakoe_chiba_radius"), align.get("method", "exact")
    if radius is not None and method != "dtw":
        raise InputError(where, f"{name}: {prefix}sakoe_chiba_radius: {radius} applies to "
                         f"{prefix}method dtw only, not {method}",
                         expected=f"{prefix}method: dtw with a radius, or no radius (exact "
                                  "takes no band)")


#: the longest name of a file or folder most file systems take (bytes, NAME_MAX)
NAME_MAX = 255


def require_results_dir(path: str, *, where: str | None = None,
                        key: str = "results_dir") -> str:
    """``path`` as the folder every output of a run goes to, or an error before any job.

    The schema bounds its length and characters; this checks what it cannot: the folder is
    not the file system's root (``""`` and ``"/"`` would put ``/logs``, ``/raw``, ``/model``
    there), none of its names is longer than :data:`NAME_MAX` bytes, and no part of it that
    exists is a file (every output would fail to be made, with a traceback). Relative paths
    are taken from the working directory.

    Parameters
    ----------
    path : str
        the configured ``results_dir``.
    where : str or None, default=None
        the config file(s), named in the error.
    key : str, default="results_dir"
        the key, named in the error.

    Returns
    -------
    str
        ``path`` without trailing separators (``results/`` gives ``results``), so that the
        paths built from it have no ``//``.

    Raises
    ------
    InputError
        naming the key, the value and what was expected.

    Examples
    --------
    >>> require_results_dir("results/")
    'results'
    >>> require_results_dir("/")
    Traceback (most recent call last):
    perfcast.errors.InputError: <input>: config: results_dir: '/' is the file system's root \
(expected a directory path other than / (relative to the working directory or absolute), not an \
existing file)
    """
    import os

    expected = ("a directory path other than / (relative to the working directory or "
                "absolute), not an existing file")
    text = str(path)
    if not text.strip():
        raise InputError(where, f"config: {key}: {path!r} is empty", expected=expected)
    if os.path.normpath(text).lstrip("/") == "" or os.path.realpath(text) == "/":
        raise InputError(where, f"config: {key}: {_clip(path)} is the file system's root",
                         expected=expected)
    long = [p for p in text.split("/") if len(p.encode("utf-8", "surrogateescape")) > NAME_MAX]
    if long:
        raise InputError(where, f"config: {key}: the name {_clip(long[0], 80)} is "
                         f"{len(long[0].encode('utf-8', 'surrogateescape'))} bytes long",
                         expected=f"each name of the path at most {NAME_MAX} bytes")
    node = Path(text)
    for part in (node, *node.parents):
        if part.exists() or part.is_symlink():
            if not part.is_dir():
                what = "is" if part == node else f"is under {str(part)!r}, which is"
                raise InputError(where, f"config: {key}: {_clip(path)} {what} not a directory",
                                 expected=expected)
            break
    return text.rstrip("/") or text


def require_writable_dir(path: str, *, key: str = "results_dir") -> None:
    """The folder ``path`` (or, where it does not exist yet, the nearest folder above it that
    does) can be written: checked when a run starts, so that a run into a read-only folder
    stops at once, naming it, instead of when the first job writes.

    Raises
    ------
    InputError
        naming the key and the folder that cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     require_writable_dir(f"{tmp}/results/new")
    """
    import os

    node = Path(path).absolute()
    while not node.exists() and node != node.parent:
        node = node.parent
    if not (node.is_dir() and os.access(node, os.W_OK | os.X_OK)):
        raise InputError(node, f"cannot be written (config: {key}: {_clip(path)})",
                         expected=f"a {key} whose folder this user may write")


#: checks no JSON schema can express (one key against another), per schema name
_CROSS_CHECKS: dict[str, tuple[Callable[[dict, str, str | None], None], ...]] = {
    "config": (lambda d, n, w: _distinct_generations(d.get("counters"), n, w),
               lambda d, n, w: _clock_per_generation(d.get("counters"), n, w),
               lambda d, n, w: _distinct_base_events(d.get("counters"), n, w),
               lambda d, n, w: _ascending_range(d.get("predict"), n, w),
               lambda d, n, w: _radius_needs_dtw(d.get("align"), n, w)),
    "counters": (lambda d, n, w: _distinct_generations(d, n, w, "generations"),
                 lambda d, n, w: _clock_per_generation(d, n, w, ""),
                 lambda d, n, w: _distinct_base_events(d, n, w, "")),
    "predict": (lambda d, n, w: _ascending_range(d, n, w, "ipc_range"),),
    "align": (lambda d, n, w: _radius_needs_dtw(d, n, w, ""),),
}


def validate_flags(given: Mapping[str, Any], name: str, flags: Mapping[str, str], *,
                   where: str | None = None) -> dict:
    """:func:`validate` of a section built from command-line flags, an error about a key a
    flag set naming that flag, not the config key (the user typed the flag).

    The same wording as ``perfcast fit``'s flags: ``--epsilon 5.0 is greater than the maximum
    of 1 (sensitivity.replay.epsilons)``. A key of a list a flag fills (``replay.epsilons``) is
    matched with its item's index (``replay.epsilons.0``).

    Parameters
    ----------
    given : mapping of str to object
        The section, the flags left out absent (the schema fills their defaults).
    name : str
        The schema (``perfcast/schemas/<name>.schema.yaml``).
    flags : mapping of str to str
        Key path in the section (``replay.lhs_repeats``) -> the flag that sets it.
    where : str, optional, default=None
        Where the values come from, named first in an error (``command line``).

    Returns
    -------
    dict
        As :func:`validate`.

    Raises
    ------
    InputError
        a value the schema refuses: naming the flag, the value, what is wrong and the config
        key; a key no flag sets as :func:`validate` names it.

    Examples
    --------
    >>> validate_flags({"replay": {"lhs_repeats": 0}}, "sensitivity",
    ...                {"replay.lhs_repeats": "--lhs-repeats"})
    Traceback (most recent call last):
    perfcast.errors.InputError: <input>: --lhs-repeats 0 is less than the minimum of 1 \
(sensitivity.replay.lhs_repeats)
    """
    try:
        return validate(given, name, where=where)
    except InputError as exc:
        text = str(exc)
        for key, flag in sorted(flags.items(), key=lambda kv: -len(kv[0])):
            m = re.search(rf"{re.escape(name)}: {re.escape(key)}(?:\.\d+)?: ", text)
            if m:
                raise InputError(where, f"{flag} {text[m.end():].strip()} ({name}.{key})"
                                 ) from None
        raise


def check_value(value: Any, name: str, pointer: str, *, flag: str, key: str) -> Any:
    """``value`` checked against the sub-schema at ``pointer`` (``/properties/...``) of schema
    ``name``: a command-line flag obeys the same rule as its config key ``key`` (one
    definition).

    Parameters
    ----------
    value : object
        the flag's value (already converted by the argument parser).
    name : str
        the schema (``perfcast/schemas/<name>.schema.yaml``).
    pointer : str
        the JSON pointer of the key's sub-schema (``/properties/budget``).
    flag : str
        the flag, named in the error (``--budget``).
    key : str
        the config key the flag stands for, named in the error.

    Returns
    -------
    object
        ``value``, unchanged.

    Raises
    ------
    InputError
        naming the flag, the value and what the schema expects.
    """
    try:
        _check(name, {"value": value}, None, pointer)
    except InputError as exc:
        message = str(exc).split(": value: ", 1)[-1]
        raise InputError(None, f"{flag} {value!r}: {message}",
                         expected=f"what the config's {key} accepts") from None
    return value


def build(cls: type[T], data: Mapping[str, Any], *, where: str = "") -> T:
    """``cls`` (a dataclass) from a validated mapping: nested dataclasses, tuples and mappings
    are built from their type hints; keys that are not fields are ignored.

    Parameters
    ----------
    cls : type
        the settings dataclass (frozen, its fields without defaults of their own).
    data : mapping
        the validated section (:func:`validate`), every default filled in.
    where : str, default=""
        the section's name in an error (empty: the class's name).

    Raises
    ------
    InputError
        a field that ``data`` lacks (a key the schema gives no default).
    """
    hints = _type_hints(cls)
    kw = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.name not in data:
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
                continue
            raise InputError(None, f"{where or cls.__name__}: missing setting {f.name!r} "
                             "(the schema gives no default)")
        kw[f.name] = _convert(hints[f.name], data[f.name], f"{where or cls.__name__}.{f.name}")
    return cls(**kw)


@functools.cache
def _type_hints(cls: type) -> dict[str, Any]:
    """``cls``'s resolved type hints, once per class (resolving evaluates each annotation's
    text: most of the cost of building settings)."""
    return typing.get_type_hints(cls)


def _convert(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return _convert(args[0], value, where) if len(args) == 1 else value
    if dataclasses.is_dataclass(hint) and isinstance(value, Mapping):
        return build(hint, value, where=where)
    if origin is tuple and isinstance(value, list | tuple):
        args = typing.get_args(hint)
        item = args[0] if args else Any
        return tuple(_convert(item, v, where) for v in value)
    if origin in (dict, Mapping, typing.Mapping) or hint in (dict, Mapping):
        args = typing.get_args(hint)
        item = args[1] if len(args) == 2 else Any
        return {k: _convert(item, v, f"{where}.{k}") for k, v in dict(value).items()}
    return value


def as_params(settings: Any) -> dict:
    """The plain dict of a settings object, for a rule's ``params:`` (stable, comparable)."""
    return _plain(dataclasses.asdict(settings))


def _plain(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    return v


def from_section(cls: type[T], section: Mapping[str, Any] | None, schema: str) -> T:
    """Validate ``section`` against ``schema`` (filling defaults) and build ``cls`` from it.

    The one way from a config section (or the command line's options) to a stage's settings:
    :func:`validate`, then :func:`build`.

    Parameters
    ----------
    cls : type
        the settings dataclass.
    section : mapping or None
        the config section as loaded (None: every default).
    schema : str
        the schema's name, also the section's name in errors.

    Examples
    --------
    >>> @dataclasses.dataclass(frozen=True)
    ... class Predict:
    ...     benchmarks: tuple[str, ...]
    ...     ipc_range: tuple[float, float]
    >>> from_section(Predict, {"benchmarks": ["mcf"]}, "predict")
    Predict(benchmarks=('mcf',), ipc_range=(0.001, 16))
    """
    return build(cls, validate(section, schema), where=schema)
