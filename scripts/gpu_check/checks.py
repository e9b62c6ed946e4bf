"""The check's verdicts: each a name, pass, fail or skip, and what was seen.

Steps go on after a failure, so that one run on a lent GPU brings back everything it can; the
command fails at the end when any verdict failed.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field


@dataclass
class Verdict:
    """One assertion of the check."""

    name: str
    status: str  # "pass", "fail" or "skip"
    detail: str = ""


@dataclass
class Verdicts:
    """All verdicts of a run, in the order they were reached."""

    items: list[Verdict] = field(default_factory=list)

    def expect(self, name: str, condition: bool, detail: str = "") -> bool:
        """Record whether ``condition`` held; returns it."""
        self.items.append(Verdict(name, "pass" if condition else "fail", detail))
        return condition

    def skip(self, name: str, reason: str) -> None:
        """Record a verdict this machine cannot give, and why."""
        self.items.append(Verdict(name, "skip", reason))

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """Run a step; an exception in it is that step's failed verdict, not the run's end."""
        try:
            yield
        except Exception as error:
            lines = traceback.format_exception(type(error), error, error.__traceback__)
            self.items.append(Verdict(f"{name} ran to its end", "fail", "".join(lines[-6:])))

    @property
    def failed(self) -> list[Verdict]:
        """The verdicts that failed."""
        return [verdict for verdict in self.items if verdict.status == "fail"]

    def to_json(self) -> list[dict]:
        """The verdicts as report.json holds them."""
        return [asdict(verdict) for verdict in self.items]

    def lines(self) -> list[str]:
        """One line per verdict, for the terminal and report.txt."""
        marks = {"pass": "ok  ", "fail": "FAIL", "skip": "skip"}
        return [
            f"{marks[v.status]} {v.name}" + (f": {v.detail}" if v.detail else "")
            for v in self.items
        ]
