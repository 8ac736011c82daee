"""The package's docstrings follow numpydoc where it matters most: parameters.

Every public function and method of ``src/perfcast`` (a name without a leading underscore, not
nested inside another function) that takes three or more parameters (``self``/``cls`` not
counted) documents each of them in a ``Parameters`` section, and every parameter line of any
``Parameters`` section reads ``name : type`` or ``name : type, default=X`` -- the type alone, the
description on the indented lines below (numpydoc renders whatever follows `` : `` as the type;
see the numpydoc style guide, https://numpydoc.readthedocs.io/en/latest/format.html). A parameter
with a default in the signature says ``default=`` with that same expression, so the docstring
cannot drift from the code.

The check reads the source with :mod:`ast` and imports nothing, so it holds for modules whose
optional dependencies are absent too.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "perfcast"

#: files (or folders, with a trailing slash) relative to ``src/perfcast`` left out of the check
EXEMPT = {
}

#: the fewest parameters (``self``/``cls`` not counted) that require a Parameters section
MIN_PARAMETERS = 3

#: a numpydoc section header: a title line underlined with dashes
SECTION = re.compile(r"^(?P<title>[A-Z][A-Za-z ]*)\n-{3,}$", re.MULTILINE)
_NAME = r"\*{0,2}[A-Za-z_]\w*"
#: a parameter line: one or several names, `` : ``, a type, optionally ``, default=X``
PARAM_LINE = re.compile(rf"^(?P<names>{_NAME}(?:, {_NAME})*) : (?P<type>.+?)"
                        r"(?:, default=(?P<default>.+))?$")
#: the longest type with its default (characters; a type is a short phrase such as
#: ``dict of str to float``)
MAX_TYPE_CHARS = 60
#: words that make a sentence, never a type (articles, pronouns, verbs, "per", "each")
SENTENCE_WORDS = frozenset(
    "the a an its their this that these is are be when if which per each e.g. i.e.".split())


def _relative(path: Path, root: Path = PACKAGE) -> str:
    return path.relative_to(root).as_posix()


def _exempt(rel: str) -> bool:
    return any(rel == key or (key.endswith("/") and rel.startswith(key)) for key in EXEMPT)


def _checked_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if not _exempt(_relative(p)))


def _public_functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef, bool]]:
    """(qualified name, node, is a method) of every public function not inside a function."""
    def walk(body: list[ast.stmt], prefix: str, in_class: bool):
        for node in body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                yield from walk(node.body, f"{prefix}{node.name}.", True)
            elif (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                  and not node.name.startswith("_")):
                yield f"{prefix}{node.name}", node, in_class
    yield from walk(tree.body, "", False)


def _signature_defaults(node: ast.FunctionDef) -> dict[str, ast.expr]:
    """Each parameter with a default in the signature, and that default's expression."""
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    found = {p.arg: d for p, d in zip(positional[len(positional) - len(a.defaults):], a.defaults,
                                      strict=True)}
    found.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
                  if d is not None})
    return found


def _default_problem(name: str, documented: str | None, defaults: dict[str, ast.expr]
                     ) -> str | None:
    """What is wrong with the ``default=`` of ``name`` (None: it agrees with the signature)."""
    if name not in defaults:
        return None if documented is None else f"says default={documented}, the signature none"
    actual = ast.unparse(defaults[name])
    if documented is None:
        return f"has no default=, the signature {actual}"
    try:
        same = ast.dump(ast.parse(documented, mode="eval").body) == ast.dump(defaults[name])
    except SyntaxError:
        same = False
    return None if same else f"says default={documented}, the signature {actual}"


def _parameter_names(node: ast.FunctionDef, is_method: bool) -> list[str]:
    """The parameters a docstring names: ``self``/``cls`` of a method left out, ``*args`` and
    ``**kwargs`` with their stars (numpydoc's spelling)."""
    a = node.args
    names = [p.arg for p in (*a.posonlyargs, *a.args)]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    if is_method and not static and names and names[0] in ("self", "cls"):
        names = names[1:]
    names += [p.arg for p in a.kwonlyargs]
    if a.vararg:
        names.append("*" + a.vararg.arg)
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return names


def _parameters_section(doc: str) -> list[str] | None:
    """The lines of the Parameters section at its own indentation (the parameter lines)."""
    headers = list(SECTION.finditer(doc))
    for i, match in enumerate(headers):
        if match.group("title").strip() != "Parameters":
            continue
        end = headers[i + 1].start() if i + 1 < len(headers) else len(doc)
        body = doc[match.end():end].splitlines()
        return [line.rstrip() for line in body if line.strip() and not line[0].isspace()]
    return None


def _type_problem(type_: str) -> str | None:
    """Why the text after `` : `` is a description rather than a type (None: a type). Text in
    brackets or double backquotes (``dict[str, float]``, ``{'a', 'b'}``) is not read as words."""
    outside = re.sub(r"\[[^\]]*\]|\([^)]*\)|\{[^}]*\}|``[^`]*``", "T", type_)
    if len(type_) > MAX_TYPE_CHARS:
        return f"longer than {MAX_TYPE_CHARS} characters"
    words = set(outside.lower().replace(",", " ").split())
    if (outside.rstrip().endswith((".", ";", ":")) or ". " in outside or "; " in outside
            or words & SENTENCE_WORDS):
        return "a sentence, not a type"
    return None


def _problems(path: Path, root: Path = PACKAGE) -> list[str]:
    rel = _relative(path, root)
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for qualname, node, is_method in _public_functions(tree):
        where = f"{rel}:{node.lineno} {qualname}"
        params = _parameter_names(node, is_method)
        doc = inspect.cleandoc(ast.get_docstring(node, clean=False) or "")
        lines = _parameters_section(doc)
        if lines is None:
            if len(params) >= MIN_PARAMETERS:
                found.append(f"{where}: {len(params)} parameters and no Parameters section")
            continue
        documented: list[str] = []
        defaults = _signature_defaults(node)
        for line in lines:
            m = PARAM_LINE.match(line)
            if m is None:
                found.append(f"{where}: parameter line {line!r} is not 'name : type'")
                continue
            documented += m.group("names").split(", ")
            problem = _type_problem(line.split(" : ", 1)[1])
            if problem:
                found.append(f"{where}: the type in {line!r} is {problem}")
                continue
            for name in m.group("names").split(", "):
                problem = _default_problem(name, m.group("default"), defaults)
                if problem:
                    found.append(f"{where}: parameter {name} {problem}")
        bare = {d.lstrip("*") for d in documented}
        missing = [p for p in params if p.lstrip("*") not in bare]
        unknown = sorted(bare - {p.lstrip("*") for p in params})
        if len(params) >= MIN_PARAMETERS and missing:
            found.append(f"{where}: Parameters does not name {', '.join(missing)}")
        if unknown:
            found.append(f"{where}: Parameters names {', '.join(unknown)}, not a parameter")
    return found


def test_exempt_entries_exist():
    """An exemption names a file or folder of the package (a stale entry would hide nothing)."""
    stale = [key for key in EXEMPT if not (PACKAGE / key).exists()]
    assert not stale, f"exempted but not in src/perfcast: {stale}"


def test_public_functions_document_their_parameters():
    problems = [p for path in _checked_files() for p in _problems(path)]
    assert not problems, (f"{len(problems)} docstring problems (numpydoc 'name : type', "
                          "description below):\n" + "\n".join(problems))


# the checker itself, on docstrings whose verdict is known
_GOOD = '''
def f(a, b, c=1, *, d=None):
    """What f does.

    Parameters
    ----------
    a, b : float
        the two operands.
    c : int, default=1
        a count.
    d : dict of str to float or None, default=None
        the weights.

    Returns
    -------
    float
    """
'''
_NO_SECTION = 'def f(a, b, c):\n    """What f does."""\n'
_DESCRIPTION_AS_TYPE = '''
class K:
    def m(self, a, b, c):
        """What m does.

        Parameters
        ----------
        a : the first operand.
        b, c : float
            the others.
        """
'''
_MISSING_AND_UNKNOWN = '''
def f(a, b, *rest):
    """What f does.

    Parameters
    ----------
    a : float
        one.
    z : float
        not a parameter.
    """
'''


@pytest.mark.parametrize("source, expected", [
    (_GOOD, []),
    (_NO_SECTION, ["3 parameters and no Parameters section"]),
    (_DESCRIPTION_AS_TYPE, ["the type in 'a : the first operand.' is a sentence, not a type"]),
    (_GOOD.replace("a, b : float", "a, b : two floats, each an operand"),
     ["the type in 'a, b : two floats, each an operand' is a sentence"]),
    (_GOOD.replace(": int, default=1", ": int, default=1, the number of repetitions we make"),
     ["the type in 'c : int, default=1, the number of repetitions we make' is a sentence"]),
    (_GOOD.replace(": int, default=1", ": int or float or numpy.ndarray or pandas.Series or list, "
                                       "default=1"),
     ["the type in 'c : int or float or numpy.ndarray or pandas.Series or list, default=1' is "
      "longer than 60"]),
    (_MISSING_AND_UNKNOWN, ["Parameters does not name b, *rest", "Parameters names z"]),
    (_GOOD.replace("c : int, default=1", "c : int, default=2"),
     ["parameter c says default=2, the signature 1"]),
    (_GOOD.replace("c : int, default=1", "c : int"),
     ["parameter c has no default=, the signature 1"]),
    (_GOOD.replace("a, b : float", "a, b : float, default=0"),
     ["parameter a says default=0, the signature none", "parameter b says default=0"]),
    (_GOOD.replace("c=1", "c=LIMIT").replace("default=1", "default=LIMIT"), []),
    ('def f(a, b):\n    """Two parameters need no section."""\n', []),
    ('def _f(a, b, c):\n    """Private."""\n', []),
    ('def f():\n    def g(a, b, c):\n        """Nested."""\n', []),
])
def test_checker_verdicts(tmp_path, source, expected):
    path = tmp_path / "m.py"
    path.write_text(source)
    got = [p.split(": ", 1)[1] for p in _problems(path, tmp_path)]
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.startswith(e), (g, e)



#: modules whose functions scripts call to adapt the ``snakemake`` object, not stage entry points
ADAPTERS = {"perfcast.rulekit"}


def _entry_points() -> Iterator[tuple[str, str, str]]:
    """(script, module, function) for every function a rule's script imports from perfcast."""
    scripts = PACKAGE.parents[1] / "scripts"
    for script in sorted(scripts.glob("*.py")):
        for node in ast.walk(ast.parse(script.read_text())):
            if (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("perfcast.") and node.module not in ADAPTERS):
                for alias in node.names:
                    yield script.name, node.module, alias.name


def test_every_rule_entry_point_has_a_doctested_example():
    """Each stage's entry points, the functions the rules' scripts hand their settings and files
    to, show a call in an ``Examples`` section (doctested by ``make test-fast``)."""
    seen, missing = 0, []
    for script, module, name in _entry_points():
        path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
        tree = ast.parse(path.read_text())
        func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name),
                    None)
        if func is None:  # a settings class or a constant
            continue
        seen += 1
        doc = ast.get_docstring(func) or ""
        if not re.search(r"^Examples\n-{3,}\n(?:.*\n)*?>>> ", doc + "\n", re.MULTILINE):
            missing.append(f"{module}.{name} (called by scripts/{script})")
    assert seen >= 25, f"only {seen} entry points found: has scripts/ moved?"
    assert not missing, f"entry points without a doctested Example: {missing}"
