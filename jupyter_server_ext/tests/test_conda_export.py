"""environment.yml from the records on disk, against the real ``conda env export`` capture and
the three real histories; and the same through a fake conda replaying real captures."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
import yaml
from jupyterlab_gpu_monitor.conda.conda_cli import conda_env_export, conda_info
from jupyterlab_gpu_monitor.conda.discovery import discover_environments, find_environment
from jupyterlab_gpu_monitor.conda.errors import CondaCommandError
from jupyterlab_gpu_monitor.conda.export import (
    UnsupportedExport,
    export_text,
    export_yaml,
    installation_conda_version,
)

from .conda_layouts import (
    Dist,
    add_dist_info,
    conda_capture,
    dists_of_env_export,
    installed_by_history,
    make_conda_env,
)

EXPORT_WIN64 = conda_capture("conda-env-export-base-win64-conda-forge-2021.yml")
CAPTURED_PREFIX = "prefix: C:\\Users\\Geoff\\miniconda3"
HISTORIES = {
    "2016": ("conda-meta-history-2016-conda-3.19-self-update.txt", "pkgs/free", "linux-64"),
    "constructor": (
        "conda-meta-history-anaconda3-2023.03-constructor-osx-arm64.txt",
        "defaults",
        "osx-arm64",
    ),
    "2025": ("conda-meta-history-osx-arm64-py313t-conda-25.1.2.txt", "conda-forge", "osx-arm64"),
}


def environment(name: str):
    return find_environment(discover_environments(), name)


def base_from_the_win64_export(home):
    """A root holding exactly the packages of the real ``conda env export -n base``."""
    root = make_conda_env(home / "miniconda3", dists_of_env_export(EXPORT_WIN64), root=True)
    return environment("base"), root


def env_from_history(home, which: str, **options):
    capture, channel, subdir = HISTORIES[which]
    history = conda_capture(capture)
    make_conda_env(
        home / "miniconda3" / "envs" / which,
        installed_by_history(history, channel, subdir),
        history=history,
        **options,
    )
    return environment(which)


def test_export_with_builds_is_the_real_conda_env_export(conda_home):
    base, root = base_from_the_win64_export(conda_home)
    expected = EXPORT_WIN64.replace(CAPTURED_PREFIX, f"prefix: {root}")
    assert export_yaml(base, "with-builds") == expected


def test_export_without_builds_drops_the_builds_of_the_real_export(conda_home):
    base, root = base_from_the_win64_export(conda_home)
    expected = set()
    for line in EXPORT_WIN64.replace(CAPTURED_PREFIX, f"prefix: {root}").splitlines():
        expected.add(line.rsplit("=", 1)[0] if line.startswith("  - ") and "=" in line else line)
    assert set(export_yaml(base, "no-builds").splitlines()) == expected


@pytest.mark.parametrize(
    ("which", "specs"),
    [
        # Every revision's specs, the latest per name; 'python 2.7*' is conda's python=2.7.
        ("2016", ["conda", "python=2.7", "cas-mirror", "grin", "pyflakes"]),
        # The installer's one revision; the 'anaconda' metapackage it asked for is not
        # installed, so conda leaves it out.
        (
            "constructor",
            [
                "python=3.10",
                "setuptools",
                "pip",
                "wheel",
                "anaconda-client",
                "anaconda-project",
                "anaconda-navigator",
                "conda",
                "conda-build",
                "conda-content-trust",
                "conda-pack",
                "conda-package-handling",
                "conda-package-streaming",
                "conda-token",
                "conda-verify",
                "python.app",
            ],
        ),
        ("2025", ["python_abi[build=*_cp313t]", "python=3.13", "pip"]),
    ],
)
def test_export_from_history_lists_what_the_user_asked_for(conda_home, which, specs):
    env = env_from_history(conda_home, which)
    document = yaml.safe_load(export_yaml(env, "from-history"))
    assert document == {
        "name": which,
        "channels": ["defaults"],
        "dependencies": specs,
        "prefix": env.prefix,
    }


def test_from_history_starts_from_the_configured_channels(conda_home):
    (conda_home / ".condarc").write_text("channels:\n  - conda-forge\n  - bioconda\n")
    env = env_from_history(conda_home, "2025")
    assert yaml.safe_load(export_yaml(env, "from-history"))["channels"] == [
        "conda-forge",
        "bioconda",
    ]


def test_variables_come_from_conda_meta_state(conda_home):
    # conda env config vars set writes {"env_vars": {...}}; unset leaves "***unset***".
    state = {
        "env_vars": {
            "CUDA_VISIBLE_DEVICES": "0,1",
            "PORT": "8888",
            "OLD_PATH": "***unset***",
            "HF_HOME": "~/hf cache: big",
        }
    }
    env = env_from_history(conda_home, "2025", state=state)
    text = export_yaml(env, "no-builds")
    assert yaml.safe_load(text)["variables"] == {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "PORT": "8888",
        "HF_HOME": "~/hf cache: big",
    }
    # Where conda puts them: after the dependencies, before the prefix.
    keys = [line.split(":")[0] for line in text.splitlines() if not line.startswith(" ")]
    assert keys == ["name", "channels", "dependencies", "variables", "prefix"]


def test_pip_packages_go_in_a_pip_section(conda_home):
    env = env_from_history(conda_home, "2025")
    add_dist_info(
        Path(env.prefix, "lib", "python3.13t", "site-packages"), "requests", "2.32.3", "pip"
    )
    text = export_yaml(env, "no-builds")
    assert text.endswith(f"  - pip:\n      - requests==2.32.3\nprefix: {env.prefix}\n")
    assert "  - python=3.13.2\n" in text and "  - python_abi=3.13\n" in text


def test_a_venv_exports_its_python_and_pip_packages(conda_home, tmp_path):
    venv = tmp_path / "project" / ".venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    add_dist_info(site, "torch", "2.4.1", "pip")
    spec = {"argv": [str(venv / "bin" / "python")]}
    (env,) = discover_environments({"project": {"spec": spec}})
    assert yaml.safe_load(export_yaml(env, "no-builds"))["dependencies"] == [
        "python=3.11.7",
        "pip",
        {"pip": ["torch==2.4.1"]},
    ]
    with pytest.raises(UnsupportedExport):
        export_yaml(env, "from-history")


def test_conda_env_export_through_conda(fake_conda, tmp_path):
    text = asyncio.run(conda_env_export("conda", str(tmp_path), "no-builds", 10))
    assert text == EXPORT_WIN64
    assert fake_conda.calls() == [["env", "export", "--prefix", str(tmp_path), "--no-builds"]]


def test_conda_that_hangs_is_killed_at_the_timeout(fake_conda, tmp_path):
    fake_conda.hang()
    started = time.monotonic()
    with pytest.raises(CondaCommandError) as raised:
        asyncio.run(conda_env_export("conda", str(tmp_path), "from-history", 0.5))
    assert raised.value.kind == "timeout" and time.monotonic() - started < 5
    assert "GpuMonitor.conda_timeout" in raised.value.hint
    with pytest.raises(ProcessLookupError):
        os.kill(int(fake_conda.pidfile.read_text()), 0)


def test_conda_that_fails_says_why(fake_conda, tmp_path):
    fake_conda.fail("EnvironmentLocationNotFound: Not a conda environment: /nope\n")
    with pytest.raises(CondaCommandError) as raised:
        asyncio.run(conda_env_export("conda", "/nope", "no-builds", 10))
    assert raised.value.kind == "failed"
    assert raised.value.message.endswith(
        "exited with status 1: EnvironmentLocationNotFound: Not a conda environment: /nope"
    )


def test_conda_missing_from_path_is_not_installed(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(CondaCommandError) as raised:
        asyncio.run(conda_info("conda", 10))
    assert raised.value.kind == "not_installed"


def test_conda_info_gives_the_environments_conda_knows(fake_conda):
    info = asyncio.run(conda_info("conda", 10))
    assert info.root_prefix == "/Users/calebhattingh/anaconda"
    assert info.envs_dirs == ["/Users/calebhattingh/anaconda/envs"]
    assert len(info.envs) == 8 and info.envs[0] == "/Users/calebhattingh/anaconda/envs/django3"


def test_a_state_file_that_is_not_json_is_skipped_with_a_warning(conda_home, conda_warnings):
    env = env_from_history(conda_home, "2025")
    Path(env.prefix, "conda-meta", "state").write_text('{"env_vars": {"A": ')
    assert "variables" not in yaml.safe_load(export_yaml(env, "no-builds"))
    assert len(conda_warnings) == 1 and "ignored the variables of" in conda_warnings[0]


def test_the_installation_conda_version_comes_from_its_conda_record(conda_home):
    base, _ = base_from_the_win64_export(conda_home)
    assert installation_conda_version(base) == (4, 10, 3)


def with_conda(root: Path, version: str) -> None:
    """The root's conda record replaced by one of another version."""
    for record in (root / "conda-meta").glob("conda-4.10.3-*.json"):
        record.unlink()
    make_conda_env(root / "conda-meta-new", [Dist("conda", version, "py39_0")])
    for record in (root / "conda-meta-new" / "conda-meta").iterdir():
        record.rename(root / "conda-meta" / record.name)


@pytest.mark.parametrize(
    ("conda_version", "channels"),
    [
        # conda < 25.7 (env.py from_environment): each new channel inserted first, as met in
        # name order: anaconda-clean (defaults, configured) then anyio (conda-forge).
        ("4.10.3", ["conda-forge", "defaults"]),
        ("25.5.1", ["conda-forge", "defaults"]),
        # conda >= 25.7 (models/environment.py from_prefix): as met, then the configured.
        ("25.7.0", ["defaults", "conda-forge"]),
    ],
)
def test_channels_of_the_win64_records_in_the_order_of_each_conda(
    conda_home, conda_version, channels
):
    base, root = base_from_the_win64_export(conda_home)
    with_conda(root, conda_version)
    assert yaml.safe_load(export_yaml(base, "with-builds"))["channels"] == channels


@pytest.mark.parametrize(
    ("conda_version", "channels"),
    [("25.1.2", ["defaults", "conda-forge"]), ("25.7.0", ["conda-forge", "defaults"])],
)
def test_a_miniforge_env_with_one_defaults_package_lists_conda_forge_first_since_25_7(
    conda_home, conda_version, channels
):
    # Issue 26: conda-forge configured, one package from pkgs/main. conda 25.7 meets
    # conda-forge first (bzip2...) and keeps that order; older condas put defaults first.
    make_conda_env(conda_home / "miniforge3", [Dist("conda", conda_version, "py313_0")], root=True)
    (conda_home / "miniforge3" / ".condarc").write_text("channels:\n  - conda-forge\n")
    history = conda_capture(HISTORIES["2025"][0])
    dists = installed_by_history(history, "conda-forge", "osx-arm64")
    dists.append(Dist("pyyaml", "6.0.2", "py313h80987f9_0", channel="pkgs/main"))
    make_conda_env(conda_home / "miniforge3" / "envs" / "mixed", dists, history=history)
    env = environment("mixed")
    assert yaml.safe_load(export_yaml(env, "no-builds"))["channels"] == channels
    # --from-history lists the configured channels only, in every version.
    assert yaml.safe_load(export_yaml(env, "from-history"))["channels"] == ["conda-forge"]


def test_from_history_names_the_pip_packages_it_leaves_out(conda_home):
    env = env_from_history(conda_home, "2025")
    site = Path(env.prefix, "lib", "python3.13t", "site-packages")
    add_dist_info(site, "torch", "2.13.0+cpu", "pip")
    add_dist_info(site, "requests", "2.32.3", "uv")
    text = export_yaml(env, "from-history")
    assert text.startswith(
        "# pip packages not in conda's history, left out: requests==2.32.3, "
        "torch==2.13.0+cpu\nname: '2025'\n"
    )
    # Without pip packages, nothing is left out and nothing said.
    assert export_yaml(env_from_history(conda_home, "2016"), "from-history").startswith("name:")


def test_the_pip_section_names_the_index_of_each_torch_build(conda_home):
    env = env_from_history(conda_home, "2025")
    site = Path(env.prefix, "lib", "python3.13t", "site-packages")
    add_dist_info(site, "torch", "2.13.0+cu130", "pip")
    add_dist_info(site, "torchvision", "0.28.0+cu130", "pip")
    add_dist_info(site, "torchaudio", "2.13.0+cpu", "pip")
    add_dist_info(site, "requests", "2.32.3", "pip")
    pip = yaml.safe_load(export_yaml(env, "no-builds"))["dependencies"][-1]
    assert pip["pip"] == [
        "--extra-index-url https://download.pytorch.org/whl/cu130",
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "requests==2.32.3",
        "torch==2.13.0+cu130",
        "torchaudio==2.13.0+cpu",
        "torchvision==0.28.0+cu130",
    ]
    # requirements.txt of the same: the pip part, and a word on the conda part it leaves out.
    text = export_text(env, "requirements")
    assert text.splitlines()[0].startswith("# the 16 conda packages of ")
    assert text.splitlines()[1:] == pip["pip"]
