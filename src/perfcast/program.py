"""A program every stage runs: declared once in ``programs:``, rendered by one rule.

A program is a shell command template with an optional environment, work amount, working
directory and description. Every stage (counters with the ``perf`` backend, warm-up, sensitivity,
sweep) renders its commands here, with the same placeholders and the same quoting:

- ``{name}`` where *name* is an identifier (``[A-Za-z_][A-Za-z0-9_]*``) is a placeholder. Every
  stage supplies the same set (:data:`PLACEHOLDERS`): ``{python}`` (the interpreter running
  perfcast), ``{work}`` (the program's ``work``; the warm-up's planner chooses it per round, a
  sweep may sweep it) and ``{seed}`` (the workflow's ``seed``). A sweep adds ``{iteration}`` and
  each of its parameters (:data:`STAGE_PLACEHOLDERS`). :func:`check_program` checks a program
  against this set when the stage loads it; a placeholder nobody supplies is an error naming it,
  so a misspelt ``{sise}`` never reaches the shell.
- Every other brace is literal: ``awk '{print $1}'`` or the shell's ``${HOME}`` (a ``{name}``
  right after ``$``) need no escaping. ``{{`` and
  ``}}`` stand for literal braces where the text between them would look like a placeholder
  (``{{name}}`` gives ``{name}``).
- In a shell command, each substituted value is quoted with :func:`shlex.quote`, so an
  interpreter path or a value with a space stays one word; a plain number or word is unchanged.
  A placeholder inside the template's own quotes (``'{v}'``, ``"{v}"``, ``"a {v} b"``) closes
  them around the quoted value and reopens them (``"a "'it'"'"'s'" b"``), so no value, whatever
  ``$()``, backticks, ``;`` or quotes it holds, is ever read by the shell as code. Where no
  quoting can do that the template is refused when loaded (:func:`check_quoting`), naming the
  placeholder and its line: a placeholder inside a here-document (its body is not subject to
  quote removal, so a quoted value's ``$( )`` would still run, and a value's line equal to the
  delimiter would end it) or its delimiter, inside backticks, a ``${...}`` expansion,
  arithmetic (``$((...))``, ``((...))``, ``$[...]``: bash evaluates a value there as an
  expression, array subscripts and their ``$( )`` included), ANSI-C ``$'...'`` quotes, or
  after a command substitution inside double quotes; so is an unterminated quote or
  here-document. A here-string (``<<< {v}``) is an ordinary word. A program that reads a value
  as code itself (``eval``, ``sh -c {v}``, ``bash -c '... {v}'``) is beyond any quoting: pass
  such a value in an environment variable. In an environment value (no shell reads it) values
  are substituted as they are.

A stage's own entry either defines a program (the same keys) or names one of the top-level map
(``program: NAME``, or the stage entry's own name with no ``command``); local keys override.
The keys are defined once, in ``src/perfcast/schemas/definitions.schema.yaml`` (``$defs/program``).

``cwd`` is the directory the program runs in, relative to the workflow's working directory (the
directory ``snakemake`` or ``perfcast`` runs in) unless absolute; every stage's runner runs the
program there (:func:`run_dir` checks it exists). Without ``cwd`` a program runs in the working
directory itself.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from perfcast.errors import InputError

#: keys that define a program (the top-level ``programs:`` map has these and no others)
DEFINITION_KEYS = ("command", "env", "work", "cwd", "description")
#: the placeholders every stage supplies to every program: ``{python}`` (this interpreter),
#: ``{work}`` (the work amount) and ``{seed}`` (the workflow's seed)
PLACEHOLDERS = ("python", "work", "seed")
#: what each stage supplies besides :data:`PLACEHOLDERS` (a sweep also each of its parameters)
STAGE_PLACEHOLDERS: Mapping[str, tuple[str, ...]] = {
    "counters": (), "warmup": (), "sensitivity": (), "sweep": ("iteration",),
}
#: stages that choose ``{work}`` themselves, whatever the program's ``work`` (the warm-up's
#: planner doubles it round after round)
WORK_SUPPLIED = ("warmup",)
_TOKEN = re.compile(r"\{\{|\}\}|(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")


def placeholders(template: str) -> set[str]:
    """Names of the placeholders in ``template`` (escaped ``{{name}}`` excluded)."""
    return {m.group(1) for m in _TOKEN.finditer(template) if m.group(1)}


#: contexts in which a substituted value would be read as code whatever its quoting: the name
#: each has in an error message, and what to do instead
_CODE_CONTEXTS = {
    "`": ("inside backticks",
          "$(...) instead of backticks (a value inside `...` is parsed twice)"),
    "${": ("inside a ${...} parameter expansion",
           "the placeholder outside ${...} (a value there may be expanded again)"),
    "((": ("inside arithmetic $((...)) or ((...))",
           "the placeholder outside arithmetic (a value there is evaluated as code)"),
    "$[": ("inside arithmetic $[...]",
           "the placeholder outside arithmetic (a value there is evaluated as code)"),
}
#: characters that end an unquoted shell word
_METACHARS = frozenset(" \t\n;&|<>()")


def _line(template: str, pos: int) -> int:
    """The 1-based line of ``template`` at offset ``pos``."""
    return template.count("\n", 0, pos) + 1


def _heredoc_word(template: str, i: int, tokens: Mapping[int, re.Match], *,
                  where: str) -> tuple[str, int]:
    """The delimiter of a here-document whose word starts at ``i`` (blanks skipped), with its
    quotes and backslashes removed, and the offset after the word.

    Raises
    ------
    InputError
        no word, or a placeholder in it.
    """
    n = len(template)
    while i < n and template[i] in " \t":
        i += 1
    start, word, quote = i, [], ""
    while i < n and (quote or template[i] not in _METACHARS):
        m = tokens.get(i)
        if m is not None and m.group(1):
            raise InputError(None, f"{where}: placeholder {{{m.group(1)}}} in a here-document "
                             f"delimiter (line {_line(template, i)}) in {template!r}",
                             expected="a literal delimiter word")
        c = template[i]
        if quote:
            if c == quote:
                quote = ""
            else:
                word.append(c)
        elif c in "'\"":
            quote = c
        elif c == "\\" and i + 1 < n:
            i += 1
            word.append(template[i])
        else:
            word.append(c)
        i += 1
    if i == start:
        raise InputError(None, f"{where}: '<<' without a here-document delimiter (line "
                         f"{_line(template, start)}) in {template!r}",
                         expected="<<WORD, a body, then a line WORD")
    return "".join(word), i


def _heredoc_body(template: str, i: int, delimiter: str, strip_tabs: bool,
                  tokens: Mapping[int, re.Match], *, where: str) -> int:
    """The offset after the here-document body that starts at ``i`` and its delimiter line.

    Raises
    ------
    InputError
        a placeholder in the body, or no line that ends it.
    """
    n, start = len(template), i
    while i <= n:
        end = template.find("\n", i)
        end = n if end < 0 else end
        line = template[i:end]
        if (line.lstrip("\t") if strip_tabs else line) == delimiter:
            return end + 1
        for pos in range(i, end):
            m = tokens.get(pos)
            if m is not None and m.group(1):
                raise InputError(
                    None, f"{where}: placeholder {{{m.group(1)}}} inside a here-document "
                    f"(line {_line(template, pos)}) in {template!r}: its body is not quoted "
                    "for the shell, and a value's line can end it",
                    expected="the value passed in an environment variable, or on the command "
                             "line instead of in the here-document")
        i = end + 1
    raise InputError(None, f"{where}: here-document from line {_line(template, start) - 1} "
                     f"has no line {delimiter!r} that ends it in {template!r}",
                     expected="a line holding only the delimiter")


def _contexts(template: str, *, where: str) -> list[str]:
    """The shell quoting context of each placeholder of ``template``, in order: ``""``
    (unquoted, also inside ``$(...)``), ``"'"`` or ``'"'``.

    A POSIX shell's quoting, scanned left to right: a backslash outside single quotes escapes
    the next character; single quotes end at the next single quote; double quotes at the next
    unescaped double quote; ``{{``/``}}`` are literal braces. Here-documents (``<<WORD``,
    ``<<-WORD``, quoted or not) are skipped from the line after their operator to the line
    holding only their delimiter; a here-string ``<<<`` is an ordinary word. ``${...}``,
    ``$((...))``, ``((...))``, ``$[...]`` and backticks are followed to their end.

    Raises
    ------
    InputError
        naming ``where``, the template, the placeholder and (for a here-document) the line: an
        unterminated quote or here-document, or a placeholder where no quoting keeps its
        value from being read as code: inside ANSI-C ``$'...'`` quotes (their own escape
        rules), after a command substitution inside double quotes, inside a here-document's
        body or delimiter, inside backticks, a ``${...}`` expansion or arithmetic.
    """
    out: list[str] = []
    # the open contexts, innermost last: "" (unquoted), "'", "$'", '"', "`", "${", "((", "$["
    stack, depth, i, n = [""], [0], 0, len(template)
    nested = False  # a $( or ` seen inside double quotes: its own quoting, not scanned here
    heredocs: list[tuple[str, bool]] = []  # (delimiter, strip tabs) awaiting their bodies
    tokens = {m.start(): m for m in _TOKEN.finditer(template)}
    while i < n:
        state = stack[-1]
        m = tokens.get(i)
        if m is not None:
            if m.group(1):
                name = m.group(1)
                code = next((c for c in stack if c in _CODE_CONTEXTS), None)
                if code is not None:
                    what, instead = _CODE_CONTEXTS[code]
                    raise InputError(None, f"{where}: placeholder {{{name}}} {what} (line "
                                     f"{_line(template, i)}) in {template!r}",
                                     expected=instead)
                if state == "$'":
                    raise InputError(None, f"{where}: placeholder {{{name}}} inside "
                                     f"$'...' quotes in {template!r}",
                                     expected="the placeholder outside $'...', or in '...' or "
                                              "\"...\"")
                if nested:
                    raise InputError(None, f"{where}: placeholder {{{name}}} after a "
                                     f"command substitution inside double quotes in "
                                     f"{template!r}: its quoting cannot be told",
                                     expected="the substitution outside double quotes, or the "
                                              "value passed in an environment variable")
                out.append(state)
            elif m.group(0) == "}}" and state == "${":  # renders as the "}" that ends it
                stack.pop()
            i = m.end()
            continue
        c = template[i]
        if state in ("'", "$'"):
            if c == "\\" and state == "$'":
                i += 2
                continue
            if c == "'":
                stack.pop()
        elif c == "\\":
            i += 2
            continue
        elif state == '"':
            if c == '"':
                stack.pop()
            elif template.startswith("${", i):
                stack.append("${")  # its "{" may be a "{{" token: scanned next
            elif c == "`" or template.startswith("$(", i):
                nested = True
        elif state == "`":
            if c == "`":
                stack.pop()
        elif state in ("((", "$["):
            if c in "([":
                depth[-1] += 1
            elif c in ")]":
                depth[-1] -= 1
                if depth[-1] == 0:
                    stack.pop()
                    depth.pop()
        elif state == "${" and c == "}":
            stack.pop()
        elif c == "'" and (state == "" or (state == "${" and stack[-2] != '"')):
            stack.append("$'" if i > 0 and template[i - 1] == "$" else "'")
        elif c == '"':
            stack.append('"')
        elif c == "`":
            stack.append("`")
        elif template.startswith("${", i):
            stack.append("${")  # its "{" may be a "{{" token: scanned next
        elif template.startswith("$((", i) or (template.startswith("((", i) and state == ""):
            stack.append("((")
            depth.append(2)
            i += 3 if c == "$" else 2
            continue
        elif template.startswith("$[", i):
            stack.append("$[")
            depth.append(1)
            i += 2
            continue
        elif state == "" and template.startswith("<<<", i):
            i += 3
            continue
        elif state == "" and template.startswith("<<", i):
            strip_tabs = template.startswith("<<-", i)
            delimiter, i = _heredoc_word(template, i + (3 if strip_tabs else 2), tokens,
                                         where=where)
            heredocs.append((delimiter, strip_tabs))
            continue
        elif c == "\n" and stack == [""] and heredocs:
            i += 1
            for delimiter, strip_tabs in heredocs:
                i = _heredoc_body(template, i, delimiter, strip_tabs, tokens, where=where)
            heredocs.clear()
            continue
        i += 1
    if heredocs:
        raise InputError(None, f"{where}: here-document {heredocs[0][0]!r} without a body in "
                         f"{template!r}", expected="<<WORD, a body, then a line WORD")
    if stack != [""]:
        state = stack[-1]
        what = {"'": "'", "$'": "'", '"': '"', "`": "`", "${": "${", "((": "((", "$[": "$["}
        raise InputError(None, f"{where}: unterminated {what[state]} quote in "
                         f"{template!r}" if state in ("'", "$'", '"') else
                         f"{where}: unterminated {what[state]} in {template!r}",
                         expected="balanced quotes in a shell command")
    return out


def check_quoting(template: str, *, where: str) -> None:
    """A shell command template whose quotes are balanced and whose placeholders are in a
    context :func:`render` quotes safely (see the module docstring).

    Raises
    ------
    InputError
        naming ``where``, the template and what is wrong.
    """
    _contexts(template, where=where)


def format_value(value: Any) -> str:
    """A value as text: whole floats without ``.0`` (``1024.0`` -> ``1024``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def render(template: str, values: Mapping[str, Any], *, shell: bool = True,
           where: str = "command") -> str:
    """``template`` with its placeholders replaced by ``values`` (see the module docstring).

    Parameters
    ----------
    template : str
        The command (or environment value) template.
    values : mapping of str to Any
        Placeholder name -> value; ``python`` defaults to this interpreter.
    shell : bool, default=True
        Quote each value for a POSIX shell (commands), or not (environment values).
    where : str, default="command"
        Names the template in an error message.

    Raises
    ------
    InputError
        a placeholder that ``values`` does not supply.
    """
    values = {"python": sys.executable, **values}
    contexts = iter(_contexts(template, where=where) if shell else ())

    def sub(m: re.Match) -> str:
        token, name = m.group(0), m.group(1)
        if name is None:
            return token[0]
        if name not in values or values[name] is None:
            raise InputError(None, f"{where}: unknown placeholder {{{name}}} in {template!r}",
                             expected=f"one of {{{'}, {'.join(sorted(values))}}}, or {{{{ and "
                                      "}} around literal braces")
        text = format_value(values[name])
        if not shell:
            return text
        quote, quoted = next(contexts), shlex.quote(text)
        if quoted == text:  # a plain number or word ([\w@%+=:,./-]) is the same in any quotes
            return text
        return quote + quoted + quote  # inside the template's quotes: close, add, reopen

    return _TOKEN.sub(sub, template)


def check_placeholders(template: str, allowed: Iterable[str], *, where: str) -> set[str]:
    """The placeholders of ``template``; an :class:`InputError` for any not in ``allowed``, or
    for quoting :func:`check_quoting` refuses.

    Parameters
    ----------
    template : str
        A command or environment value template.
    allowed : iterable of str
        The placeholders the stage supplies (``{python}`` is always allowed).
    where : str
        Names the template in an error message.

    Raises
    ------
    InputError
        naming the unknown placeholders and the ones allowed.
    """
    check_quoting(template, where=where)
    used = placeholders(template)
    unknown = sorted(used - {"python", *allowed})
    if unknown:
        raise InputError(None, f"{where}: unknown placeholder(s) "
                         + ", ".join(f"{{{u}}}" for u in unknown) + f" in {template!r}",
                         expected=f"one of {sorted({'python', *allowed})}, or {{{{ and }}}} "
                                  "around literal braces")
    return used


@dataclass(frozen=True)
class Program:
    """A runnable program: a command template and what it runs with."""

    name: str
    command: str
    env: Mapping[str, str] = field(default_factory=dict)
    work: float | None = None
    cwd: str | None = None
    description: str = ""

    @classmethod
    def from_config(cls, name: str, entry: Mapping[str, Any] | None = None,
                    programs: Mapping[str, Mapping[str, Any]] | None = None, *,
                    stage: str = "") -> Program:
        """The program a stage's entry ``name`` stands for (see the module docstring).

        ``entry`` may define the program, or name one of ``programs`` with ``program: NAME``;
        without ``command`` and ``program`` it is the top-level entry of the same name. Keys of
        the entry that are not program keys (a stage's own settings) are ignored here.

        Parameters
        ----------
        name : str
            The stage entry's name.
        entry : mapping of str to Any, default=None
            The stage entry: a definition, ``program: NAME``, or local keys over it.
        programs : mapping of str to mapping, default=None
            The top-level ``programs:`` map.
        stage : str, default=""
            Names the stage in an error message.

        Raises
        ------
        InputError
            a referenced program not in ``programs``, no command, or bad quoting.
        """
        entry = dict(entry or {})
        programs = programs or {}
        where = f"{stage} program {name!r}".strip()
        ref = entry.get("program")
        if ref is None and not entry.get("command"):
            ref = name
        merged: dict[str, Any] = {}
        if ref is not None:
            if ref not in programs:
                raise InputError(None, f"{where} refers to {ref!r}, which is not in the "
                                 "top-level programs: map", expected=f"one of {sorted(programs)}")
            merged.update({k: v for k, v in programs[ref].items() if k in DEFINITION_KEYS})
        merged.update({k: v for k, v in entry.items() if k in DEFINITION_KEYS and v is not None})
        if not str(merged.get("command") or "").strip():
            raise InputError(None, f"{where} has no command", expected="command: or program:")
        check_quoting(str(merged["command"]), where=where)
        return cls(name=name, command=str(merged["command"]),
                   env={str(k): str(v) for k, v in (merged.get("env") or {}).items()},
                   work=merged.get("work"), cwd=merged.get("cwd"),
                   description=str(merged.get("description") or ""))

    def values(self, **values: Any) -> dict[str, Any]:
        """The placeholder values of one run: ``{work}`` from the program unless given."""
        return {"work": self.work, **values}

    def render(self, **values: Any) -> str:
        """The shell command of one run (``{work}`` defaults to the program's work amount)."""
        return render(self.command, self.values(**values), where=f"program {self.name!r}")

    def render_env(self, **values: Any) -> dict[str, str]:
        """The environment of one run, its values rendered without shell quoting."""
        vals = self.values(**values)
        return {k: render(v, vals, shell=False, where=f"program {self.name!r}, env {k}")
                for k, v in self.env.items()}


def stage_placeholders(stage: str, parameters: Iterable[str] = ()) -> tuple[str, ...]:
    """The placeholders ``stage`` supplies: :data:`PLACEHOLDERS`, the stage's own
    (:data:`STAGE_PLACEHOLDERS`) and, in a sweep, its ``parameters``.

    Parameters
    ----------
    stage : str
        ``counters``, ``warmup``, ``sensitivity`` or ``sweep``.
    parameters : iterable of str, default=()
        A sweep campaign's parameter names.

    Returns
    -------
    tuple of str
        Without repeats, in that order.

    Examples
    --------
    >>> stage_placeholders("warmup")
    ('python', 'work', 'seed')
    >>> stage_placeholders("sweep", ["size", "work"])
    ('python', 'work', 'seed', 'iteration', 'size')
    """
    if stage not in STAGE_PLACEHOLDERS:
        raise ValueError(f"unknown stage {stage!r}: one of {sorted(STAGE_PLACEHOLDERS)}")
    return tuple(dict.fromkeys((*PLACEHOLDERS, *STAGE_PLACEHOLDERS[stage], *parameters)))


def check_program(program: Program, stage: str, *, parameters: Iterable[str] = (),
                  where: str) -> set[str]:
    """Check that ``stage`` can run ``program``: its command and each environment value use only
    the stage's placeholders (:func:`stage_placeholders`) and are quoted as :func:`render`
    needs, and a ``{work}`` has a value (the program's ``work``, the stage's own, or a swept
    parameter). Every stage calls this one check when it loads a program.

    Parameters
    ----------
    program : Program
        The resolved program (:meth:`Program.from_config`).
    stage : str
        The stage that runs it (:data:`STAGE_PLACEHOLDERS`).
    parameters : iterable of str, default=()
        A sweep campaign's parameter names.
    where : str
        Names the program in an error message.

    Returns
    -------
    set of str
        The placeholders the command and the environment use.

    Raises
    ------
    InputError
        an unknown placeholder, bad quoting, or ``{work}`` without a work amount.

    Examples
    --------
    >>> p = Program("demo", "{python} -m demo --n {work} --seed {seed}", env={"S": "{seed}"},
    ...             work=8)
    >>> sorted(check_program(p, "sensitivity", where="demo"))
    ['python', 'seed', 'work']
    >>> check_program(p, "counters", where="demo") == check_program(p, "sweep", where="demo")
    True
    """
    parameters = tuple(parameters)
    allowed = stage_placeholders(stage, parameters)
    used = check_placeholders(program.command, allowed, where=where)
    for key, value in program.env.items():
        used |= check_placeholders(value, allowed, where=f"{where}: env {key}")
    if ("work" in used and program.work is None and stage not in WORK_SUPPLIED
            and "work" not in parameters):
        raise InputError(None, f"{where}: {{work}} in {program.command!r} but no work amount",
                         expected="work: in the program's definition"
                                  + (" or a swept parameter named work" if stage == "sweep"
                                     else ""))
    return used


def run_dir(cwd: str | None, *, where: str) -> str | None:
    """The directory a program with working directory ``cwd`` runs in, checked to exist.

    Parameters
    ----------
    cwd : str or None
        The program's ``cwd``: relative to the current working directory (in a workflow job,
        the workflow's working directory) or absolute; None runs the program there itself.
    where : str
        Names the program in an error message.

    Returns
    -------
    str or None
        ``cwd`` unchanged (None stays None), for ``subprocess``'s ``cwd``.

    Raises
    ------
    InputError
        ``cwd`` is not an existing directory.

    Examples
    --------
    >>> run_dir(".", where="demo"), run_dir(None, where="demo")
    ('.', None)
    """
    if cwd is not None and not os.path.isdir(cwd):
        raise InputError(None, f"{where}: cwd {cwd!r} is not a directory (relative to "
                         f"{os.getcwd()})", expected="an existing directory, relative to the "
                                                    "workflow's working directory or absolute")
    return cwd
