"""`perfcast` sub-commands of the counters stage."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add this stage's sub-commands to ``sub``."""
