"""The environment inspector's server side: gathers the facts about one kernel, then diagnoses.

Server-side facts first (the kernel's process, its kernelspec, the GPUs and what the kernel holds
on them); the in-kernel probe's answer, when the frontend has one, completes them.
"""

from __future__ import annotations

import inspect
import os
import shutil
import time
from collections.abc import Hashable
from typing import Any, Callable, NamedTuple, TypeVar

from .. import blocking
from ..conda.discovery import FILES_SECONDS
from ..conda.kernelspecs import launch_of, launched_interpreter
from ..conda.prefix import manager_of, project_of
from ..conda.records import packages
from ..diagnose import Facts, diagnose, torch_cuda_label
from ..gpu.sampler import Sampler
from .cells import KernelHistory
from .env import kernel_process_facts
from .join import KernelJoin

T = TypeVar("T")

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


def recent_cpu(
    kernel_history: KernelHistory, kernel_id: str, minutes: float = RECENT_MINUTES
) -> float | None:
    """The kernel's mean CPU over the last minutes, in percent of one core; None when no read
    measured it."""
    now = time.time()
    values = kernel_history.cpu_between(kernel_id, now - minutes * 60, now)
    return sum(values) / len(values) if values else None


class KernelspecFacts(NamedTuple):
    """What a kernel's kernelspec says: the program it runs (as jupyter_client runs it), the
    environment it names, its language, and whether that program is missing."""

    interpreter: str | None = None
    prefix: str | None = None
    language: str | None = None
    missing: bool = False


def kernelspec_launch(manager: Any) -> KernelspecFacts:
    """What the kernel's kernelspec runs and names (a ``conda run`` wrapper's or
    nb_conda_kernels' environment too): from the spec the kernel manager loaded when the
    kernel started. Looks on disk for the program: a deleted environment leaves a kernelspec
    that cannot start."""
    try:
        spec = manager.kernel_spec
    except Exception:
        return KernelspecFacts()  # a kernelspec removed since the kernel started
    if inspect.iscoroutine(spec):
        spec.close()  # a gateway's kernel: its kernelspec is not on this machine
        return KernelspecFacts()
    argv = [str(arg) for arg in getattr(spec, "argv", None) or []]
    language = getattr(spec, "language", None) or None
    if not argv:
        return KernelspecFacts(language=language)
    metadata = getattr(spec, "metadata", None) or {}
    launch = launch_of(manager.kernel_name, {"argv": argv, "metadata": metadata})
    program = launched_interpreter(argv[0])
    # A bare name runs from PATH; a path must be there.
    found = shutil.which(program) if os.sep not in program else os.path.exists(program)
    return KernelspecFacts(program, launch.prefix if launch else None, language, not found)


async def _read(read: Callable[[Any], T], argument: Any, key: Hashable | None) -> T:
    return await blocking.run(
        blocking.FILES, read, argument, timeout_seconds=FILES_SECONDS, key=key
    )


async def inspect_kernel(
    kernel_id: str,
    *,
    kernel_manager: Any,
    sampler: Sampler,
    kernel_join: KernelJoin,
    kernel_history: KernelHistory | None = None,
    probe: dict | None = None,
    expected_prefix: str | None = None,
) -> dict:
    """The facts the server has about one of its kernels and the findings they lead to.

    The kernel's process, its packages and its kernelspec are read on the FILES threads (see
    blocking.py), each within ``FILES_SECONDS``: blocking.TimedOut when one does not answer
    (a network filesystem that hangs), which the route answers 504."""
    manager = kernel_manager.get_kernel(kernel_id)
    pid = getattr(getattr(manager, "provisioner", None), "pid", None)
    process = (
        await _read(kernel_process_facts, pid, key=("process", pid)) if pid is not None else None
    )
    prefix = (probe or {}).get("prefix") or (process.prefix if process is not None else None)
    installed = await _read(packages, prefix, key=("prefix", prefix)) if prefix else None
    made_by = await _read(manager_of, prefix, key=("manager", prefix)) if prefix else None
    project = await _read(project_of, prefix, key=("project", prefix)) if prefix else None
    kernelspec = await _read(kernelspec_launch, manager, key=None)
    snapshot = await sampler.snapshot()
    name = getattr(manager, "kernel_name", None)
    facts = Facts(
        snapshot=snapshot,
        probe=probe,
        process=process,
        packages=installed,
        env_manager=made_by,
        project=project,
        kernelspec_name=name,
        kernelspec_interpreter=kernelspec.interpreter,
        kernelspec_prefix=kernelspec.prefix,
        kernel_language=kernelspec.language,
        interpreter_missing=kernelspec.missing,
        expected_prefix=expected_prefix,
        held_memory_mib={
            usage.gpu_index: usage.memory_used_mib
            for usage in kernel_join.usage
            if usage.kernel_id == kernel_id
        },
        recent_utilization=recent_utilization(sampler),
        utilization_minutes=RECENT_MINUTES,
        recent_cpu_percent=(
            recent_cpu(kernel_history, kernel_id) if kernel_history is not None else None
        ),
    )
    return {
        "kernel_id": kernel_id,
        "kernelspec": name,
        "remote": pid is None,
        "process": process.to_json() if process is not None else None,
        "prefix": prefix,
        # Which source answered: the server always, the kernel when a probe came with the call.
        "sources": {"server": True, "probe": probe is not None},
        "torch_cuda": torch_cuda_label(facts),
        "findings": [finding.to_json() for finding in diagnose(facts)],
    }
