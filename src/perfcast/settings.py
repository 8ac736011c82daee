"""From a config section to a stage's frozen settings: one way, defaults in the schema only.

Each stage's settings are frozen dataclasses whose fields are the keys of its config section.
The section is first validated against the stage's JSON schema (``workflow/schemas/``), which
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
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from perfcast.errors import InputError

T = TypeVar("T")

#: the workflow's schemas; perfcast is installed from its repository (``pip install -e .``)
SCHEMA_DIR = Path(__file__).resolve().parents[2] / "workflow" / "schemas"


def schema_path(name: str) -> Path:
    """``workflow/schemas/<name>.schema.yaml``."""
    path = SCHEMA_DIR / f"{name}.schema.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: schema not found (perfcast runs from its repository: "
                                "pip install -e .)")
    return path


@functools.cache
def _load(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text())


def validate(section: Mapping[str, Any] | None, name: str, *, where: str | None = None) -> dict:
    """A copy of ``section`` validated against schema ``name`` with its defaults filled in.

    The same check as the workflow's (``snakemake.utils.validate`` with ``set_default``: JSON
    Schema draft 2020-12, each missing property takes the schema's ``default``).

    Raises
    ------
    InputError
        naming the key path, the offending value and what the schema expects.
    """
    import jsonschema
    from jsonschema import Draft202012Validator, validators
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    path = schema_path(name)
    schema = {**_load(path), "$id": path.as_uri()}

    def retrieve(uri: str) -> Resource:
        from urllib.parse import urlparse
        from urllib.request import url2pathname

        # without its $schema a referenced schema is checked by this (defaults-filling) class:
        # jsonschema picks the validator of a $ref'd document by its $schema
        contents = dict(_load(Path(url2pathname(urlparse(uri).path))))
        contents.pop("$schema", None)
        return Resource.from_contents(contents, default_specification=DRAFT202012)

    def set_defaults(validator, properties, instance, subschema):
        for prop, sub in properties.items():
            if "default" in sub and isinstance(instance, dict):
                instance.setdefault(prop, copy.deepcopy(sub["default"]))
        yield from Draft202012Validator.VALIDATORS["properties"](
            validator, properties, instance, subschema)

    cls = validators.extend(Draft202012Validator, {"properties": set_defaults})
    data = copy.deepcopy(dict(section or {}))
    try:
        cls(schema, registry=Registry(retrieve=retrieve)).validate(data)
    except jsonschema.ValidationError as exc:
        key = ".".join(str(p) for p in exc.absolute_path) or "(top level)"
        raise InputError(where, f"{name}: {key}: {exc.message}") from None
    return data


def build(cls: type[T], data: Mapping[str, Any], *, where: str = "") -> T:
    """``cls`` (a dataclass) from a validated mapping: nested dataclasses, tuples and mappings
    are built from their type hints; keys that are not fields are ignored."""
    hints = typing.get_type_hints(cls)
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
    """Validate ``section`` against ``schema`` (filling defaults) and build ``cls`` from it."""
    return build(cls, validate(section, schema), where=schema)
