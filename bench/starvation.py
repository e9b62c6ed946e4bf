"""The GPU routes under the loads that once starved them: every figure against a baseline of the
same run, on the same server.

    python bench/starvation.py

Each load runs on a fresh real ``jupyter server`` (tests/loaded_server.py: the fake nvidia-smi
replaying the 8x V100S, an hour of reads in the history, environments built from real records).
A thread of its own asks GET status, GET gpus and GET metrics in turn, over and over, for a few
seconds with nothing else asked (the baseline), then while the load runs. Printed per load and
route: the p99 alone and during the load, the difference (goal: at most 0.25 s) and the ratio;
then the load's slowest answer and its statuses, and how long the server took to exit on SIGTERM
(goal: under 10 s).

1. hung file: an envs folder of 5 environments and one whose conda-meta/history is a FIFO;
   24 environment listings at once, then 6 more one after another.
2. 100 environment listings at once, 5 times over (40 environments of 424 packages).
3. 30 history requests at once, each with a `since` of its own (an hour of 8 GPUs).
4. 20 spans requests at once, each of the largest size taken (2000 spans).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from tests.loaded_server import (  # noqa: E402
    ENVS,
    GPU_ROUTES,
    Answer,
    RouteWatch,
    ask,
    at_once,
    histories_since,
    largest_spans,
    loaded_server,
    make_envs,
    quiet_baseline,
    stop_seconds,
)

QUIET_SECONDS = 4.0
ALLOWED_DELAY_SECONDS = 0.25


def hung_file_listings(server) -> list[Answer]:
    answers = at_once(server, [("GET", ENVS, None)] * 24)
    return answers + [ask(server, ENVS) for _ in range(6)]


def listings(server) -> list[Answer]:
    answers = []
    for _ in range(5):
        answers += at_once(server, [("GET", ENVS, None)] * 100)
    return answers


def histories(server) -> list[Answer]:
    return at_once(server, histories_since(30))


def spans(server) -> list[Answer]:
    return at_once(server, largest_spans(20))


# (what, environments in the envs folder, one more of them hung, the load)
LOADS: list[tuple[str, int, bool, Callable]] = [
    ("hung file: 24 listings at once, then 6 in turn", 5, True, hung_file_listings),
    ("100 listings at once, 5 times over", 40, False, listings),
    ("30 history requests, each its own since", 3, False, histories),
    ("20 spans requests of 2000 spans", 3, False, spans),
]


def run(name: str, environments: int, hung: bool, load: Callable) -> bool:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        envs = make_envs(folder / "envs", environments, hung)
        with loaded_server(folder / "server", envs) as server:
            ask(server, GPU_ROUTES[0])  # the Sampler runs
            quiet = quiet_baseline(server, QUIET_SECONDS)
            started = time.monotonic()
            with RouteWatch(server) as loaded:
                answers = load(server)
            took = time.monotonic() - started
            stopped = stop_seconds(server)
    print(f"{name}: the load took {took:.1f} s")
    good = stopped < 10
    for route in GPU_ROUTES:
        alone, during = quiet.p99(route), loaded.p99(route)
        delay = during - alone
        good = good and delay <= ALLOWED_DELAY_SECONDS
        print(
            f"  GET {route} p99: {alone * 1000:.0f} ms alone, {during * 1000:.0f} ms during "
            f"the load (+{delay * 1000:.0f} ms, goal <= 250), ratio {during / alone:.1f}"
        )
    if loaded.failures:
        good = False
        print(f"  GPU routes unanswered or failed: {len(loaded.failures)} ({loaded.failures[0]})")
    statuses = Counter(answer.code or "no answer" for answer in answers)
    slowest = max(answer.seconds for answer in answers)
    print(f"  the load's answers: {dict(statuses)}, the slowest in {slowest:.2f} s")
    print(f"  SIGTERM to exit: {stopped:.1f} s (goal < 10)")
    return good


def main() -> int:
    results = [run(*load) for load in LOADS]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
