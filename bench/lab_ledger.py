"""The lab's ledger over a month of a 50-machine lab: what ``GET lab/ledger`` costs for the last
day, week and month.

    python bench/lab_ledger.py

A real Prometheus (Debian's) holds a month of what ``prometheus/lab.yml``'s recording rules
record, evaluated every minute: each notebook's busy and idle-held GPU-hours over the hour
before. Its TSDB is filled before it starts, by ``promtool tsdb create-blocks-from
openmetrics``, one two-hour block at a time (promtool reads its whole input for every block
it writes), and Prometheus compacts the blocks as it would a month of its own before the reads.
The lab: 50 machines, each with two notebooks at a time and a new one in each place every day
(3,000 notebooks a month; 2,880 points of each measure a machine a day). A ledger read is its
two range queries and the rows added up from their answers; the figures are the median of 5
reads: the wall time (mostly the lab's Prometheus answering) and this server's CPU, each against
the day's read in the same run. Each period's notebooks and GPU-hours are printed too: a day is
the 100 notebooks of the day and those they took over from.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import math
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from jupyterlab_gpu_monitor.config import GpuMonitor  # noqa: E402
from jupyterlab_gpu_monitor.lab.service import LabService  # noqa: E402
from jupyterlab_gpu_monitor.metrics import ServerIdentity  # noqa: E402
from tests.prometheus_lab import PROMTOOL, require, running_prometheus  # noqa: E402

MACHINES = 50
SLOTS = 2  # notebooks at a time on a machine
DAYS = 30
BLOCK_SECONDS = 2 * 3600  # promtool's block
EVALUATION_SECONDS = 60  # the recording rules' interval in prometheus/lab.yml
READS = 5
PERIODS = {"day": 86400, "week": 7 * 86400, "month": DAYS * 86400}
MEASURES = {
    "busy": "user_notebook:jupyter_notebook_gpu_busy_hours:increase1h",
    "idle_held": "user_notebook:jupyter_notebook_gpu_idle_held_hours:increase1h",
}


@functools.cache  # asked at every sample of the notebook's day
def notebook(machine: int, slot: int, day: int) -> tuple[str, str]:
    """The user and the notebook label (a path's hash, the default label) in a machine's slot
    on a day."""
    digest = hashlib.sha256(f"{machine}/{slot}/{day}".encode()).hexdigest()[:12]
    return f"user{(machine * SLOTS + slot) % 23}", digest


def hour_fractions(minute: int) -> tuple[float, float]:
    """A notebook's busy and idle-held hours over the hour before ``minute`` of its day: it
    trains through the morning, then sits on the GPU for the afternoon."""
    busy = 0.9 if minute < 600 else 0.0
    idle_held = 0.0 if minute < 660 else 0.95
    return busy, idle_held


def block_file(start: int, path: Path) -> None:
    """What the recording rules record from ``start`` for a block's time, as OpenMetrics."""
    lines = []
    for measure, name in MEASURES.items():
        lines.append(f"# TYPE {name} gauge")
        for machine in range(MACHINES):
            for slot in range(SLOTS):
                for at in range(start, start + BLOCK_SECONDS, EVALUATION_SECONDS):
                    # Each slot's notebooks change at its hour of the day.
                    shifted = at - slot * 12 * 3600
                    day, second = divmod(shifted, 86400)
                    user, label = notebook(machine, slot, day)
                    busy, idle_held = hour_fractions(second // 60)
                    value = busy if measure == "busy" else idle_held
                    lines.append(
                        f'{name}{{host="node-{machine}",user="{user}",notebook="{label}"}}'
                        f" {value} {at}"
                    )
    lines.append("# EOF")
    path.write_text("\n".join(lines) + "\n")


def fill(data: Path, end: int, scratch: Path) -> int:
    """Write the month's blocks before ``end`` into ``data``; how many."""
    promtool = require(PROMTOOL)
    starts = range(end - DAYS * 86400, end, BLOCK_SECONDS)

    def one(start: int) -> None:
        source = scratch / f"{start}.om"
        block_file(start, source)
        command = [promtool, "tsdb", "create-blocks-from", "openmetrics", "-q"]
        subprocess.run([*command, str(source), str(data)], check=True, capture_output=True)
        source.unlink()

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(one, starts))
    return len(starts)


def blocks_loaded(url: str) -> int:
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as answer:
        for line in answer.read().decode().splitlines():
            if line.startswith("prometheus_tsdb_blocks_loaded "):
                return int(float(line.split()[1]))
    return -1


def compacted(url: str, blocks: int, timeout_seconds: float = 900) -> int:
    """Wait until Prometheus has compacted the ``blocks`` written (it looks for blocks to
    compact once a minute): their count lower, and still for 30 s. The count."""
    deadline = time.monotonic() + timeout_seconds
    counts = [blocks_loaded(url)]
    while time.monotonic() < deadline:
        if counts[-1] < blocks and len(counts) > 3 and len(set(counts[-4:])) == 1:
            break
        time.sleep(10)
        counts.append(blocks_loaded(url))
    return counts[-1]


async def ledger_reads(url: str) -> dict[str, tuple[float, float, int, int]]:
    """Per period: the median wall time and CPU of a read, its notebooks and answer size."""
    settings = GpuMonitor(lab_prometheus_url=url, command_timeout=60)
    lab = LabService(settings, ServerIdentity("bench", "user1"))
    results = {}
    for period, seconds in PERIODS.items():
        walls, cpus = [], []
        for _ in range(READS):
            wall, cpu = time.perf_counter(), time.process_time()
            answer = await lab._read_ledger(seconds)
            cpus.append(time.process_time() - cpu)
            walls.append(time.perf_counter() - wall)
        assert answer["error"] is None, answer["error"]
        size = len(json.dumps(answer))
        middle = READS // 2
        results[period] = (
            sorted(walls)[middle],
            sorted(cpus)[middle],
            len(answer["notebooks"]),
            size,
        )
        hours = sum(row["busy_hours"] + row["idle_held_hours"] for row in answer["notebooks"])
        print(f"  {period}: {len(answer['notebooks'])} notebooks, {hours:.0f} GPU-hours")
    return results


def main() -> None:
    # Whole blocks that end two hours before now: the head block is Prometheus's own.
    end = (math.floor(time.time()) // BLOCK_SECONDS - 1) * BLOCK_SECONDS
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        started = time.monotonic()
        blocks = fill(folder / "prometheus" / "data", end, folder)
        print(f"{blocks} blocks written in {time.monotonic() - started:.0f} s")
        flags = ("--storage.tsdb.retention.time=90d",)
        with running_prometheus(folder / "prometheus", [], flags=flags) as url:
            print(f"compacted into {compacted(url, blocks)} blocks")
            results = asyncio.run(ledger_reads(url))
    day_wall, day_cpu, _, _ = results["day"]
    for period, (wall, cpu, rows, size) in results.items():
        print(
            f"{period:>5}: {wall * 1e3:7.1f} ms a read (ratio {wall / day_wall:5.1f}),"
            f" {cpu * 1e3:6.1f} ms of this server's CPU (ratio {cpu / day_cpu:5.1f});"
            f" {rows} notebooks, answer {size / 1024:6.1f} KiB"
        )


if __name__ == "__main__":
    main()
