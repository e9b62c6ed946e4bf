"""Mutation-test the rules: change one comparison at a time, run the tests that cover it, and say
whether a test failed (the mutant is killed) or none did (it survives: no test sits on that
boundary).

    python scripts/mutants.py            # every mutant
    python scripts/mutants.py rate       # those whose name holds "rate"

Each mutant is one exact piece of source, found once, replaced, and put back whatever happens.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
SERVER = "jupyter_server_ext/jupyterlab_gpu_monitor/"
TESTS = "jupyter_server_ext/tests/"
PYTEST = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
JEST = ["npx", "jest", "--silent"]


class Mutant(NamedTuple):
    name: str
    path: str
    source: str
    mutated: str
    tests: list[str]


DIAGNOSE = [*PYTEST, TESTS + "test_diagnose.py"]
LEDGER = [*PYTEST, TESTS + "test_ledger.py"]
RATES = [*PYTEST, *(TESTS + f for f in ("test_machine.py", "test_kernels.py", "test_sampler.py"))]
ALERTS = [*JEST, "src/__tests__/alerts.spec.ts"]
FREE_GPU = [*JEST, "src/__tests__/freeGpu.spec.ts"]

MUTANTS = [
    # The idle-GPU finding (api_schema/rules.json's figures).
    Mutant("diagnose: held memory counts from the rule's MiB", SERVER + "diagnose.py",
           "if held < HELD_MEMORY_MIB or", "if held <= HELD_MEMORY_MIB or", DIAGNOSE),
    Mutant("diagnose: low utilisation is under the threshold", SERVER + "diagnose.py",
           "utilization >= LOW_UTILIZATION_PERCENT:", "utilization > LOW_UTILIZATION_PERCENT:",
           DIAGNOSE),
    Mutant("diagnose: a busy kernel CPU from the rule's percent", SERVER + "diagnose.py",
           "cpu >= KERNEL_CPU_BUSY_PERCENT", "cpu > KERNEL_CPU_BUSY_PERCENT", DIAGNOSE),
    Mutant("diagnose: an idle kernel CPU under the rule's percent", SERVER + "diagnose.py",
           "cpu < KERNEL_CPU_IDLE_PERCENT", "cpu <= KERNEL_CPU_IDLE_PERCENT", DIAGNOSE),
    Mutant("diagnose: a slowdown finding from the rule's MiB", SERVER + "diagnose.py",
           "facts.held_memory_mib.get(gpu.index, 0) < HELD_MEMORY_MIB",
           "facts.held_memory_mib.get(gpu.index, 0) <= HELD_MEMORY_MIB", DIAGNOSE),
    Mutant("diagnose: minor compatibility from CUDA 11", SERVER + "cuda_compat.py",
           "if major_minor[0] >= 11:", "if major_minor[0] > 11:", DIAGNOSE),
    # The notebooks' GPU ledger (the same figures).
    Mutant("ledger: held memory counts from the rule's MiB", SERVER + "kernel/ledger.py",
           "if mib >= HELD_MEMORY_MIB and", "if mib > HELD_MEMORY_MIB and", LEDGER),
    Mutant("ledger: idle is under the low-utilisation threshold", SERVER + "kernel/ledger.py",
           "utilization_gpu < LOW_UTILIZATION_PERCENT",
           "utilization_gpu <= LOW_UTILIZATION_PERCENT", LEDGER),
    Mutant("ledger: a scrape a minute keeps it whole", SERVER + "kernel/ledger.py",
           "MAX_GAP_SECONDS = 180.0", "MAX_GAP_SECONDS = 59.0", LEDGER),
    # The one rate rule (machine, kernels, processes, GPU links).
    Mutant("rate: over up to its whole window", SERVER + "machine/model.py",
           "now - since > window", "now - since >= window", RATES),
    Mutant("rate: never over no time", SERVER + "machine/model.py",
           "now <= since or", "now < since or", RATES),
    # The alerts.
    Mutant("alerts: a reading above the threshold fires", "src/alerts/alerts.ts",
           "!episode.firing && value > threshold", "!episode.firing && value >= threshold",
           ALERTS),
    Mutant("alerts: an episode ends the margin below", "src/alerts/alerts.ts",
           "value <= threshold - REARM_MARGIN", "value < threshold - REARM_MARGIN", ALERTS),
    Mutant("alerts: low utilisation is under the threshold", "src/alerts/alerts.ts",
           "utilization < thresholds.lowUtilizationPercent",
           "utilization <= thresholds.lowUtilizationPercent", ALERTS),
    Mutant("alerts: held memory counts from the rule's MiB", "src/alerts/alerts.ts",
           "gpu.memory_used_mib >= HELD_MEMORY_MIB", "gpu.memory_used_mib > HELD_MEMORY_MIB",
           ALERTS),
    Mutant("alerts: a condition that lasted its seconds fires", "src/alerts/alerts.ts",
           "timestamp - episode.since! >= seconds", "timestamp - episode.since! > seconds",
           ALERTS),
    Mutant("alerts: a gap longer than the limit breaks an episode", "src/alerts/alerts.ts",
           "timestamp - episode.seen > MAX_OBSERVATION_GAP_SECONDS",
           "timestamp - episode.seen >= MAX_OBSERVATION_GAP_SECONDS", ALERTS),
    Mutant("alerts: memory grows by the growth share", "src/alerts/alerts.ts",
           "mib - least >= GROWTH_SHARE", "mib - least > GROWTH_SHARE", ALERTS),
    Mutant("alerts: the kernel's own memory, not the card's", "src/alerts/alerts.ts",
           "ours.length > 0\n", "ours.length > 1\n", ALERTS),
    # The least used GPU.
    Mutant("free GPU: room counts the kernel's own memory", "src/freeGpu/freeGpu.ts",
           "gpu.freeMiB + gpu.ownMiB >= roomNeeded", "gpu.freeMiB >= roomNeeded", FREE_GPU),
    Mutant("free GPU: among equals the most memory free", "src/freeGpu/freeGpu.ts",
           "|| b.freeMiB - a.freeMiB", "|| a.freeMiB - b.freeMiB", FREE_GPU),
]  # fmt: skip


def killed(mutant: Mutant) -> bool:
    """Whether a test failed with the mutant in place."""
    path = REPO / mutant.path
    source = path.read_text()
    if source.count(mutant.source) != 1:
        raise SystemExit(f"{mutant.name}: {mutant.source!r} is not once in {mutant.path}")
    try:
        path.write_text(source.replace(mutant.source, mutant.mutated))
        tests = subprocess.run(mutant.tests, cwd=REPO, capture_output=True, text=True)
    finally:
        path.write_text(source)
    return tests.returncode != 0


def main(names: list[str]) -> int:
    survived = 0
    for mutant in MUTANTS:
        if names and not any(name in mutant.name for name in names):
            continue
        dead = killed(mutant)
        survived += not dead
        print(f"{'killed  ' if dead else 'SURVIVED'} {mutant.name}", flush=True)
    print(f"{survived} survived")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
