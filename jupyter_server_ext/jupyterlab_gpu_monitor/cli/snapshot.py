"""``snapshot``: one read of every GPU, as a table or the REST API's JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable

from traitlets import Bool

from ..gpu.model import Gpu, Snapshot
from ..translation import gettext, ngettext
from .command import ReadingCommand
from .terms import COMMAND, failure_text


def _number(value: float | None, unit: str = "") -> str:
    if value is None:
        return gettext("n/a")
    return f"{value:g}{unit}"


def _pair(used: float | None, total: float | None, unit: str) -> str:
    return f"{_number(used)} / {_number(total)} {unit}"


def _gpu_lines(gpu: Gpu) -> list[str]:
    util = _number(gpu.utilization_gpu, " %")
    if gpu.utilization_gpu is None and "utilization_gpu" in gpu.unavailable:
        util = gpu.unavailable["utilization_gpu"]
    name = gpu.name or gettext("unknown GPU")
    bus = gpu.pci_bus_id or gettext("no bus id")
    readings = gettext(
        "utilisation {utilization}   memory {memory}   temperature {temperature}   "
        "power {power}   fan {fan}"
    ).format(
        utilization=util,
        memory=_pair(gpu.memory_used_mib, gpu.memory_total_mib, "MiB"),
        temperature=_number(gpu.temperature_c, " °C"),
        power=_pair(gpu.power_draw_w, gpu.power_limit_w, "W"),
        fan=_number(gpu.fan_speed_pct, " %"),
    )
    lines = [f"GPU {gpu.index}  {name}  [{bus}]", f"    {readings}"]
    if gpu.error is not None:
        lines.append("    " + gettext("error: {message}").format(message=gpu.error.message))
    for device in gpu.mig_devices:
        instance = gettext("GPU instance {gpu_instance}, compute instance {compute_instance}")
        mig = gettext("MIG {index} {profile} ({instance})  memory {memory}").format(
            index=device.index,
            profile=device.profile or "",
            instance=instance.format(
                gpu_instance=_number(device.gpu_instance_id),
                compute_instance=_number(device.compute_instance_id),
            ),
            memory=_pair(device.memory_used_mib, device.memory_total_mib, "MiB"),
        )
        lines.append(f"    {mig}")
    for process in gpu.processes:
        memory = _number(process.used_memory_mib, " MiB")
        kind = process.type or "?"
        lines.append(f"    pid {process.pid:<8} {kind:<3} {memory:>10}  {process.name or ''}")
    return lines


def format_table(snapshot: Snapshot) -> str:
    """The snapshot as a person reads it in a terminal."""
    lines = []
    for gpu in snapshot.gpus:
        lines.extend(_gpu_lines(gpu))
    count = len(snapshot.gpus)
    footer = ngettext(
        "driver {driver} · CUDA {cuda} · source {source} · {count} GPU",
        "driver {driver} · CUDA {cuda} · source {source} · {count} GPUs",
        count,
    )
    lines.append(
        footer.format(
            driver=snapshot.driver_version or gettext("n/a"),
            cuda=snapshot.cuda_version or gettext("n/a"),
            source=snapshot.source or gettext("none"),
            count=count,
        )
    )
    return "\n".join(lines)


class SnapshotApp(ReadingCommand):
    """``snapshot``: one read of every GPU, as a table or the REST API's JSON."""

    name = f"{COMMAND} snapshot"

    json_output = Bool(
        False, help="Print the snapshot as the REST API's JSON, its error included."
    ).tag(config=True)

    def command_description(self) -> str:
        """What the command does, one paragraph in the language in force."""
        return gettext(
            "Read every GPU once and print a table: each GPU with its utilisation, memory, "
            "temperature, power and fan, its MIG instances and its processes, then the driver, "
            "the CUDA version and the source. With --json, the REST API's snapshot JSON instead "
            "(its error too); with --from, a saved nvidia-smi output instead of the GPUs. Exit "
            "status: 0 when every GPU was read; 1 when reading failed (what happened and what to "
            "do on stderr); 2 for an invalid option, setting or file."
        )

    def command_examples(self) -> Iterable[tuple[str, str]]:
        return (
            (f"{COMMAND} snapshot", gettext("a table of every GPU and its processes")),
            (f"{COMMAND} snapshot --json", gettext("the REST API's snapshot JSON")),
            (
                f"{COMMAND} snapshot --source nvidia-smi --command-timeout 10",
                gettext("through nvidia-smi, waiting up to 10 s"),
            ),
            (f"{COMMAND} snapshot --from dump.xml", gettext("a saved `nvidia-smi -q -x`")),
            (
                f"{COMMAND} snapshot --from dump.csv --fields memory.used,memory.total",
                gettext("a CSV saved with noheader"),
            ),
        )

    def command_flags(self) -> dict[str, tuple[dict, str]]:
        """``--json``."""
        return {
            "json": (
                {"SnapshotApp": {"json_output": True}},
                gettext("Print the REST API's snapshot JSON, its error included."),
            )
        }

    def start(self) -> int:
        """0 when every GPU was read, 1 when reading failed."""
        snapshot = self.read_snapshot()
        if self.json_output:
            print(json.dumps(snapshot.to_json(), indent=2))
        elif snapshot.error is None:
            print(format_table(snapshot))
        failures = (
            [snapshot.error] if snapshot.error else [g.error for g in snapshot.gpus if g.error]
        )
        for failure in failures:
            print(failure_text(failure.kind, failure.message, failure.hint), file=sys.stderr)
        return 1 if failures else 0
