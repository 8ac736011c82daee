"""Markdown to HTML for the report: the small subset perfcast writes, rendered without a
dependency.

Snakemake's HTML report shows an HTML result inside the page and offers any other text file
only as a download, so a table written as Markdown (``evaluation.md``, ``summary.md``) is also
written as HTML. The subset: ``#`` headings, ``-`` bullets, pipe tables (a header row, a
``|---|`` rule, body rows), paragraphs, ``**bold**`` and ```code```; everything else is
escaped text.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]+)`")
_BULLET = re.compile(r"^\s*[-*]\s+")
_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")

STYLE = ("body{font-family:sans-serif;margin:1em;}table{border-collapse:collapse;}"
         "td,th{border:1px solid #bbb;padding:2px 6px;text-align:right;}"
         "td:first-child,th:first-child{text-align:left;}.warning{color:#a40000;}")


def inline(text: str) -> str:
    """One line of Markdown text as HTML: escaped, with bold and code spans."""
    out = html.escape(text, quote=False)
    out = _CODE.sub(r"<code>\1</code>", out)
    out = _BOLD.sub(r"<strong>\1</strong>", out)
    if text.startswith("WARNING"):
        out = f'<span class="warning">{out}</span>'
    return out


def _cells(row: str) -> list[str]:
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") else row
    return [c.strip() for c in row.split("|")]


def to_html(markdown: str, title: str = "perfcast", standalone: bool = True) -> str:
    """A standalone HTML page of ``markdown`` (the subset of this module's docstring).

    Parameters
    ----------
    markdown : str
        the Markdown text.
    title : str, default="perfcast"
        the page's title (escaped).
    standalone : bool, default=True
        a whole page with its style; False: the body's elements only, to be placed in another
        page (the report's home page).

    Returns
    -------
    str
        the HTML, ending with a newline.

    Examples
    --------
    >>> "<td>1.5</td>" in to_html("| a | b |\\n|---|---|\\n| x | 1.5 |")
    True
    >>> print(to_html("# IPC\\n- **old** `x`\\n- a < b", standalone=False), end="")
    <h1>IPC</h1>
    <ul><li><strong>old</strong> <code>x</code></li><li>a &lt; b</li></ul>
    """
    body: list[str] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line.strip():
            i += 1
        elif m := re.match(r"^(#{1,6})\s+(.*)$", line):
            level = len(m.group(1))
            body.append(f"<h{level}>{inline(m.group(2))}</h{level}>")
            i += 1
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and _RULE.match(lines[i + 1]):
            head = "".join(f"<th>{inline(c)}</th>" for c in _cells(line))
            rows = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in _cells(lines[i]))
                            + "</tr>")
                i += 1
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}"
                        "</tbody></table>")
        elif _BULLET.match(line):
            items = []
            while i < len(lines) and _BULLET.match(lines[i]):
                items.append(f"<li>{inline(_BULLET.sub('', lines[i]))}</li>")
                i += 1
            body.append(f"<ul>{''.join(items)}</ul>")
        else:
            para = []
            while (i < len(lines) and lines[i].strip() and not lines[i].startswith("#")
                   and not lines[i].lstrip().startswith("|")
                   and not _BULLET.match(lines[i])):
                para.append(inline(lines[i].strip()))
                i += 1
            body.append(f"<p>{' '.join(para)}</p>")
    if not standalone:
        return "\n".join(body) + "\n"
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}"
            f"</title><style>{STYLE}</style></head>\n<body>\n" + "\n".join(body)
            + "\n</body></html>\n")


def convert_file(markdown: str | Path, out: str | Path, title: str) -> None:
    """Write the HTML page (:func:`to_html`) of a Markdown file, atomically.

    Parameters
    ----------
    markdown : str or Path
        the Markdown file to read.
    out : str or Path
        the HTML file to write.
    title : str
        the page's title.
    """
    from perfcast.io import write_text

    write_text(to_html(Path(markdown).read_text(encoding="utf-8"), title), out)
