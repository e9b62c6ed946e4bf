"""The lab's ledger: the GPU-hours each user's notebooks kept GPUs busy and idle-held over a
period, from the recording rules of ``prometheus/lab.yml``, whose every evaluation is a
notebook's increase over the hour before it.

One range query per measure, at a step of an hour ending now and starting an hour after the
period's start: its points are the hours that tile the period, and their sum is the period's
GPU-hours. Two queries whatever the number of machines and notebooks; a month is 720 points a
notebook, however often the servers were scraped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .view import own_name

STEP_SECONDS = 3600
# The shortest and longest periods: whole hours, up to a month and a day.
MIN_SECONDS = STEP_SECONDS
MAX_SECONDS = 31 * 86400

# Each measure, per user and notebook, whatever machine the notebook ran on.
QUERIES = {
    "busy_hours": "sum by (user, notebook) "
    "(user_notebook:jupyter_notebook_gpu_busy_hours:increase1h)",
    "idle_held_hours": "sum by (user, notebook) "
    "(user_notebook:jupyter_notebook_gpu_idle_held_hours:increase1h)",
}


@dataclass
class LedgerRow:
    """One notebook's GPU-hours over the period."""

    user: str
    notebook: str
    own: bool  # the user of the server that asks
    busy_hours: float
    idle_held_hours: float


def range_params(since_seconds: float, now: float) -> dict[str, str]:
    """The ``query_range`` parameters whose points tile the last ``since_seconds`` with hours."""
    return {
        "start": f"{now - since_seconds + STEP_SECONDS:.3f}",
        "end": f"{now:.3f}",
        "step": f"{STEP_SECONDS}",
    }


def ledger_rows(
    answers: Mapping[str, list[dict[str, Any]]],
    user: str,
    own_names: Mapping[str, str] | None = None,
) -> list[LedgerRow]:
    """Each notebook's hours, from the range queries' matrices; the most idle-held first, then
    the most busy. ``user``'s own notebooks are named by their paths where ``own_names``
    knows their labels (see ``view.own_name``)."""
    hours: dict[tuple[str, str], dict[str, float]] = {}
    for measure, result in answers.items():
        for series in result:
            key = (series["metric"].get("user", ""), series["metric"].get("notebook", ""))
            total = sum(float(value) for _, value in series["values"])
            hours.setdefault(key, dict.fromkeys(QUERIES, 0.0))[measure] = total
    rows = [
        LedgerRow(
            key[0],
            own_name(key[1], key[0] == user, own_names),
            key[0] == user,
            measures["busy_hours"],
            measures["idle_held_hours"],
        )
        for key, measures in hours.items()
    ]
    rows.sort(key=lambda row: (-row.idle_held_hours, -row.busy_hours, row.user, row.notebook))
    return rows
