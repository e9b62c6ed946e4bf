"""How the help of the command and its subcommands is laid out in a terminal."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable

from ..translation import columns, pad

# The width of the help's paragraphs, as traitlets wraps them, and of an example line after
# traitlets' indent of 4.
HELP_COLUMNS = 80
EXAMPLE_COLUMNS = 76


def examples(lines: Iterable[tuple[str, str]]) -> str:
    """Example command lines, each with its comment: aligned after it when they all fit in the
    help's width, else above it."""
    lines = list(lines)
    width = max(columns(command) for command, _ in lines) + 2
    if all(width + columns(comment) + 2 <= EXAMPLE_COLUMNS for _, comment in lines):
        return "\n".join(f"{pad(command, width)}# {comment}" for command, comment in lines)
    return "\n".join(f"# {comment}\n{command}" for command, comment in lines)


def wrap(paragraph: str, width: int = HELP_COLUMNS) -> list[str]:
    """``paragraph`` in lines of at most ``width`` terminal columns: broken at spaces, and also
    between wide (Chinese) characters, which textwrap never breaks between."""
    if columns(paragraph) == len(paragraph):
        return textwrap.wrap(paragraph, width)
    pieces = re.findall(r"[^\s\u2e80-\uffef]*[\u2e80-\uffef]?\s*", paragraph)
    lines = [""]
    for piece in filter(None, pieces):
        if lines[-1] and columns(lines[-1] + piece.rstrip()) > width:
            lines[-1] = lines[-1].rstrip()
            lines.append("")
        lines[-1] += piece
    return [line.rstrip() for line in lines]
