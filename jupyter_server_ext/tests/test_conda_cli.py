"""``jupyter-gpu-monitor envs`` and ``export``, run as a user runs them, over a conda layout
built from the real fixtures."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from .conda_layouts import (
    BASE_2021,
    conda_capture,
    env_2025,
    make_conda_env,
)
from .test_cli import assert_in_command_terms, run, with_config
from .test_probe import environment


@pytest.fixture
def layout(conda_home):
    """Two conda roots, and the 2025 history's environment in the first."""
    make_conda_env(conda_home / "miniconda3", BASE_2021, root=True)
    make_conda_env(conda_home / "miniforge3", BASE_2021, root=True)
    env_2025(conda_home / "miniconda3" / "envs" / "devops")
    return conda_home


def test_envs_json_is_read_like_conda_env_list_json(layout):
    result = run("envs", "--json")
    assert result.returncode == 0, result.stderr
    ours = json.loads(result.stdout)
    devops = str(layout / "miniconda3" / "envs" / "devops")
    assert {str(layout / "miniconda3"), str(layout / "miniforge3"), devops} <= set(ours["envs"])
    assert ours["envs_details"][devops] == {
        "id": "devops",
        "name": "devops",
        "kind": "conda-env",
        "manager": "conda",
        "python_version": "3.13.2",
        "package_count": 16,
        "kernelspecs": [],
        "modified": os.stat(Path(devops, "conda-meta", "history")).st_mtime,
        "base": False,
    }
    # What a script written for conda's output does works on ours, and on conda's own.
    for text in (
        conda_capture("conda-env-list-json-windows-3envs.json"),
        conda_capture("conda-env-list-json-macos-root-omitted.json"),
        result.stdout,
    ):
        listing = json.loads(text)
        details = listing.get("envs_details", {})
        names = [
            details.get(p, {}).get("name") or p.replace("\\", "/").rsplit("/", 1)[-1]
            for p in listing["envs"]
        ]
        assert names and all(isinstance(name, str) for name in names)
    assert "devops" in names and names.count("base") == 2


def test_envs_table_has_a_row_per_environment(layout):
    result = run("envs")
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header.split() == [
        "NAME",
        "KIND",
        "MANAGER",
        "PYTHON",
        "PACKAGES",
        "KERNELSPECS",
        "PREFIX",
    ]
    devops = next(row.split() for row in rows if row.startswith("devops "))
    assert devops == [
        "devops",
        "conda-env",
        "conda",
        "3.13.2",
        "16",
        "-",
        str(layout / "miniconda3/envs/devops"),
    ]
    assert sum(row.startswith("base-") for row in rows) == 2


def test_export_by_name_or_prefix_prints_environment_yml(layout):
    by_name = run("export", "devops")
    assert by_name.returncode == 0, by_name.stderr
    by_prefix = run("export", str(layout / "miniconda3" / "envs" / "devops"))
    assert by_prefix.stdout == by_name.stdout
    assert "  - python=3.13.2\n" in by_name.stdout
    history = run("export", "devops", "--from-history")
    assert yaml.safe_load(history.stdout)["dependencies"] == [
        "python_abi[build=*_cp313t]",
        "python=3.13",
        "pip",
    ]
    builds = run("export", "devops", "--with-builds")
    assert "  - python=3.13.2=hfd29fff_1_cp313t\n" in builds.stdout


def test_export_of_an_unknown_or_ambiguous_name_fails_with_a_reason(layout):
    unknown = run("export", "nope")
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert unknown.stderr == (
        "jupyter-gpu-monitor export: no environment is named 'nope'; "
        "`jupyter-gpu-monitor envs` lists the name and id of each\n"
    )
    ambiguous = run("export", "base")
    assert ambiguous.returncode == 1
    assert "2 environments are named 'base'; name one by its id: base-" in ambiguous.stderr
    for failed in (unknown, ambiguous):
        assert_in_command_terms(failed)


def test_export_from_history_of_a_venv_names_the_option_to_leave_out(layout):
    result = run("export", str(environment("plain")), "--from-history")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        "jupyter-gpu-monitor export: plain is a venv: it has no conda history to export from; "
        "export it without --from-history\n"
    )
    assert_in_command_terms(result)


def test_export_takes_one_environment_and_one_style(layout):
    none = run("export")
    assert none.returncode == 2
    assert none.stderr == (
        "jupyter-gpu-monitor export: name one environment: jupyter-gpu-monitor export ENV "
        "[options]\n"
    )
    both = run("export", "devops", "--from-history", "--with-builds")
    assert both.returncode == 2 and "exclude each other" in both.stderr
    both = run("export", "devops", "--requirements", "--pylock")
    assert both.returncode == 2 and "exclude each other" in both.stderr


def test_export_through_conda(layout, fake_conda):
    result = run("export", "devops", "--use-conda")
    assert result.returncode == 0, result.stderr
    assert result.stdout == conda_capture("conda-env-export-base-win64-conda-forge-2021.yml")
    fake_conda.hang()
    hung = run("export", "devops", "--use-conda", "--conda-timeout", "0.5")
    assert hung.returncode == 1
    assert hung.stderr.startswith("error (timeout): `conda info --json` did not finish")
    assert "did not finish within 0.5 s\n" in hung.stderr
    assert "Raise --conda-timeout, or ask without --use-conda." in hung.stderr
    assert_in_command_terms(hung)


def test_conda_timeout_and_envs_folders_come_from_the_servers_config(layout, fake_conda, tmp_path):
    fake_conda.hang()
    team = tmp_path / "team-envs"
    env_2025(team / "shared")
    config = f"c.GpuMonitor.conda_timeout = 0.5\nc.GpuMonitor.extra_envs_dirs = [{str(team)!r}]\n"
    env = with_config(tmp_path, config)
    listing = run("envs", env=env)
    assert listing.returncode == 0, listing.stderr
    assert any(row.split()[0] == "shared" for row in listing.stdout.splitlines())
    # --envs-dir replaces the setting for this run.
    other = run("envs", "--envs-dir", str(layout), env=env)
    assert not any(row.split()[0] == "shared" for row in other.stdout.splitlines())
    hung = run("envs", "--use-conda", env=env)
    assert hung.returncode == 1 and "did not finish within 0.5 s" in hung.stderr


def test_a_missing_or_failing_conda_is_told_in_the_commands_terms(layout, fake_conda, tmp_path):
    missing = run("envs", "--use-conda", "--conda", str(tmp_path / "conda"))
    assert missing.returncode == 1
    assert "hint: The conda command is not on the PATH: set --conda to its full path" in (
        missing.stderr
    )
    assert "or ask without --use-conda" in missing.stderr
    fake_conda.fail("CondaError: the environment is locked\n")
    failed = run("export", "devops", "--use-conda")
    assert failed.returncode == 1 and "CondaError: the environment is locked" in failed.stderr
    for result in (missing, failed):
        assert_in_command_terms(result)


def test_export_through_conda_finds_an_environment_only_conda_knows(layout, fake_conda):
    # The real `conda info --json` of a 2015 Mac, its anaconda moved into our home: in no
    # usual install place, so only conda's own listing names py27.
    anaconda = layout / "anaconda"
    make_conda_env(anaconda, [], root=True)
    env_2025(anaconda / "envs" / "py27")
    fake_conda.replay(paths={"/Users/calebhattingh/anaconda": str(anaconda)})
    assert run("export", "py27").returncode == 1
    result = run("export", "py27", "--use-conda")
    assert result.returncode == 0, result.stderr
    assert fake_conda.calls() == [
        ["info", "--json"],
        ["env", "export", "--prefix", str(anaconda / "envs" / "py27"), "--no-builds"],
    ]
