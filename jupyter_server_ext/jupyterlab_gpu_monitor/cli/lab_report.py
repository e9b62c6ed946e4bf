"""``lab report``: each notebook's GPU-hours busy and idle-held over a period, from the lab's
Prometheus, as a table (with a digest) or CSV."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from ..contract import constant
from ..lab.report import MAX_SECONDS, MIN_SECONDS
from ..translation import gettext, ngettext

LOW_UTILIZATION_PERCENT = constant("LowUtilizationPercent")
_UNITS = {"h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"(\d+)([hdw])")


def since_seconds(text: str) -> int | None:
    """A period such as "12h", "7d" or "2w" in seconds; None when it is not one, or shorter
    than an hour or longer than the ledger keeps."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        return None
    seconds = int(match[1]) * _UNITS[match[2]]
    return seconds if MIN_SECONDS <= seconds <= MAX_SECONDS else None


def _name(row: dict[str, Any]) -> str:
    notebook = row["notebook"] or "-"
    return gettext("{notebook} (yours)").format(notebook=notebook) if row["own"] else notebook


def format_ledger(ledger: dict[str, Any]) -> str:
    """The ledger as a terminal shows it: a row per notebook, then the digest."""
    rows = ledger["notebooks"]
    heads = (
        gettext("USER"),
        gettext("NOTEBOOK"),
        gettext("BUSY GPU-h"),
        gettext("IDLE-HELD GPU-h"),
    )
    cells = [
        (row["user"], _name(row), f"{row['busy_hours']:.1f}", f"{row['idle_held_hours']:.1f}")
        for row in rows
    ]
    widths = [max(len(line[i]) for line in (heads, *cells)) for i in range(len(heads))]
    lines = [
        "  ".join(
            cell.rjust(width) if i >= 2 else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(line, widths))
        ).rstrip()
        for line in (heads, *cells)
    ]
    lines.append(digest(rows))
    return "\n".join(lines)


def digest(rows: list[dict[str, Any]]) -> str:
    """One sentence on the GPU-hours held for nothing: "3 notebooks held 140.0 GPU-hours at
    under 30 %; the largest: ana's f7d8bce8e464, 90.0."."""
    held = [row for row in rows if row["idle_held_hours"] > 0]
    if not held:
        return gettext("No notebook held a GPU while it idled.")
    total = sum(row["idle_held_hours"] for row in held)
    largest = max(held, key=lambda row: row["idle_held_hours"])
    sentence = ngettext(
        "{count} notebook held {hours:.1f} GPU-hours at under {percent} %; "
        "the largest: {user}'s {notebook}, {most:.1f}.",
        "{count} notebooks held {hours:.1f} GPU-hours at under {percent} %; "
        "the largest: {user}'s {notebook}, {most:.1f}.",
        len(held),
    )
    return sentence.format(
        count=len(held),
        hours=total,
        percent=f"{LOW_UTILIZATION_PERCENT:g}",
        user=largest["user"],
        notebook=largest["notebook"] or "-",
        most=largest["idle_held_hours"],
    )


def ledger_csv(ledger: dict[str, Any]) -> str:
    """The ledger as CSV, a row per notebook, for a spreadsheet."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["user", "notebook", "own", "busy_gpu_hours", "idle_held_gpu_hours"])
    for row in ledger["notebooks"]:
        writer.writerow(
            [
                row["user"],
                row["notebook"],
                str(row["own"]).lower(),
                f"{row['busy_hours']:.3f}",
                f"{row['idle_held_hours']:.3f}",
            ]
        )
    return out.getvalue()
