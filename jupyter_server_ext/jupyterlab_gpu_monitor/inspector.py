"""The environment inspector's server side: gathers the facts about one kernel, then diagnoses.

Server-side facts first (the kernel's process, its kernelspec, the GPUs and what the kernel holds
on them); the in-kernel probe's answer, when the frontend has one, completes them.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from .conda.records import packages
from .diagnose import Facts, diagnose
from .gpu.sampler import Sampler
from .kernel_env import kernel_process_facts
from .kernels import KernelJoin

RECENT_MINUTES = 5.0


def recent_utilization(sampler: Sampler, minutes: float = RECENT_MINUTES) -> dict[int, float]:
    """Each GPU's mean utilisation over the last minutes of the history."""
    now = time.time()
    _, gpus = sampler.history.utilization_between(now - minutes * 60, now)
    means = {}
    for index, (_, series) in gpus.items():
        values = [value for value in series if value is not None]
        if values:
            means[index] = sum(values) / len(values)
    return means


def _kernelspec_interpreter(kernel_spec_manager: Any, name: str | None) -> str | None:
    if kernel_spec_manager is None or not name:
        return None
    try:
        argv = kernel_spec_manager.get_kernel_spec(name).argv
    except Exception:
        return None  # a kernelspec removed since the kernel started
    return argv[0] if argv else None


async def inspect_kernel(
    kernel_id: str,
    *,
    kernel_manager: Any,
    kernel_spec_manager: Any,
    sampler: Sampler,
    kernel_join: KernelJoin,
    probe: dict | None = None,
    expected_prefix: str | None = None,
) -> dict:
    """The facts the server has about one of its kernels and the findings they lead to."""
    manager = kernel_manager.get_kernel(kernel_id)
    pid = getattr(getattr(manager, "provisioner", None), "pid", None)
    process = await asyncio.to_thread(kernel_process_facts, pid) if pid is not None else None
    prefix = (probe or {}).get("prefix") or (process.prefix if process is not None else None)
    installed = await asyncio.to_thread(packages, prefix) if prefix else None
    snapshot = await sampler.snapshot()
    name = getattr(manager, "kernel_name", None)
    facts = Facts(
        snapshot=snapshot,
        probe=probe,
        process=process,
        packages=installed,
        kernelspec_name=name,
        kernelspec_interpreter=_kernelspec_interpreter(kernel_spec_manager, name),
        expected_prefix=expected_prefix,
        held_memory_mib={
            usage.gpu_index: usage.memory_used_mib
            for usage in kernel_join.usage
            if usage.kernel_id == kernel_id
        },
        recent_utilization=recent_utilization(sampler),
        utilization_minutes=RECENT_MINUTES,
    )
    return {
        "kernel_id": kernel_id,
        "kernelspec": name,
        "remote": pid is None,
        "process": process.to_json() if process is not None else None,
        "prefix": prefix,
        # Which source answered: the server always, the kernel when a probe came with the call.
        "sources": {"server": True, "probe": probe is not None},
        "findings": [finding.to_json() for finding in diagnose(facts)],
    }
