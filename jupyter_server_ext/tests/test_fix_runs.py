"""The CPU-only torch's fix, run: in a venv pip made, one uv made, and a conda environment whose
torch pip installed, each against a package index on loopback standing in for PyPI and
PyTorch's CUDA index. What the fix changed is read from the environment before and after."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from jupyterlab_gpu_monitor.conda.prefix import manager_of, project_of
from jupyterlab_gpu_monitor.conda.records import packages
from jupyterlab_gpu_monitor.cuda_compat import PYTORCH_INDEX
from jupyterlab_gpu_monitor.diagnose import Facts, diagnose
from jupyterlab_gpu_monitor.kernel.env import KernelProcessFacts, environment_root

from .conda_layouts import env_2025
from .local_index import build_wheel, isolated_environment, served
from .test_diagnose import A5000, capture

UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")

# The torch family's shape: torch needs sympy and filelock; its CUDA build needs NVIDIA's
# libraries too; torchvision needs its torch. Each index also has a newer sympy and filelock,
# which a fix that reinstalls dependencies would take.
INSTALLED = {
    "torch": "2.13.0+cpu",
    "torchvision": "0.28.0+cpu",
    "sympy": "1.13.3",
    "filelock": "3.20.0",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> str:
    """The URL of an index with ``pypi`` (the CPU builds) and ``whl/cu130`` (the CUDA ones)."""
    root = tmp_path_factory.mktemp("index")
    for local, extra in (("cpu", ()), ("cu130", ("nvidia-cublas-cu13",))):
        folder = root / ("pypi" if local == "cpu" else f"whl/{local}")
        torch_needs = ("sympy>=1.13.3", "filelock", *extra)
        build_wheel(folder / "torch", "torch", f"2.13.0+{local}", torch_needs)
        build_wheel(folder / "torchvision", "torchvision", f"0.28.0+{local}", ("torch==2.13.0",))
        for name, versions in (("sympy", ("1.13.3", "1.14.0")), ("filelock", ("3.20.0", "3.21.0"))):
            for version in versions:
                build_wheel(folder / name, name, version)
        if extra:
            build_wheel(folder / "nvidia-cublas-cu13", "nvidia-cublas-cu13", "13.0.0")
    with served(root) as url:
        yield url


def distributions(python: Path) -> dict[str, str]:
    """Every distribution the environment's Python sees, by name, with its version."""
    listing = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.metadata as m, json; "
            "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(listing.stdout)


def run(command: str, tmp_path: Path, cwd: Path | None = None) -> None:
    """A shell command line, as a user pastes it, with pip and uv seeing only the index."""
    environment = isolated_environment(tmp_path)
    environment["PATH"] = f"{Path(UV).parent}{os.pathsep}{environment['PATH']}"
    done = subprocess.run(
        ["bash", "-c", command],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        cwd=cwd,
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"


def pip_venv(prefix: Path, index: str, tmp_path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(prefix)], check=True)
    python = prefix / "bin" / "python"
    specs = " ".join(f'"{name}=={version}"' for name, version in INSTALLED.items())
    run(f'"{python}" -m pip install -q --index-url {index}/pypi {specs}', tmp_path)
    return python


def uv_venv(prefix: Path, index: str, tmp_path: Path) -> Path:
    run(f'uv venv -q --python "{sys.executable}" "{prefix}"', tmp_path)
    python = prefix / "bin" / "python"
    specs = " ".join(f'"{name}=={version}"' for name, version in INSTALLED.items())
    run(f'uv pip install -q --python "{python}" --index-url {index}/pypi {specs}', tmp_path)
    return python


def conda_env_with_pip_torch(prefix: Path, index: str, tmp_path: Path) -> Path:
    # A conda environment's records (the captured 2025 history's packages) beside a Python
    # that pip installed torch into, as `pip install torch` in an activated conda env does.
    python = pip_venv(prefix, index, tmp_path)
    env_2025(prefix)
    return python


def uv_project(folder: Path, index: str, tmp_path: Path) -> Path:
    # A uv project: its dependencies in pyproject.toml, locked, synced into .venv.
    folder.mkdir()
    dependencies = ", ".join(f'"{name}=={version}"' for name, version in INSTALLED.items())
    (folder / "pyproject.toml").write_text(
        f'[project]\nname = "train"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'
        f"dependencies = [{dependencies}]\n\n"
        f'[[tool.uv.index]]\nname = "local"\nurl = "{index}/pypi"\ndefault = true\n'
    )
    run(f'uv sync -q --python "{sys.executable}"', tmp_path, cwd=folder)
    return folder / ".venv" / "bin" / "python"


def the_fix(python: Path) -> str:
    """The CPU-only torch finding's fix, from what the server reads of the environment."""
    prefix, kind = environment_root(str(python))
    process = KernelProcessFacts(1, str(python), None, prefix, kind, {})
    facts = Facts(
        capture(A5000),  # driver 590.44.01, CUDA 13.1
        None,  # a busy kernel: no probe, the records only
        process=process,
        packages=packages(prefix),
        env_manager=manager_of(prefix),
        project=project_of(prefix),
    )
    (finding,) = [f for f in diagnose(facts) if f.id == "cpu-only-torch"]
    return finding.fix


@pytest.mark.parametrize(
    ("make", "tool"),
    [
        (pip_venv, '-m pip install "torch=='),
        (uv_venv, "uv pip install --python"),
        (conda_env_with_pip_torch, '-m pip install "torch=='),
        (uv_project, "uv add --project"),
    ],
    ids=["pip-venv", "uv-venv", "conda-env-pip-torch", "uv-project"],
)
def test_the_cpu_only_fix_changes_the_torch_family_to_the_cuda_build_and_nothing_else(
    index, tmp_path, make, tool
):
    python = make(tmp_path / "env", index, tmp_path)
    before = distributions(python)
    fix = the_fix(python)
    assert tool in fix
    # This environment (or its project), not whatever is first on PATH.
    assert f'"{python}"' in fix or f'"{tmp_path / "env"}"' in fix

    run(fix.replace(PYTORCH_INDEX, f"{index}/whl"), tmp_path)
    if make is uv_project:
        # What `uv run` does first: the project's lock, not the fix, decides what stays.
        run("uv sync -q", tmp_path, cwd=tmp_path / "env")

    after = distributions(python)
    changed = {
        name: (before.get(name), after.get(name))
        for name in before.keys() | after.keys()
        if before.get(name) != after.get(name)
    }
    assert changed == {
        "torch": ("2.13.0+cpu", "2.13.0+cu130"),
        "torchvision": ("0.28.0+cpu", "0.28.0+cu130"),
        "nvidia-cublas-cu13": (None, "13.0.0"),
    }
