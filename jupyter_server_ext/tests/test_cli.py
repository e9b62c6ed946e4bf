"""The ``jupyter-gpu-monitor`` console script, run as a user runs it."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from jupyterlab_gpu_monitor import __version__
from jupyterlab_gpu_monitor.cli import _parser

from .replay import SMI_FIXTURES, captures

SCRIPT = Path(sys.executable).with_name("jupyter-gpu-monitor")


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env or os.environ.copy(),
    )


def test_console_script_is_installed():
    assert SCRIPT.exists(), "pip install -e . puts jupyter-gpu-monitor next to python"


def test_version_is_the_packages():
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"jupyter-gpu-monitor {__version__}"


def _options(parser: argparse.ArgumentParser, command: str = ""):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                yield from _options(subparser, name)
        elif not isinstance(action, argparse._HelpAction):
            yield command, action


@pytest.mark.parametrize(
    "command,option",
    [(c, a) for c, a in _options(_parser())],
    ids=[f"{c or 'main'} {a.dest}" for c, a in _options(_parser())],
)
def test_every_option_says_what_it_does(command, option):
    assert option.help, f"{command} {option.option_strings or option.dest} has no help text"


def test_table_shows_each_gpu_its_numbers_and_processes():
    result = run(
        "snapshot", "--from", str(SMI_FIXTURES / "xml/tesla-t4-linux-driver-515.105-v11-2procs.xml")
    )
    assert result.returncode == 0, result.stderr
    assert "GPU 0  Tesla T4" in result.stdout
    assert "driver 515.105.01 · CUDA 11.7" in result.stdout
    assert "pid 5762" in result.stdout and "1005 MiB" in result.stdout and "python" in result.stdout


def test_mig_table_names_instances_and_why_utilisation_is_missing():
    result = run(
        "snapshot",
        "--from",
        str(SMI_FIXTURES / "xml/a100-sxm4-80gb-mig-4instances-driver-535.54-v12.xml"),
    )
    assert "utilisation not available under MIG" in result.stdout
    assert result.stdout.count("MIG ") >= 4 and "12 / 19968 MiB" in result.stdout


def test_json_is_the_rest_snapshot():
    result = run(
        "snapshot", "--json", "--from", str(SMI_FIXTURES / "csv/l40s-595.80-query-gpu-idle.csv")
    )
    snapshot = json.loads(result.stdout)
    assert snapshot["driver_version"] == "595.80"
    assert snapshot["gpus"][0]["memory_total_mib"] == 46068
    assert snapshot["gpus"][0]["fan_speed_pct"] is None


def test_headerless_dump_is_read_with_its_field_list():
    result = run(
        "snapshot",
        "--json",
        "--from",
        str(SMI_FIXTURES / "csv/gtx1070ti-query-gpu-noheader-nounits.csv"),
        "--fields",
        "fan.speed,memory.total,memory.used,memory.free,pstate,temperature.gpu,name,uuid,"
        "compute_mode,utilization.gpu,utilization.memory,index",
    )
    assert json.loads(result.stdout)["gpus"][0]["temperature_c"] == 61


@pytest.mark.parametrize("capture", captures("errors"), ids=lambda p: p.name)
def test_saved_error_output_exits_non_zero_with_message_and_hint(capture):
    result = run("snapshot", "--from", str(capture))
    assert result.returncode == 1
    assert result.stderr.startswith("error (") and "\nhint: " in result.stderr


def test_no_nvidia_smi_exits_non_zero_and_json_still_carries_the_error(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}
    result = run("snapshot", "--json", "--source", "nvidia-smi", env=env)
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"]["kind"] == "not_installed"
    assert "hint: Install the NVIDIA driver" in result.stderr
    # The hint names this command's own flag, not the server's setting.
    assert "point --nvidia-smi at nvidia-smi" in result.stderr
    assert "GpuMonitor." not in result.stderr


def test_prometheus_without_its_url_names_the_flag_to_set():
    result = run("snapshot", "--source", "prometheus")
    assert result.returncode == 1
    assert "error (not_installed): --prometheus-url is not set" in result.stderr
    assert "hint: Set --prometheus-url to the Prometheus" in result.stderr
    assert "GpuMonitor" not in result.stderr and "c.--" not in result.stderr


def test_live_read_through_nvidia_smi(fake_smi):
    result = run("snapshot", "--source", "nvidia-smi")
    assert result.returncode == 0, result.stderr
    assert "NVIDIA H100 80GB HBM3" in result.stdout and "19818 / 81559 MiB" in result.stdout


def test_hung_nvidia_smi_is_cut_off_by_the_timeout(fake_smi):
    fake_smi.mode("hang")
    result = run("snapshot", "--source", "nvidia-smi", "--timeout", "0.5")
    assert result.returncode == 1
    assert "error (timeout)" in result.stderr
    assert "--timeout sets the limit" in result.stderr and "GpuMonitor." not in result.stderr
