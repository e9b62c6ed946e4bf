"""Shared test set-up: a fake nvidia-smi (and conda) on PATH, a conda layout of its own, and the
Jupyter server of pytest-jupyter."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

import psutil
import pytest
import tornado
from jupyterlab_gpu_monitor.conda import condarc, locations

from .conda_layouts import FakeConda, install_fake_conda
from .contract_check import check_answer
from .replay import FAKE_VARIABLES, FakeSmi, install_fake_nvidia_smi, server_config

pytest_plugins = ("pytest_jupyter.jupyter_server",)


@pytest.fixture
def jp_server_config():
    """The Jupyter server of the tests that need one: this extension reading the fake
    nvidia-smi twice a second; a test module overrides it for other settings."""
    return server_config(interval=0.5)


@pytest.fixture
def jp_fetch(jp_fetch):
    """pytest-jupyter's jp_fetch, each answer of ours checked against the REST contract."""

    async def fetch(*parts, **options):
        method = options.get("method", "GET")
        try:
            response = await jp_fetch(*parts, **options)
        except tornado.httpclient.HTTPClientError as error:
            if error.response is not None:
                check_answer(method, error.response.effective_url, error.code, error.response.body)
            raise
        check_answer(method, response.effective_url, response.code, response.body)
        return response

    return fetch


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


# The variables through which conda, micromamba and pixi say where environments are.
CONDA_VARIABLES = (
    "CONDA_EXE",
    "CONDA_PYTHON_EXE",
    "CONDA_ROOT",
    "CONDA_PREFIX",
    "CONDARC",
    "CONDA_ENVS_DIRS",
    "CONDA_ENVS_PATH",
    "MAMBA_ROOT_PREFIX",
    "PIXI_HOME",
    "XDG_CONFIG_HOME",
)


@pytest.fixture
def conda_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of its own, no conda variables, and no system-wide conda places (/opt/conda,
    /etc/conda): the layout a test builds is all that environment discovery can find."""
    home = tmp_path / "conda-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in CONDA_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(locations, "SYSTEM_CONDA_ROOTS", ())
    monkeypatch.setattr(condarc, "SYSTEM_CONDARC_DIRS", ())
    return home


@pytest.fixture
def conda_warnings() -> list[str]:
    """The warnings the environment modules log during a test (pytest runs without its logging
    plugin, so no caplog)."""
    messages: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: messages.append(record.getMessage())
    logger = logging.getLogger("jupyterlab_gpu_monitor.conda")
    logger.addHandler(handler)
    yield messages
    logger.removeHandler(handler)


@pytest.fixture
def fake_conda(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeConda:
    """A fake conda first on PATH, replaying the real captures of testdata/conda."""
    executable = install_fake_conda(tmp_path / "conda-bin")
    monkeypatch.setenv("PATH", f"{executable.parent}{os.pathsep}{os.environ['PATH']}")
    fake = FakeConda(monkeypatch, tmp_path / "conda-calls.log", tmp_path / "conda.pid")
    fake.replay()
    return fake


@pytest.fixture
def other_users_process():
    """A real process of another uid: `sleep` as nobody when we are root, else pid 1's owner."""
    if os.getuid() == 0:
        process = subprocess.Popen(["sleep", "300"], user="nobody")
        yield process.pid
        process.kill()
        process.wait()
        return
    others = [p.pid for p in psutil.process_iter(["uids"]) if p.info["uids"].real != os.getuid()]
    assert others, "this test needs a process of another user on the machine"
    yield others[0]
