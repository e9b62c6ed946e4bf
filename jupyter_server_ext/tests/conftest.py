"""Shared test set-up: a fake nvidia-smi on PATH, and the Jupyter server of pytest-jupyter."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .replay import FAKE_VARIABLES, FakeSmi, install_fake_nvidia_smi

pytest_plugins = ("pytest_jupyter.jupyter_server",)


@pytest.fixture
def fake_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSmi:
    """A fake nvidia-smi first on PATH, replaying real captures until told otherwise: the H100
    under load for the cheap CSV queries, a two-GPU v13 XML for the static facts."""
    for name in FAKE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    executable = install_fake_nvidia_smi(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{executable.parent}{os.pathsep}{os.environ['PATH']}")
    fake = FakeSmi(monkeypatch, tmp_path / "nvidia-smi-calls.log")
    fake.replay(
        "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml",
        "csv/h100-80gb-hbm3-590.48.01-query-gpu-load.csv",
        "csv/h100-80gb-hbm3-590.48.01-compute-apps-load.csv",
    )
    return fake


@pytest.fixture
def no_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH without nvidia-smi, as on a machine without the driver."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
