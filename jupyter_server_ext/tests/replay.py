"""Where the real captures are, and the fake nvidia-smi that replays them (tests and bench)."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "testdata"
SMI_FIXTURES = FIXTURES / "nvidia-smi"
FAKE_SMI = Path(__file__).with_name("fake_nvidia_smi.py")


def captures(kind: str, pattern: str = "*") -> list[Path]:
    """Every capture of one kind (xml, csv, errors): new files are picked up by themselves."""
    return sorted((SMI_FIXTURES / kind).glob(pattern))


def install_fake(folder: Path, name: str, script: Path) -> Path:
    """Write an executable ``name`` into ``folder`` that runs ``script`` with this interpreter."""
    folder.mkdir(parents=True, exist_ok=True)
    executable = folder / name
    executable.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n')
    executable.chmod(executable.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return executable


def install_fake_nvidia_smi(folder: Path) -> Path:
    """Write an ``nvidia-smi`` into ``folder`` that runs the fake with this interpreter."""
    return install_fake(folder, "nvidia-smi", FAKE_SMI)


FAKE_VARIABLES = (
    "FAKE_SMI_XML",
    "FAKE_SMI_GPU_CSV",
    "FAKE_SMI_APPS_CSV",
    "FAKE_SMI_LIST",
    "FAKE_SMI_ERROR",
    "FAKE_SMI_EXIT",
    "FAKE_SMI_MODE",
    "FAKE_SMI_REJECT_FIELD",
    "FAKE_SMI_LOG",
    "FAKE_SMI_CONTROL",
    "FAKE_SMI_PIDS",
    "FAKE_SMI_APPS_REPEAT",
    "FAKE_SMI_LOST",
)


class FakeSmi:
    """Controls the fake nvidia-smi of one test."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, log: Path):
        self._monkeypatch = monkeypatch
        self.log = log
        monkeypatch.setenv("FAKE_SMI_LOG", str(log))

    def replay(
        self,
        xml: str,
        gpu_csv: str | None = None,
        apps_csv: str | None = None,
        listing: str | None = None,
    ) -> None:
        """Answer with these captures (paths relative to the nvidia-smi fixtures); without CSV
        captures, the CSV queries are answered from the XML capture's numbers."""
        for name in ("FAKE_SMI_ERROR", "FAKE_SMI_MODE", "FAKE_SMI_GPU_CSV", "FAKE_SMI_APPS_CSV"):
            self._monkeypatch.delenv(name, raising=False)
        self._monkeypatch.setenv("FAKE_SMI_XML", str(SMI_FIXTURES / xml))
        if gpu_csv:
            self._monkeypatch.setenv("FAKE_SMI_GPU_CSV", str(SMI_FIXTURES / gpu_csv))
        if apps_csv:
            self._monkeypatch.setenv("FAKE_SMI_APPS_CSV", str(SMI_FIXTURES / apps_csv))
        if listing:
            self._monkeypatch.setenv("FAKE_SMI_LIST", str(SMI_FIXTURES / listing))

    def fail(self, error_capture: Path, exit_status: int = 9) -> None:
        """Print this error capture for every call."""
        self._monkeypatch.setenv("FAKE_SMI_ERROR", str(error_capture))
        self._monkeypatch.setenv("FAKE_SMI_EXIT", str(exit_status))

    def mode(self, mode: str | None) -> None:
        """'hang', 'garbage', 'flood', or None for normal answers."""
        if mode is None:
            self._monkeypatch.delenv("FAKE_SMI_MODE", raising=False)
        else:
            self._monkeypatch.setenv("FAKE_SMI_MODE", mode)

    def lose(self, *bus_ids: str) -> None:
        """Lose these GPUs of the XML capture as an older driver does: every call that reaches
        one fails with the real "Unable to determine the device handle" message."""
        self._monkeypatch.setenv("FAKE_SMI_LOST", ",".join(bus_ids))

    def substitute_pids(self, pids: dict[int, int]) -> None:
        """Report these real pids in place of the capture's (capture pid -> real pid)."""
        pairs = ",".join(f"{old}:{new}" for old, new in pids.items())
        self._monkeypatch.setenv("FAKE_SMI_PIDS", pairs)

    def repeat_processes(self, times: int) -> None:
        """Print the compute-apps capture's rows this many times over, as distinct processes."""
        self._monkeypatch.setenv("FAKE_SMI_APPS_REPEAT", str(times))

    def reject_field(self, field: str) -> None:
        """Behave like a driver that does not know this --query-gpu field."""
        self._monkeypatch.setenv("FAKE_SMI_REJECT_FIELD", field)

    def calls(self, prefix: str = "") -> list[str]:
        """The argument lines of the calls made so far, those starting with ``prefix``."""
        if not self.log.exists():
            return []
        return [line for line in self.log.read_text().splitlines() if line.startswith(prefix)]


def server_config(**gpu_monitor) -> dict:
    """pytest-jupyter's server config: this extension enabled, every endpoint behind
    authentication as on a real server, ``c.GpuMonitor`` reading nvidia-smi unless the
    arguments say otherwise."""
    return {
        "ServerApp": {
            "jpserver_extensions": {"jupyterlab_gpu_monitor": True},
            "allow_unauthenticated_access": False,
        },
        "GpuMonitor": {"source": "nvidia-smi", **gpu_monitor},
    }
