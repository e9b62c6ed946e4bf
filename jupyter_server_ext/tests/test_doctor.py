"""`jupyter-gpu-monitor doctor`: the diagnoses of an environment, in a terminal."""

from __future__ import annotations

import json
import os

from .test_cli import T4, assert_in_command_terms, run, with_config
from .test_probe import environment


def test_doctor_finds_cpu_only_torch_on_a_gpu_machine_and_prints_the_fix(fake_smi):
    fake_smi.replay("xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml")
    result = run("doctor", "--env", str(environment("torch-cpu")), "--source", "nvidia-smi")
    assert result.returncode == 1, result.stderr
    assert "torch 2.13.0+cpu, CUDA build none, CUDA usable: no" in result.stdout
    assert "GPUs: NVIDIA RTX A5000, NVIDIA RTX A5000; driver 590.44.01, CUDA 13.1" in result.stdout
    assert "ERROR   PyTorch is a CPU-only build, but this machine has GPUs" in result.stdout
    # Through the environment's own interpreter, torch pinned to its installed version's
    # CUDA build.
    python = environment("torch-cpu") / "bin" / "python"
    assert (
        f'fix: "{python}" -m pip install "torch==2.13.0+cu130" '
        "--index-url https://download.pytorch.org/whl/cu130" in result.stdout
    )


def test_doctor_json_carries_probe_gpus_and_findings(fake_smi):
    fake_smi.replay("xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml")
    result = run(
        "doctor",
        "--json",
        "--shallow",
        "--env",
        str(environment("torch-cpu")),
        "--source",
        "nvidia-smi",
    )
    report = json.loads(result.stdout)
    assert report["probe"]["packages"]["torch"] == "2.13.0+cpu"
    assert report["probe"]["torch"] is None  # --shallow: torch was not imported
    assert len(report["gpus"]["gpus"]) == 2
    assert [f["id"] for f in report["findings"]] == ["cpu-only-torch"]


def test_doctor_on_an_environment_without_torch_finds_nothing(fake_smi):
    fake_smi.replay("xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml")
    result = run("doctor", "--env", str(environment("plain")), "--source", "nvidia-smi")
    assert result.returncode == 0, result.stderr
    assert "torch not installed" in result.stdout and "No problems found." in result.stdout


def test_doctor_reports_the_driver_failure_a_cuda_torch_would_hit(fake_smi, tmp_path):
    fake_smi.fail(fake_smi_capture("errors/driver-not-loaded-couldnt-communicate.txt"))
    result = run("doctor", "--env", str(environment("plain")), "--source", "nvidia-smi")
    assert "GPUs: none readable (NVIDIA-SMI has failed" in result.stdout
    # No CUDA torch here, so no driver-failure error; but never "No problems found".
    assert result.returncode == 0
    assert "WARNING The GPUs cannot be read" in result.stdout
    assert (
        "fix: The NVIDIA kernel module is not loaded: run `sudo modprobe nvidia`" in result.stdout
    )
    assert "No problems found." not in result.stdout


def plain_env_without_a_driver(tmp_path) -> tuple[str, ...]:
    """The options of a doctor of the plain venv on a machine whose nvidia-smi is not there."""
    return (
        "--env",
        str(environment("plain")),
        "--source",
        "nvidia-smi",
        "--nvidia-smi",
        str(tmp_path / "nvidia-smi"),
    )


def test_doctor_on_a_machine_without_a_driver_says_there_is_no_gpu(tmp_path):
    result = run(
        "doctor",
        *plain_env_without_a_driver(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert "INFO    No NVIDIA GPU found on this machine" in result.stdout
    assert "or point --nvidia-smi at nvidia-smi" in result.stdout
    assert "No problems found." not in result.stdout


def test_doctor_json_says_what_its_text_says_in_the_commands_terms(tmp_path):
    result = run(
        "doctor",
        "--json",
        "--shallow",
        *plain_env_without_a_driver(tmp_path),
    )
    report = json.loads(result.stdout)
    (finding,) = report["findings"]
    assert finding["fix"] == report["gpus"]["error"]["hint"]
    assert "or point --nvidia-smi at nvidia-smi" in finding["fix"]
    assert_in_command_terms(result)


def test_doctor_finds_an_environment_by_name_in_an_envs_folder(tmp_path):
    envs = str(environment("torch-cpu").parent)
    home = {**os.environ, "HOME": str(tmp_path)}
    found = ("doctor", "--env", "torch-cpu", "--shallow", "--from", T4)
    assert run(*found, env=home).returncode == 1  # not without its folder
    result = run(*found, "--envs-dir", envs, env=home)
    assert f"at {environment('torch-cpu') / 'bin' / 'python'} (venv " in result.stdout
    assert "ERROR   PyTorch is a CPU-only build" in result.stdout
    # The server's setting, from its config file, does the same.
    configured = {**with_config(tmp_path, f"c.GpuMonitor.extra_envs_dirs = [{envs!r}]\n")}
    from_config = run(*found, env={**configured, "HOME": str(tmp_path)})
    assert from_config.stdout == result.stdout


def test_doctor_finds_an_environment_by_name_through_its_kernelspec(fake_smi, tmp_path):
    kernels = tmp_path / "jupyter" / "kernels" / "torch-kernel"
    kernels.mkdir(parents=True)
    python = str(environment("torch-cpu") / "bin" / "python")
    spec = {
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Torch",
        "language": "python",
    }
    (kernels / "kernel.json").write_text(json.dumps(spec))
    fake_smi.replay("xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml")
    env = {**os.environ, "JUPYTER_PATH": str(tmp_path / "jupyter")}
    result = run("doctor", "--env", "torch-cpu", "--shallow", "--source", "nvidia-smi", env=env)
    assert f"at {python} (venv {environment('torch-cpu')})" in result.stdout
    assert "ERROR   PyTorch is a CPU-only build" in result.stdout


def test_doctor_with_an_unknown_environment_name_says_so(tmp_path):
    result = run("doctor", "--env", "no-such-env", env={**os.environ, "HOME": str(tmp_path)})
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        "jupyter-gpu-monitor doctor: no environment is named 'no-such-env'; "
        "`jupyter-gpu-monitor envs` lists the name and id of each\n"
    )
    assert_in_command_terms(result)


def test_doctor_with_a_missing_envs_folder_says_so(tmp_path):
    result = run("doctor", "--env", "train", "--envs-dir", str(tmp_path / "envs"))
    assert result.returncode == 2
    assert result.stderr == (
        f"jupyter-gpu-monitor doctor: cannot read {tmp_path / 'envs'}: No such file or directory\n"
    )


def test_doctor_without_python_in_the_prefix_says_so(tmp_path):
    result = run("doctor", "--env", str(tmp_path))
    assert result.returncode != 0
    assert f"no Python in {tmp_path}" in result.stderr


def fake_smi_capture(name: str):
    from .replay import SMI_FIXTURES

    return SMI_FIXTURES / name
