"""Real nvidia-smi outputs: the commands our nvidia-smi source runs and the ones people paste into
bug reports, saved byte for byte with how each ran, and bundled into one archive."""

from __future__ import annotations

import io
import json
import tarfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from jupyterlab_gpu_monitor.gpu.smi_csv import QUERY_APPS_FIELDS, QUERY_GPU_FIELDS
from jupyterlab_gpu_monitor.subprocesses import CommandTimeout, OutputTooLarge, run_command

_GPU_QUERY = f"--query-gpu={','.join(QUERY_GPU_FIELDS)}"
_APPS_QUERY = f"--query-compute-apps={','.join(QUERY_APPS_FIELDS)}"

# File name in the archive -> nvidia-smi's arguments, run in this order: the XML comes between
# two CSV reads of the GPUs, so that it can be compared with a reading on either side of it.
COMMANDS = {
    "query-gpu-csv-nounits.csv": [_GPU_QUERY, "--format=csv,nounits"],  # what the source reads
    "query-compute-apps-csv-nounits.csv": [_APPS_QUERY, "--format=csv,nounits"],
    "q-x.xml": ["-q", "-x"],
    "query-gpu-csv-noheader-nounits.csv": [_GPU_QUERY, "--format=csv,noheader,nounits"],
    "query-gpu-csv.csv": [_GPU_QUERY, "--format=csv"],
    "query-compute-apps-csv.csv": [_APPS_QUERY, "--format=csv"],
    "L.txt": ["-L"],
    "plain.txt": [],
}


@dataclass
class Capture:
    """One nvidia-smi run: what it printed (stdout and stderr, as the source reads them)."""

    phase: str
    name: str
    argv: list[str]
    returncode: int | None  # None: it could not run, or was stopped (``output`` says why)
    seconds: float
    started: float  # epoch seconds
    output: str

    @property
    def ok(self) -> bool:
        """Whether nvidia-smi ran and exited 0."""
        return self.returncode == 0


async def capture(phase: str, executable: str, timeout_seconds: float) -> dict[str, Capture]:
    """Every command of ``COMMANDS`` run once, in order, by file name."""
    captured = {}
    for name, args in COMMANDS.items():
        argv = [executable, *args]
        started, clock = time.time(), time.perf_counter()
        try:
            finished = await run_command(argv, timeout_seconds, merge_stderr=True)
            returncode, output = finished.returncode, finished.stdout
        except (OSError, CommandTimeout, OutputTooLarge) as error:
            returncode, output = None, f"{type(error).__name__}: {error}\n"
        seconds = time.perf_counter() - clock
        captured[name] = Capture(phase, name, argv, returncode, seconds, started, output)
    return captured


def bundle(captures: list[Capture], path: Path, machine: dict) -> None:
    """One .tar.gz: ``<phase>/<name>`` for each output, and ``manifest.json`` with the machine's
    facts and each command's arguments, exit status, start and duration."""
    manifest = {
        "machine": machine,
        "captures": [
            {key: value for key, value in asdict(one).items() if key != "output"}
            for one in captures
        ],
    }
    files = {f"{one.phase}/{one.name}": one.output.encode() for one in captures}
    files["manifest.json"] = json.dumps(manifest, indent=2).encode()
    with tarfile.open(path, "w:gz") as archive:
        for name, content in files.items():
            entry = tarfile.TarInfo(name)
            entry.size = len(content)
            entry.mtime = int(time.time())
            archive.addfile(entry, io.BytesIO(content))
