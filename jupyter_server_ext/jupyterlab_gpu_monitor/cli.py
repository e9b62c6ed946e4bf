"""The ``jupyter-gpu-monitor`` command: the server's readings in a terminal or a script."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ._version import __version__
from .conda.catalog import EnvironmentCatalog
from .conda.commands import add_env_commands, failure_text, in_command_terms
from .conda.errors import AmbiguousEnvironment, EnvironmentNotFound
from .conda.records import packages
from .diagnose import Facts, diagnose
from .gpu.errors import GpuReadError
from .gpu.model import Gpu, Snapshot
from .gpu.nvidia_smi import parse_saved_output
from .gpu.prometheus import selector_matchers
from .gpu.source import SOURCE_NAMES, make_source
from .kernel_env import environment_root
from .probe import probe_interpreter
from .translation import columns, gettext, join_list, ngettext, pad, pgettext, use_terminal_locale


def read_snapshot(args: argparse.Namespace) -> Snapshot:
    """One snapshot from the GPUs, or from a saved nvidia-smi output with ``--from``."""
    if args.from_file is not None:
        fields = args.fields.split(",") if args.fields else None
        try:
            return parse_saved_output(Path(args.from_file).read_text(errors="replace"), fields)
        except GpuReadError as error:
            return Snapshot(source="nvidia-smi", timestamp=time.time(), error=error.to_error())
    source = make_source(
        args.source,
        args.nvidia_smi,
        args.timeout,
        args.prometheus_url,
        args.prometheus_selector,
        args.prometheus_bearer_token_file,
    )
    try:
        return asyncio.run(source.sample())
    except GpuReadError as error:
        name = None if source.name == "auto" else source.name
        return Snapshot(source=name, timestamp=time.time(), error=error.to_error())
    finally:
        source.close()


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


def _selector(text: str) -> str:
    try:
        selector_matchers(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _add_source_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--source",
        choices=SOURCE_NAMES,
        default="auto",
        help=gettext("where readings come from (default: {default})").format(
            default=gettext("auto: NVML, else nvidia-smi")
        ),
    )
    command.add_argument(
        "--nvidia-smi", default="nvidia-smi", metavar="PATH", help=gettext("nvidia-smi to run")
    )
    command.add_argument(
        "--timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help=gettext("how long one read may take (default: {default} s)").format(default=5),
    )
    command.add_argument(
        "--prometheus-url",
        default="",
        metavar="URL",
        help=gettext("with --source prometheus: the Prometheus to ask, e.g. {url}").format(
            url="http://prometheus:9090"
        ),
    )
    command.add_argument(
        "--prometheus-selector",
        default="",
        type=_selector,
        metavar="SELECTOR",
        help=gettext("with --source prometheus: e.g. {selector}").format(
            selector='{Hostname="node-7"}'
        ),
    )
    command.add_argument(
        "--prometheus-bearer-token-file",
        default="",
        metavar="FILE",
        help=gettext("with --source prometheus: a file holding a bearer token"),
    )
    command.add_argument(
        "--from",
        dest="from_file",
        metavar="FILE",
        help=gettext(
            "parse a saved `nvidia-smi -q -x`, `-L`, or `--query-gpu`/`--query-compute-apps` CSV"
        ),
    )
    command.add_argument(
        "--fields",
        help=gettext("with --from: the --query-gpu field list of a CSV saved with noheader"),
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jupyter-gpu-monitor",
        description=gettext("GPU readings as the JupyterLab GPU monitor sees them."),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    snapshot = commands.add_parser("snapshot", help=gettext("print one snapshot of every GPU"))
    snapshot.set_defaults(run=run_snapshot)
    snapshot.add_argument("--json", action="store_true", help=gettext("print the REST API's JSON"))
    _add_source_options(snapshot)
    doctor = commands.add_parser(
        "doctor", help=gettext("diagnose an environment: can it use the GPUs, and what fixes it")
    )
    doctor.set_defaults(run=run_doctor)
    doctor.add_argument(
        "--env",
        metavar="ENV",
        help=gettext(
            "the environment to check: a name or id from `envs`, or a prefix (default: this "
            "Python's)"
        ),
    )
    doctor.add_argument(
        "--shallow", action="store_true", help=gettext("do not import torch to ask it about CUDA")
    )
    doctor.add_argument(
        "--json", action="store_true", help=gettext("print the facts and findings as JSON")
    )
    _add_source_options(doctor)
    add_env_commands(commands)
    return parser


def run_snapshot(args: argparse.Namespace) -> int:
    """``snapshot``: 0 when every GPU was read, 1 when reading failed."""
    snapshot = read_snapshot(args)
    if args.json:
        print(json.dumps(snapshot.to_json(), indent=2))
    elif snapshot.error is None:
        print(format_table(snapshot))
    failures = [snapshot.error] if snapshot.error else [g.error for g in snapshot.gpus if g.error]
    for failure in failures:
        print(failure_text(failure.kind, failure.message, failure.hint), file=sys.stderr)
    return 1 if failures else 0


def _doctor_interpreter(args: argparse.Namespace) -> str:
    if args.env is None:
        return sys.executable
    prefix = Path(args.env).resolve()
    if not prefix.is_dir():
        # Imported here: only a lookup by name pays for jupyter_client and the settings.
        from jupyter_client.kernelspec import KernelSpecManager

        from .config import GpuMonitor

        catalog = EnvironmentCatalog(KernelSpecManager(), GpuMonitor())
        try:
            prefix = Path(asyncio.run(catalog.resolve(args.env)).prefix)
        except (EnvironmentNotFound, AmbiguousEnvironment) as error:
            raise SystemExit(f"jupyter-gpu-monitor doctor: {error}") from None
    for candidate in (prefix / "bin" / "python", prefix / "python.exe"):
        if candidate.exists():
            return str(candidate)
    message = gettext("no Python in {prefix}").format(prefix=prefix)
    raise SystemExit(f"jupyter-gpu-monitor doctor: {message}")


def _doctor_summary(python: str, probe: dict, snapshot: Snapshot) -> list[str]:
    prefix, kind = environment_root(python)
    torch = probe.get("torch") or {}
    torch_line = f"torch {probe['packages'].get('torch') or gettext('not installed')}"
    if torch:
        usable = gettext("yes") if torch.get("cuda_available") else gettext("no")
        torch_line = gettext("{torch}, CUDA build {cuda}, CUDA usable: {usable}").format(
            torch=torch_line, cuda=torch.get("cuda") or gettext("none"), usable=usable
        )
    if snapshot.error is not None:
        gpus = gettext("GPUs: none readable ({error})").format(error=snapshot.error.message)
    else:
        names = join_list(gpu.name or gettext("unknown GPU") for gpu in snapshot.gpus)
        gpus = gettext("GPUs: {names}; driver {driver}, CUDA {cuda}").format(
            names=names or gettext("none"),
            driver=snapshot.driver_version or gettext("n/a"),
            cuda=snapshot.cuda_version or gettext("n/a"),
        )
    visible = probe.get("cuda_visible_devices")
    python_line = gettext("Python {version} at {executable} ({kind} {prefix})").format(
        version=probe["python_version"],
        executable=probe["executable"],
        kind=kind or gettext("unknown"),
        prefix=prefix,
    )
    return [
        python_line,
        torch_line,
        gpus,
        "CUDA_VISIBLE_DEVICES: " + (gettext("(unset)") if visible is None else repr(visible)),
    ]


def run_doctor(args: argparse.Namespace) -> int:
    """``doctor``: the diagnoses for an environment; 1 when there is an error finding."""
    python = _doctor_interpreter(args)
    snapshot = read_snapshot(args)
    try:
        probe = asyncio.run(probe_interpreter(python, deep=not args.shallow))
    except RuntimeError as error:
        print(f"jupyter-gpu-monitor doctor: {error}", file=sys.stderr)
        return 2
    installed = packages(probe["prefix"])  # for "installed by both conda and pip"
    findings = diagnose(Facts(snapshot=snapshot, probe=probe, packages=installed))
    if args.json:
        report = {"probe": probe, "gpus": snapshot.to_json(), "findings": findings}
        print(json.dumps(report, default=lambda finding: finding.to_json(), indent=2))
    else:
        print("\n".join(_doctor_summary(python, probe, snapshot)))
        labels = {
            "error": pgettext("severity", "ERROR"),
            "warning": pgettext("severity", "WARNING"),
            "info": pgettext("severity", "INFO"),
        }
        indent = max(8, *(columns(label) + 1 for label in labels.values()))
        for finding in findings:
            print(f"\n{pad(labels[finding.severity], indent)}{finding.title}")
            print(" " * indent + finding.evidence)
            fix = in_command_terms(finding.fix)
            print(" " * indent + gettext("fix: {fix}").format(fix=fix))
        if not findings:
            print("\n" + gettext("No problems found."))
    return 1 if any(finding.severity == "error" for finding in findings) else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status."""
    use_terminal_locale()
    args = _parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
