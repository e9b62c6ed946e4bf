"""The ``jupyter-gpu-monitor`` console script, run as a user runs it: its options, the server's
config files it reads, its help, and what it says when something is wrong."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jupyterlab_gpu_monitor import __version__
from jupyterlab_gpu_monitor.cli import main
from jupyterlab_gpu_monitor.cli.doctor import DoctorApp
from jupyterlab_gpu_monitor.cli.environments import EnvsApp, ExportApp
from jupyterlab_gpu_monitor.cli.lab import LabApp
from jupyterlab_gpu_monitor.cli.snapshot import SnapshotApp
from jupyterlab_gpu_monitor.config import GpuMonitor

from .replay import SMI_FIXTURES, captures, install_fake_nvidia_smi

SCRIPT = Path(sys.executable).with_name("jupyter-gpu-monitor")
T4 = str(SMI_FIXTURES / "xml/tesla-t4-linux-driver-515.105-v11-2procs.xml")
SUBCOMMANDS = (SnapshotApp, DoctorApp, EnvsApp, ExportApp, LabApp)
# What the server's side of a message looks like: a route, a query parameter, a setting's name.
SERVER_TERMS = re.compile(r"\b(?:GET|POST) |use_conda|style=|gpu-monitor/api|\?\w+=|GpuMonitor\.")


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env or os.environ.copy(),
    )


def with_config(tmp_path: Path, python: str = "") -> dict:
    """The environment of a user whose Jupyter config folder (JUPYTER_CONFIG_DIR) has this
    jupyter_server_config.py."""
    folder = tmp_path / "jupyter-config"
    folder.mkdir(exist_ok=True)
    if python:
        (folder / "jupyter_server_config.py").write_text(python)
    return {**os.environ, "JUPYTER_CONFIG_DIR": str(folder)}


def assert_in_command_terms(result: subprocess.CompletedProcess) -> None:
    """Nothing of the REST API in what a command printed: its options, its subcommands."""
    output = result.stdout + result.stderr
    assert not SERVER_TERMS.search(output), output


def hint(stderr: str) -> str:
    (line,) = [line for line in stderr.splitlines() if line.startswith("hint: ")]
    return line.removeprefix("hint: ")


def test_console_script_is_installed():
    assert SCRIPT.exists(), "pip install -e . puts jupyter-gpu-monitor next to python"


def test_version_is_the_packages():
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"jupyter-gpu-monitor {__version__}"
    jupyter = Path(sys.executable).with_name("jupyter")
    through_jupyter = subprocess.run(
        [str(jupyter), "gpu-monitor", "--version"], capture_output=True, text=True, timeout=60
    )
    assert through_jupyter.stdout.strip() == f"jupyter-gpu-monitor {__version__}"


@pytest.mark.parametrize("command", SUBCOMMANDS, ids=lambda command: command.name)
def test_every_option_says_what_it_does_and_sets_a_trait(command):
    app = command()
    owners = {owner.__name__: owner for owner in (*command.mro()[:-3], GpuMonitor)}
    for name, (target, help_text) in app.aliases.items():
        assert help_text, f"{command.name} --{name} has no help text"
        owner, trait = target.split(".")
        assert trait in owners[owner].class_traits(config=True), f"--{name}: no {target}"
    for name, (_, help_text) in app.flags.items():
        assert help_text, f"{command.name} --{name} has no help text"


def test_timeouts_are_named_after_their_settings_with_the_settings_defaults():
    gpu_reads = run("snapshot", "--help").stdout
    assert "--command-timeout=<Float>" in gpu_reads and "--conda-timeout" not in gpu_reads
    assert "Default: 5.0\n    Equivalent to: [--GpuMonitor.command_timeout]" in gpu_reads
    assert "--command-timeout=<Float>" in run("doctor", "--help").stdout
    for command in ("envs", "export"):
        conda = run(command, "--help").stdout
        assert "--conda-timeout=<Float>" in conda and "--command-timeout" not in conda
        assert "Default: 60.0\n    Equivalent to: [--GpuMonitor.conda_timeout]" in conda
    for command in ("snapshot", "doctor", "envs", "export"):
        assert "--timeout=" not in run(command, "--help").stdout


def test_the_old_timeout_option_is_refused_with_the_one_to_use():
    result = run("snapshot", "--timeout", "3", "--from", T4)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        "jupyter-gpu-monitor snapshot: unrecognized option --timeout; "
        "did you mean --command-timeout?\n"
    )
    assert "did you mean --conda-timeout?" in run("envs", "--timeout=3").stderr


def test_main_help_describes_each_subcommand_and_shows_examples():
    result = run("--help")
    assert result.returncode == 0
    description, rest = result.stdout.split("\n\nSubcommands\n", 1)
    assert description.startswith("The GPUs, the environments and their diagnoses")
    assert "jupyter_server_config.py" in description
    for name in ("snapshot", "doctor", "envs", "export", "lab"):
        assert re.search(rf"^{name}\n    \S", rest, re.M), f"no summary for {name}"
    assert "Examples\n--------\n" in rest and "jupyter-gpu-monitor doctor --env train" in rest
    assert result.stdout.rstrip().endswith("jupyter-gpu-monitor SUBCOMMAND --help")


def test_subcommand_help_has_its_description_options_and_examples():
    result = run("snapshot", "--help")
    assert result.returncode == 0
    paragraph = result.stdout.split("\n\n", 1)[0]
    assert paragraph.startswith("Read every GPU once and print a table")
    assert "Exit status: 0" in paragraph
    options = result.stdout.split("Options\n=======\n", 1)[1]
    for option in ("--json", "--from=", "--fields=", "--source=", "--nvidia-smi=", "--config="):
        assert f"\n{option}" in options
    assert "Choices: any of ['auto', 'nvml', 'nvidia-smi', 'prometheus']" in options
    assert "Examples\n--------" in options and "snapshot --from dump.xml" in options
    assert "jupyter-gpu-monitor snapshot --help-all" in options


def test_help_is_in_the_terminals_language():
    chinese = {**os.environ, "LANGUAGE": "zh_CN"}
    main_help = run("--help", env=chinese).stdout
    assert "JupyterLab GPU 监控" in main_help and "打印每块 GPU 的一次快照。" in main_help
    snapshot_help = run("snapshot", "--help", env=chinese).stdout
    assert "读取每块 GPU 一次" in snapshot_help
    assert "GPU 的一次读取（nvidia-smi、NVML 或 Prometheus）最多可用的秒数。" in snapshot_help


def test_table_shows_each_gpu_its_numbers_and_processes():
    result = run("snapshot", "--from", T4)
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


# --- files that cannot be read ------------------------------------------------------------


def test_a_missing_saved_output_is_one_line_and_status_2(tmp_path):
    missing = tmp_path / "dump.xml"
    result = run("snapshot", "--from", str(missing))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        f"jupyter-gpu-monitor snapshot: cannot read {missing}: No such file or directory\n"
    )
    folder = run("snapshot", "--json", "--from", str(tmp_path))
    assert folder.returncode == 2
    assert (
        folder.stderr == f"jupyter-gpu-monitor snapshot: cannot read {tmp_path}: Is a directory\n"
    )


@pytest.mark.skipif(os.getuid() == 0, reason="root reads every file")
def test_an_unreadable_saved_output_is_one_line_and_status_2(tmp_path):
    dump = tmp_path / "dump.xml"
    dump.write_text(Path(T4).read_text())
    dump.chmod(0)
    result = run("snapshot", "--from", str(dump))
    assert result.returncode == 2
    assert result.stderr == f"jupyter-gpu-monitor snapshot: cannot read {dump}: Permission denied\n"


def test_a_missing_bearer_token_file_is_one_line_and_status_2(tmp_path):
    token = tmp_path / "token"
    result = run(
        "snapshot",
        "--source",
        "prometheus",
        "--prometheus-url",
        "http://127.0.0.1:9",
        "--prometheus-bearer-token-file",
        str(token),
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"jupyter-gpu-monitor snapshot: cannot read {token}: No such file or directory\n"
    )


def test_a_missing_config_file_or_envs_folder_is_one_line_and_status_2(tmp_path):
    config = run("snapshot", "--from", T4, "--config", str(tmp_path / "nope.py"))
    assert config.returncode == 2
    assert config.stderr.startswith(f"jupyter-gpu-monitor snapshot: cannot read {tmp_path}")
    folder = run("envs", "--envs-dir", str(tmp_path / "envs"))
    assert folder.returncode == 2 and folder.stdout == ""
    assert folder.stderr == (
        f"jupyter-gpu-monitor envs: cannot read {tmp_path / 'envs'}: No such file or directory\n"
    )


def test_main_returns_the_status_and_prints_the_line(tmp_path, capsys):
    assert main(["snapshot", "--from", str(tmp_path / "dump.xml")]) == 2
    assert capsys.readouterr().err.endswith("dump.xml: No such file or directory\n")
    assert main(["snapshot", "--from", T4]) == 0
    assert "GPU 0  Tesla T4" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"jupyter-gpu-monitor {__version__}\n"


def test_a_command_without_subcommand_or_with_an_unknown_one_says_which_there_are():
    bare = run()
    assert bare.returncode == 2
    assert "name a subcommand: snapshot, doctor, envs, export" in bare.stderr
    unknown = run("snapshots")
    assert unknown.returncode == 2
    assert "no subcommand 'snapshots'; the subcommands are snapshot" in unknown.stderr


# --- the server's configuration ------------------------------------------------------------


def test_settings_come_from_the_servers_config_file_and_options_override_them(fake_smi, tmp_path):
    fake_smi.mode("hang")
    config = 'c.GpuMonitor.source = "nvidia-smi"\nc.GpuMonitor.command_timeout = 0.5\n'
    env = with_config(tmp_path, python=config)
    from_file = run("snapshot", env=env)
    assert from_file.returncode == 1
    assert "error (timeout): nvidia-smi did not answer within 0.5 s" in from_file.stderr
    from_option = run("snapshot", "--command-timeout", "0.7", env=env)
    assert "nvidia-smi did not answer within 0.7 s" in from_option.stderr
    long_form = run("snapshot", "--GpuMonitor.command_timeout=0.6", env=env)
    assert "nvidia-smi did not answer within 0.6 s" in long_form.stderr


def test_json_config_files_of_the_config_path_apply(fake_smi, tmp_path):
    # A site-wide folder (JUPYTER_CONFIG_PATH) names an nvidia-smi off PATH, as an admin would.
    site = tmp_path / "site"
    site.mkdir()
    elsewhere = install_fake_nvidia_smi(tmp_path / "opt")
    settings = {"GpuMonitor": {"source": "nvidia-smi", "nvidia_smi_path": str(elsewhere)}}
    (site / "jupyter_server_config.json").write_text(json.dumps(settings))
    env = {**with_config(tmp_path), "JUPYTER_CONFIG_PATH": str(site), "PATH": os.defpath}
    result = run("snapshot", env=env)
    assert result.returncode == 0, result.stderr
    assert "NVIDIA H100 80GB HBM3" in result.stdout and "source nvidia-smi" in result.stdout
    shown = run("snapshot", "--show-config", env=env)
    assert f"  {site / 'jupyter_server_config.json'}" in shown.stdout
    assert f".nvidia_smi_path = '{elsewhere}'" in shown.stdout


def test_the_command_reads_the_settings_the_server_reads(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "jupyter_server_config.json").write_text(
        json.dumps({"GpuMonitor": {"source": "nvml", "conda_timeout": 30.0}})
    )
    user = 'c.GpuMonitor.command_timeout = 2.5\nc.GpuMonitor.extra_envs_dirs = ["/data/envs"]\n'
    env = {**with_config(tmp_path, python=user), "JUPYTER_CONFIG_PATH": str(site)}
    server = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json\n"
            "from jupyter_server.serverapp import ServerApp\n"
            "app = ServerApp()\n"
            "app.initialize(['--ServerApp.allow_root=True', '--ServerApp.open_browser=False'])\n"
            "print(json.dumps(app.config.GpuMonitor))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    )
    command = json.loads(run("snapshot", "--show-config-json", env=env).stdout)
    assert (
        json.loads(server.stdout.splitlines()[-1])
        == command["GpuMonitor"]
        == {
            "source": "nvml",
            "conda_timeout": 30.0,
            "command_timeout": 2.5,
            "extra_envs_dirs": ["/data/envs"],
        }
    )


def test_an_invalid_setting_is_one_line_naming_the_option_or_the_file(tmp_path):
    on_the_command_line = run("snapshot", "--command-timeout=-1")
    assert on_the_command_line.returncode == 2 and on_the_command_line.stdout == ""
    assert on_the_command_line.stderr == (
        "jupyter-gpu-monitor snapshot: --command-timeout must be a number of seconds above 0 "
        "and at most 600, not -1.0\n"
    )
    wrong_type = run("snapshot", "--command-timeout", "soon")
    assert wrong_type.stderr == (
        "jupyter-gpu-monitor snapshot: --command-timeout must be a float, not the str 'soon'\n"
    )
    selector = run("snapshot", "--source", "prometheus", "--prometheus-selector", "node-7")
    assert selector.returncode == 2
    assert selector.stderr.startswith(
        "jupyter-gpu-monitor snapshot: --prometheus-selector must be label matchers in braces"
    )
    env = with_config(tmp_path, python='c.GpuMonitor.source = "smi"\n')
    in_a_file = run("snapshot", env=env)
    assert in_a_file.returncode == 2
    assert in_a_file.stderr.startswith(
        "jupyter-gpu-monitor snapshot: GpuMonitor.source must be any of ['auto', 'nvml', "
        "'nvidia-smi', 'prometheus'], not the str 'smi' (config files read: "
    )
    assert str(tmp_path / "jupyter-config" / "jupyter_server_config.py") in in_a_file.stderr
    assert "Traceback" not in in_a_file.stderr + on_the_command_line.stderr


# --- failures, in the command's terms --------------------------------------------------------


def test_no_nvidia_smi_exits_non_zero_and_json_still_carries_the_error(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}
    result = run("snapshot", "--json", "--source", "nvidia-smi", env=env)
    assert result.returncode == 1
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "not_installed"
    assert "hint: Install the NVIDIA driver" in result.stderr
    # The hint names this command's own option, not the server's setting, in both outputs.
    assert "point --nvidia-smi at nvidia-smi" in result.stderr
    assert error["hint"] == hint(result.stderr)
    assert_in_command_terms(result)


@pytest.mark.parametrize("capture", captures("errors"), ids=lambda p: p.name)
def test_json_error_and_stderr_say_the_same(fake_smi, capture):
    fake_smi.fail(capture)
    result = run("snapshot", "--json", "--source", "nvidia-smi")
    assert result.returncode == 1
    error = json.loads(result.stdout)["error"]
    assert result.stderr == f"error ({error['kind']}): {error['message']}\nhint: {error['hint']}\n"
    assert_in_command_terms(result)


def test_prometheus_without_its_url_names_the_option_to_set():
    result = run("snapshot", "--source", "prometheus")
    assert result.returncode == 1
    assert "error (not_installed): --prometheus-url is not set" in result.stderr
    assert "hint: Set --prometheus-url to the Prometheus" in result.stderr
    assert "or choose another --source." in result.stderr
    assert "c.--" not in result.stderr
    assert_in_command_terms(result)


def test_live_read_through_nvidia_smi(fake_smi):
    result = run("snapshot", "--source", "nvidia-smi")
    assert result.returncode == 0, result.stderr
    assert "NVIDIA H100 80GB HBM3" in result.stdout and "19818 / 81559 MiB" in result.stdout


def test_hung_nvidia_smi_is_cut_off_by_the_command_timeout(fake_smi):
    fake_smi.mode("hang")
    result = run("snapshot", "--json", "--source", "nvidia-smi", "--command-timeout", "0.5")
    assert result.returncode == 1
    assert "error (timeout): nvidia-smi did not answer within 0.5 s" in result.stderr
    assert "--command-timeout sets the limit" in result.stderr
    assert json.loads(result.stdout)["error"]["hint"] == hint(result.stderr)
    assert_in_command_terms(result)
