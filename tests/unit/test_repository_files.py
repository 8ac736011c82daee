"""No product file of the repository points at development material outside it (an export of
the repository alone is the product: ``tests/workflow/test_repository_alone.py``)."""

from __future__ import annotations

import re

#: what no product file may point at: development material outside the repository
FORBIDDEN = re.compile(r"\.\./shared|METHODS\.md|\bseed 00[0-3]\b|\bissue \d+\b|-SECTION\b")
PRODUCT_DIRS = ("src", "workflow", "config", "scripts", "profiles", "docs")
PRODUCT_FILES = ("workflow/Snakefile", "Makefile", "README.md", "pyproject.toml")


def test_no_product_file_points_outside_the_repository(tracked_files, repo):
    hits = []
    for rel in tracked_files:
        if not (rel.startswith(PRODUCT_DIRS) or rel in PRODUCT_FILES):
            continue
        try:
            text = (repo / rel).read_text()
        except UnicodeDecodeError:
            continue
        hits += [f"{rel}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1)
                 if FORBIDDEN.search(line)]
    assert not hits, "product files point at development material:\n" + "\n".join(hits)
