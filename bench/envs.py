"""Environment listing benchmark: every figure is a ratio against a baseline of the same run.

    python bench/envs.py

Builds 40 conda environments of 400 packages each in a temp dir, from real records (the
first 400 packages of the real Anaconda 2023.03 installer's conda-meta/history, each written
as the real 2025 PrefixRecord template with its own name, version and build; that history is
each environment's history), registered in ~/.conda/environments.txt as conda does. Then times
``discover_environments()`` cold (every prefix changed since the last listing: each one is
read) and warm (nothing changed: the cache answers after a stat or two per prefix), against
spawning ``python -c pass`` once. The warm listing must cost less than that one spawn.

Also times reading one environment's packages (what every kernel inspection does, twice) cold
and warm (kept until the environment changes): the warm read must cost less than the cold.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jupyter_server_ext"))

from jupyterlab_gpu_monitor.conda import condarc, locations
from jupyterlab_gpu_monitor.conda.discovery import discover_environments
from jupyterlab_gpu_monitor.conda.records import packages
from tests.conda_layouts import conda_capture, installed_by_history, make_conda_env

ENVIRONMENTS = 40
PACKAGES = 400
ROUNDS = 15
HISTORY = conda_capture("conda-meta-history-anaconda3-2023.03-constructor-osx-arm64.txt")


def build(home: Path) -> list[Path]:
    """The 40 environments, in ``home/envs``, listed in ``~/.conda/environments.txt``."""
    dists = installed_by_history(HISTORY, "defaults", "osx-arm64")[:PACKAGES]
    assert len(dists) == PACKAGES
    prefixes = [
        make_conda_env(home / "envs" / f"project-{n:02}", dists, history=HISTORY)
        for n in range(ENVIRONMENTS)
    ]
    (home / ".conda").mkdir()
    (home / ".conda" / "environments.txt").write_text("".join(f"{p}\n" for p in prefixes))
    return prefixes


def isolate(home: Path) -> None:
    """Only the environments built here: no conda of this machine, no system config."""
    os.environ["HOME"] = str(home)
    for name in ("CONDA_EXE", "CONDA_PYTHON_EXE", "CONDA_ROOT", "CONDA_PREFIX", "CONDARC"):
        os.environ.pop(name, None)
    for name in ("CONDA_ENVS_DIRS", "CONDA_ENVS_PATH", "MAMBA_ROOT_PREFIX", "PIXI_HOME"):
        os.environ.pop(name, None)
    locations.SYSTEM_CONDA_ROOTS = ()
    condarc.SYSTEM_CONDARC_DIRS = ()


def seconds(action) -> float:
    """How long one call of ``action`` takes."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def listing() -> None:
    """One listing, checked: every environment with all its packages."""
    found = discover_environments()
    assert len(found) == ENVIRONMENTS and all(e.package_count == PACKAGES for e in found)


def main() -> int:
    """Print the figures; 1 when the warm listing costs more than the spawn, or the warm
    packages more than the cold."""
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        prefixes = build(home)
        isolate(home)
        cold, warm, spawn = [], [], []
        records_cold, records_warm = [], []
        for round_number in range(ROUNDS):
            # A conda transaction in every environment since the last listing.
            for prefix in prefixes:
                stamp = time.time() + round_number + 1
                os.utime(prefix / "conda-meta", (stamp, stamp))
            cold.append(seconds(listing))
            warm.append(seconds(listing))
            records_cold.append(seconds(lambda: packages(str(prefixes[0]))))
            records_warm.append(seconds(lambda: packages(str(prefixes[0]))))
            spawn.append(
                seconds(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
            )
    cold_s, warm_s, spawn_s = map(statistics.median, (cold, warm, spawn))
    records_cold_s, records_warm_s = map(statistics.median, (records_cold, records_warm))
    print(
        f"listing {ENVIRONMENTS} environments of {PACKAGES} packages, median of {ROUNDS}: "
        f"cold {cold_s * 1000:.2f} ms, warm {warm_s * 1000:.2f} ms; "
        f"spawning `python -c pass` {spawn_s * 1000:.2f} ms"
    )
    print(
        f"cold / spawn {cold_s / spawn_s:.2f}, warm / spawn {warm_s / spawn_s:.3f} "
        f"(target: warm below 1)"
    )
    print(
        f"one environment's packages: cold {records_cold_s * 1000:.2f} ms, warm "
        f"{records_warm_s * 1000:.3f} ms; warm / cold {records_warm_s / records_cold_s:.3f} "
        f"(target: below 1)"
    )
    return 0 if warm_s < spawn_s and records_warm_s < records_cold_s else 1


if __name__ == "__main__":
    sys.exit(main())
