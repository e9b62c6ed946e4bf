#!/usr/bin/env python3
"""A stand-in for nvidia-smi that replays real captures (testdata/nvidia-smi).

Put first on PATH as ``nvidia-smi`` (see ``install_fake_nvidia_smi``), or name it in
``GpuMonitor.nvidia_smi_path``. What it answers is read at each call from environment
variables, overridden by the JSON object in the file ``FAKE_SMI_CONTROL`` when that exists (so a
test can change a running server's GPUs):

- ``FAKE_SMI_XML``, ``FAKE_SMI_GPU_CSV``, ``FAKE_SMI_APPS_CSV``, ``FAKE_SMI_LIST``: the capture
  printed for ``-q -x``, ``--query-gpu=…``, ``--query-compute-apps=…`` and ``-L``. Without a CSV
  capture, the CSV queries are answered from the XML capture's own numbers, so that one real
  ``-q -x`` of a multi-GPU machine replays that whole machine consistently (without the header
  line when ``--format`` says ``noheader``, as nvidia-smi does).
- ``FAKE_SMI_ERROR``: an error capture printed for every call, exiting ``FAKE_SMI_EXIT``
  (default 9, nvidia-smi's "driver not loaded" status).
- ``FAKE_SMI_MODE``: ``hang`` (never answers), ``garbage`` (prints random bytes), ``flood``
  (prints 20 MB of random bytes, as a broken driver's tool might) or ``crash`` (prints the
  first half of its answer, then dies of SIGSEGV).
- ``FAKE_SMI_LOST``: ``bus_id,…``: GPUs of the XML capture that fell off the bus, as an older
  driver's nvidia-smi has it: a call that reaches one of them (any call without ``-i``) prints
  the real "Unable to determine the device handle" capture with that GPU's bus id and exits 15
  (NVML_ERROR_GPU_IS_LOST); a call with ``-i`` naming only other GPUs answers for those.
- ``FAKE_SMI_APPS_REPEAT``: ``N``: the compute-apps capture's rows printed N times over, each
  copy with pids of its own: a valid process list as long as a test needs.
- ``FAKE_SMI_REJECT_FIELD``: a --query-gpu field this "old driver" does not know.
- ``FAKE_SMI_PIDS``: ``capture_pid:real_pid,…``: the capture's process ids replaced, so that
  a real capture reports processes that exist on this machine (a test's kernels).
- ``FAKE_SMI_LOG``: a file that gets one line per call (the arguments).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from pathlib import Path

# The captures (testdata/nvidia-smi), for the messages this fake prints of itself.
_CAPTURES = Path(__file__).resolve().parents[2] / "testdata" / "nvidia-smi"


def _settings() -> dict[str, str]:
    settings = {k: v for k, v in os.environ.items() if k.startswith("FAKE_SMI_")}
    control = settings.get("FAKE_SMI_CONTROL")
    if control and Path(control).exists():
        settings.update(json.loads(Path(control).read_text() or "{}"))
    return {k: v for k, v in settings.items() if v}


def _capture(path: str, settings: dict[str, str]) -> str:
    """A capture's text, with its pids replaced as FAKE_SMI_PIDS says."""
    text = Path(path).read_text()
    pids = dict(pair.split(":") for pair in settings.get("FAKE_SMI_PIDS", "").split(",") if pair)
    if not pids:
        return text
    if text.lstrip().startswith("<"):
        return re.sub(r"<pid>(\d+)</pid>", lambda m: f"<pid>{pids.get(m[1], m[1])}</pid>", text)
    lines = text.splitlines()
    header = [cell.strip() for cell in lines[0].split(",")] if lines else []
    if "pid" not in header:
        return text
    column = header.index("pid")
    for number, line in enumerate(lines[1:], start=1):
        cells = line.split(", ")
        if len(cells) > column:
            cells[column] = pids.get(cells[column], cells[column])
            lines[number] = ", ".join(cells)
    return "\n".join(lines) + "\n"


def _query(args: list[str], option: str) -> list[str] | None:
    for arg in args:
        if arg.startswith(option):
            return arg.split("=", 1)[1].split(",")
    return None


def _ids(args: list[str]) -> set[str] | None:
    """The GPUs ``-i``/``--id=`` names (bus ids, in nvidia-smi's short form), None for all."""
    for number, arg in enumerate(args):
        if arg == "-i" and number + 1 < len(args):
            return {_short_bus_id(gpu) for gpu in args[number + 1].split(",")}
        if arg.startswith("--id="):
            return {_short_bus_id(gpu) for gpu in arg.split("=", 1)[1].split(",")}
    return None


def _short_bus_id(bus_id: str) -> str:
    """ "00000000:00:0D.0" (the XML's) as "0000:00:0D.0" (the error message's and -i's)."""
    domain, rest = bus_id.split(":", 1)
    return f"{int(domain, 16):04X}:{rest}".upper()


def _lost_reached(args: list[str], settings: dict[str, str]) -> str | None:
    """The lost GPU this call reaches, as its error message names it; None when none."""
    lost = [_short_bus_id(gpu) for gpu in settings.get("FAKE_SMI_LOST", "").split(",") if gpu]
    ids = _ids(args)
    reached = [gpu for gpu in lost if ids is None or gpu in ids]
    return reached[0] if reached else None


def _only_gpus(xml: str, ids: set[str]) -> str:
    """The XML capture with only the GPUs ``-i`` names."""
    return re.sub(
        r'[ \t]*<gpu id="([^"]+)">.*?</gpu>\n?',
        lambda gpu: gpu[0] if _short_bus_id(gpu[1]) in ids else "",
        xml,
        flags=re.S,
    )


def _csv_from_xml(
    xml: str, fields: list[str], processes: bool, header: bool, only: set[str] | None = None
) -> str:
    """A --query-gpu / --query-compute-apps answer made of the XML capture's numbers, for the
    GPUs ``only`` names (bus ids), or all; kept in a temporary folder once made. Making it
    imports and runs the extension's parser, 140 ms of CPU, where the nvidia-smi it stands in
    for costs a few: at two calls a read, the load tests' server read at a third of a 2-core
    machine's CPU through its fake alone."""
    import hashlib
    import tempfile

    asked = json.dumps([xml, fields, processes, header, sorted(only or []), only is None])
    kept = Path(
        tempfile.gettempdir(), "fake-nvidia-smi-csv", hashlib.sha1(asked.encode()).hexdigest()
    )
    if kept.exists():
        return kept.read_text()
    answer = _made_csv(xml, fields, processes, header, only)
    kept.parent.mkdir(exist_ok=True)
    # Written under a name of its own, then renamed: a concurrent call never reads half of it.
    partial = kept.with_name(f"{kept.name}.{os.getpid()}")
    partial.write_text(answer)
    partial.replace(kept)
    return answer


def _made_csv(
    xml: str, fields: list[str], processes: bool, header: bool, only: set[str] | None
) -> str:
    # The package this fake sits beside, whichever python runs it.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from jupyterlab_gpu_monitor.gpu.clock_events import CLOCK_EVENT_BITS
    from jupyterlab_gpu_monitor.gpu.smi_csv import (
        CLOCK_EVENT_FIELDS,
        GPU_NUMBER_FIELDS,
        GPU_TEXT_FIELDS,
    )
    from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml

    snapshot = parse_xml(xml, 0.0)
    by_field = {"index": "index", **GPU_NUMBER_FIELDS, **GPU_TEXT_FIELDS}

    def mask(reasons: list[str] | None) -> str | None:
        if reasons is None:
            return None
        return f"0x{sum(bit for bit, name in CLOCK_EVENT_BITS if name in reasons):016X}"

    def cell(value) -> str:
        return "[N/A]" if value is None else str(value)

    rows = []
    for gpu in snapshot.gpus:
        if only is not None and _short_bus_id(gpu.pci_bus_id) not in only:
            continue
        if processes:
            rows += [
                [gpu.uuid, process.pid, process.name, process.used_memory_mib]
                for process in gpu.processes
                if process.type and "C" in process.type
            ]
            continue
        row = []
        for field in fields:
            if field == "mig.mode.current":
                row.append((gpu.mig_mode or "[N/A]").capitalize())
            elif field == "driver_version":
                row.append(snapshot.driver_version)
            elif field in CLOCK_EVENT_FIELDS:
                row.append(mask(gpu.clock_throttle_reasons))
            else:
                row.append(getattr(gpu, by_field[field]))
        rows.append(row)
    lines = [", ".join(fields)] if header else []
    lines += [", ".join(cell(value) for value in row) for row in rows]
    return "\n".join(lines) + "\n"


def main(args: list[str]) -> int:
    settings = _settings()
    if "FAKE_SMI_LOG" in settings:
        with open(settings["FAKE_SMI_LOG"], "a") as handle:
            handle.write(" ".join(args) + "\n")
    mode = settings.get("FAKE_SMI_MODE")
    if mode == "hang":
        time.sleep(3600)
    if mode == "garbage":
        sys.stdout.buffer.write(os.urandom(512))
        return 0
    if mode == "flood":
        chunk = os.urandom(1024 * 1024)
        try:
            for _ in range(20):
                sys.stdout.buffer.write(chunk)
        except BrokenPipeError:
            pass  # the reader had enough
        return 0
    if "FAKE_SMI_ERROR" in settings:
        sys.stdout.write(Path(settings["FAKE_SMI_ERROR"]).read_text())
        return int(settings.get("FAKE_SMI_EXIT", "9"))
    lost = _lost_reached(args, settings)
    if lost is not None:
        capture = (_CAPTURES / "errors/device-handle-gpu-is-lost.txt").read_text()
        sys.stdout.write(capture.replace("0000:02:00.0", lost))
        return 15
    gpu_fields = _query(args, "--query-gpu=")
    if gpu_fields and settings.get("FAKE_SMI_REJECT_FIELD") in gpu_fields:
        sys.stdout.write(
            f'Field "{settings["FAKE_SMI_REJECT_FIELD"]}" is not a valid field to query.\n\n'
        )
        return 2
    app_fields = _query(args, "--query-compute-apps=")
    ids = _ids(args)
    if "-q" in args and "-x" in args:
        capture = settings.get("FAKE_SMI_XML")
    elif gpu_fields or app_fields:
        capture = settings.get("FAKE_SMI_GPU_CSV" if gpu_fields else "FAKE_SMI_APPS_CSV")
        if capture is None and "FAKE_SMI_XML" in settings:
            xml = _capture(settings["FAKE_SMI_XML"], settings)
            fields = gpu_fields or app_fields
            header = "noheader" not in (_query(args, "--format=") or [])
            csv = _csv_from_xml(xml, fields, processes=not gpu_fields, header=header, only=ids)
            return _answer(csv)
    elif args == ["-L"]:
        capture = settings.get("FAKE_SMI_LIST")
    else:
        capture = None
    if capture is None:
        sys.stdout.write(f"fake nvidia-smi: no capture set for {' '.join(args)!r}\n")
        return 2
    text = _capture(capture, settings)
    if ids is not None and text.lstrip().startswith("<"):
        text = _only_gpus(text, ids)
    if app_fields and "FAKE_SMI_APPS_REPEAT" in settings:
        text = _repeated_rows(text, int(settings["FAKE_SMI_APPS_REPEAT"]))
    return _answer(text)


def _answer(text: str) -> int:
    """Prints ``text``; with FAKE_SMI_MODE=crash, its first half, then dies as nvidia-smi does
    when it crashes (SIGSEGV)."""
    crash = _settings().get("FAKE_SMI_MODE") == "crash"
    try:
        sys.stdout.write(text[: len(text) // 2] if crash else text)
        sys.stdout.flush()
    except BrokenPipeError:
        pass  # the reader had enough (a capped read)
    if crash:
        os.kill(os.getpid(), signal.SIGSEGV)
    return 0


def _repeated_rows(text: str, times: int) -> str:
    """The CSV's header, then its rows ``times`` over, copy ``n`` with the pids moved by
    ``n * 100000`` so that every row is a process of its own."""
    header, *rows = text.splitlines()
    column = [cell.strip() for cell in header.split(",")].index("pid")
    lines = [header]
    for copy in range(times):
        for row in rows:
            cells = row.split(", ")
            cells[column] = str(int(cells[column]) + copy * 100000)
            lines.append(", ".join(cells))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
