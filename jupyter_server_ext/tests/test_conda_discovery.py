"""Environment discovery over layouts built in a temp dir from the real conda fixtures."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import uv
from jupyterlab_gpu_monitor.conda.discovery import (
    discover_environments,
    environment_of,
    find_environment,
)
from jupyterlab_gpu_monitor.conda.errors import AmbiguousEnvironment, EnvironmentNotFound
from jupyterlab_gpu_monitor.conda.kernelspecs import prefix_of_executable

from .conda_layouts import (
    BASE_2021,
    HISTORY_2025,
    add_dist_info,
    conda_capture,
    env_2025,
    installed_by_history,
    make_conda_env,
)

HISTORY_2016 = conda_capture("conda-meta-history-2016-conda-3.19-self-update.txt")


def root_2021(prefix: Path) -> Path:
    """A conda root holding the 34 packages of the 2021 ``conda list --json`` (pkgs/main)."""
    return make_conda_env(prefix, BASE_2021, history=HISTORY_2016, root=True)


def by_prefix(environments) -> dict[str, object]:
    return {environment.prefix: environment for environment in environments}


def kernelspec(*argv: str, **metadata) -> dict:
    return {"resource_dir": "/nowhere", "spec": {"argv": list(argv), "metadata": metadata}}


def test_environments_txt_lists_what_exists_and_warns_about_the_deleted(conda_home, conda_warnings):
    # The real 3-line environments.txt of a Linux build machine, its home moved into ours.
    text = conda_capture("environments-txt-linux-3-entries.txt").replace(
        "/home/buildadm", str(conda_home)
    )
    (conda_home / ".conda").mkdir()
    (conda_home / ".conda" / "environments.txt").write_text(text)
    root = conda_home / "miniconda" / "3" / "amd64"
    root_2021(root)
    env_2025(root / "envs" / "devops")  # "navigator" was deleted

    environments = by_prefix(discover_environments())

    assert set(environments) == {str(root), str(root / "envs" / "devops")}
    base, devops = environments[str(root)], environments[str(root / "envs" / "devops")]
    assert (base.name, base.kind, base.python_version, base.package_count) == (
        "base",
        "conda-root",
        "3.9.5",
        34,
    )
    assert (devops.name, devops.kind, devops.python_version, devops.package_count) == (
        "devops",
        "conda-env",
        "3.13.2",
        16,
    )
    assert devops.modified == os.stat(root / "envs/devops/conda-meta/history").st_mtime
    assert [w for w in conda_warnings if "navigator" in w] == [
        f"skipped {root}/envs/navigator (from {conda_home}/.conda/environments.txt): "
        "it no longer exists"
    ]


def test_twenty_two_entries_most_of_them_gone(conda_home, conda_warnings):
    # The real 22-line environments.txt of a Mac with miniconda, pyenv-installed conda
    # distributions, miniforge and prefix environments; four of its prefixes exist here.
    text = conda_capture("environments-txt-macos-22-entries-anonymized.txt")
    (conda_home / ".conda").mkdir()
    (conda_home / ".conda" / "environments.txt").write_text(
        text.replace("/Users/username", str(conda_home))
    )
    root_2021(conda_home / "miniconda3")
    env_2025(conda_home / "miniconda3" / "envs" / "xyz")
    root_2021(conda_home / ".pyenv/versions/miniforge3-4.10.1-1")
    env_2025(conda_home / "temp" / "conda_work_folder")

    environments = discover_environments()

    names = {
        environment.prefix.replace(str(conda_home), "~"): environment
        for environment in environments
    }
    assert sorted(names) == [
        "~/.pyenv/versions/miniforge3-4.10.1-1",
        "~/miniconda3",
        "~/miniconda3/envs/xyz",
        "~/temp/conda_work_folder",
    ]
    assert names["~/temp/conda_work_folder"].name == "conda_work_folder"
    assert names["~/temp/conda_work_folder"].kind == "conda-env"
    # Two roots are both "base": their ids tell them apart, and neither is a path.
    roots = [names["~/miniconda3"], names["~/.pyenv/versions/miniforge3-4.10.1-1"]]
    assert [root.name for root in roots] == ["base", "base"]
    assert len({root.id for root in roots}) == 2
    assert all(root.id.startswith("base-") and "/" not in root.id for root in roots)
    assert names["~/miniconda3/envs/xyz"].id == "xyz"
    gone = [w for w in conda_warnings if w.endswith("it no longer exists")]
    assert len(gone) == 18


def test_warnings_are_logged_once_while_the_problem_lasts(conda_home, conda_warnings):
    (conda_home / ".conda").mkdir()
    registry = conda_home / ".conda" / "environments.txt"
    registry.write_text(f"{conda_home}/gone\n")
    for _ in range(3):
        discover_environments()
    assert len(conda_warnings) == 1
    registry.write_text("")
    discover_environments()
    registry.write_text(f"{conda_home}/gone\n")
    discover_environments()
    assert len(conda_warnings) == 2


def test_condarc_envs_dirs_with_home_and_variables(conda_home, conda_warnings, monkeypatch):
    monkeypatch.setenv("TEAM", str(conda_home / "team"))
    (conda_home / ".condarc").write_text("envs_dirs:\n  - ~/my-envs\n  - $TEAM/envs\n")
    env_2025(conda_home / "my-envs" / "mine")
    env_2025(conda_home / "team" / "envs" / "shared")
    (conda_home / "team" / "envs" / "not-an-env").mkdir()

    names = {environment.name for environment in discover_environments()}

    assert names == {"mine", "shared"}
    # A folder in an envs folder that is no environment is not worth a warning.
    assert conda_warnings == []


def test_condarc_that_is_not_yaml_is_skipped_with_a_warning(conda_home, conda_warnings):
    (conda_home / ".conda").mkdir()
    (conda_home / ".conda" / "condarc").write_text("envs_dirs: [~/a\n")
    env_2025(conda_home / ".conda" / "envs" / "still-found")
    assert [e.name for e in discover_environments()] == ["still-found"]
    assert len(conda_warnings) == 1
    assert conda_warnings[0].startswith(f"cannot read {conda_home}/.conda/condarc")


def test_conda_envs_path_variable_lists_several_folders(conda_home, monkeypatch):
    first, second = conda_home / "a", conda_home / "b"
    env_2025(first / "one")
    env_2025(second / "two")
    monkeypatch.setenv("CONDA_ENVS_PATH", f"{first}{os.pathsep}{second}")
    assert {e.name for e in discover_environments()} == {"one", "two"}


def test_conda_root_found_through_conda_exe_with_its_envs(conda_home, monkeypatch):
    root = conda_home / "tools" / "forge"
    root_2021(root)
    env_2025(root / "envs" / "train")
    monkeypatch.setenv("CONDA_EXE", str(root / "bin" / "conda"))
    environments = by_prefix(discover_environments())
    assert environments[str(root)].kind == "conda-root"
    assert environments[str(root / "envs" / "train")].name == "train"


def test_conda_root_in_a_usual_install_place(conda_home):
    root_2021(conda_home / "miniforge3")
    env_2025(conda_home / "miniforge3" / "envs" / "cuda")
    assert {(e.name, e.kind) for e in discover_environments()} == {
        ("base", "conda-root"),
        ("cuda", "conda-env"),
    }


def test_mamba_and_micromamba_environments_are_conda_environments(conda_home, monkeypatch):
    # micromamba's root prefix holds envs/ and, until something is installed into base, no
    # conda-meta: it is searched, not listed. The histories are the real 2025 one, run by the
    # other tools.
    root = conda_home / "micromamba-root"
    (root / "envs").mkdir(parents=True)
    monkeypatch.setenv("MAMBA_ROOT_PREFIX", str(root))
    program = "/Users/jhelmus/workspace/conda/devenv/Darwin/arm64/envs/devenv-3.10-c/bin/conda"
    env_2025(root / "envs" / "micro", HISTORY_2025.replace(program, "/usr/local/bin/micromamba"))
    env_2025(root / "envs" / "mam", HISTORY_2025.replace(program, "/opt/forge/bin/mamba"))
    env_2025(root / "envs" / "plain")
    managers = {e.name: (e.manager, e.kind) for e in discover_environments()}
    assert managers == {
        "micro": ("micromamba", "conda-env"),
        "mam": ("mamba", "conda-env"),
        "plain": ("conda", "conda-env"),
    }


def test_pixi_environments_are_named_after_their_workspace(conda_home):
    # pixi keeps a workspace's environments in <workspace>/.pixi/envs/<name>, with no history
    # and a conda-meta/pixi file saying which manifest made them.
    workspace = conda_home / "projects" / "segmenter"
    dists = installed_by_history(HISTORY_2025, "conda-forge", "linux-64")
    for name in ("default", "cuda"):
        make_conda_env(
            workspace / ".pixi" / "envs" / name,
            dists,
            pixi={
                "manifest_path": str(workspace / "pixi.toml"),
                "environment_name": name,
                "pixi_version": "0.40.0",
            },
        )
    specs = {
        "segmenter": kernelspec(
            str(workspace / ".pixi/envs/default/bin/python"), "-m", "ipykernel_launcher"
        )
    }
    found = discover_environments(specs, extra_envs_dirs=[str(workspace / ".pixi" / "envs")])
    environments = {e.name: e for e in found}
    assert set(environments) == {"segmenter", "segmenter:cuda"}
    default = environments["segmenter"]
    assert (default.manager, default.kind, default.kernelspecs) == (
        "pixi",
        "conda-env",
        ("segmenter",),
    )
    assert default.id == "segmenter"
    assert environments["segmenter:cuda"].id.startswith("segmenter-cuda-")
    assert default.modified == os.stat(workspace / ".pixi/envs/default/conda-meta").st_mtime


def test_venvs_are_listed_when_a_kernelspec_launches_them(conda_home, tmp_path):
    plain = tmp_path / "work" / "plain-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(plain)], check=True)
    project = tmp_path / "work" / "uv-project"
    subprocess.run(
        [uv.find_uv_bin(), "venv", "--quiet", "--python", sys.executable, str(project / ".venv")],
        check=True,
        env={**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_CACHE_DIR": str(tmp_path / "uv")},
    )
    add_dist_info(
        next((project / ".venv").glob("lib/python3*/site-packages")), "six", "1.16.0", "uv"
    )
    orphan = tmp_path / "work" / "no-kernel"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(orphan)], check=True)
    specs = {
        "plain": kernelspec(str(plain / "bin" / "python"), "-m", "ipykernel_launcher"),
        "uv": kernelspec(str(project / ".venv" / "bin" / "python3"), "-m", "ipykernel_launcher"),
    }

    environments = {e.prefix: e for e in discover_environments(specs)}

    version = ".".join(map(str, sys.version_info[:3]))
    made_by_venv = environments[str(plain)]
    assert (made_by_venv.name, made_by_venv.kind, made_by_venv.manager) == (
        "plain-venv",
        "venv",
        "venv",
    )
    assert (made_by_venv.python_version, made_by_venv.kernelspecs, made_by_venv.modified) == (
        version,
        ("plain",),
        None,
    )
    made_by_uv = environments[str(project / ".venv")]
    # A hidden .venv is named after its project.
    assert (made_by_uv.name, made_by_uv.manager, made_by_uv.python_version) == (
        "uv-project",
        "uv",
        version,
    )
    assert made_by_uv.package_count == 1
    assert str(orphan) not in environments


def test_kernelspec_named_python_is_the_servers_own(conda_home):
    # jupyter_client starts argv[0] "python" with the server's interpreter.
    specs = {"python3": kernelspec("python", "-m", "ipykernel_launcher", "-f", "{connection_file}")}
    own = prefix_of_executable(sys.executable)
    found = {e.prefix: e for e in discover_environments(specs)}
    assert own is not None and found[own].kernelspecs == ("python3",)


def test_conda_run_and_nb_conda_kernels_kernelspecs_name_their_environment(conda_home):
    root = conda_home / "miniconda3"
    root_2021(root)
    env_2025(root / "envs" / "devops")
    env_2025(root / "envs" / "r-env")
    specs = {
        "devops": kernelspec(
            str(root / "bin" / "conda"), "run", "-n", "devops", "python", "-m", "ipykernel_launcher"
        ),
        "conda-env-r-env-r": kernelspec(
            "python", "-m", "nb_conda_kernels.runner", conda_env_path=str(root / "envs" / "r-env")
        ),
        "by-prefix": kernelspec(
            "conda", "run", "--prefix", str(root / "envs" / "devops"), "python"
        ),
    }
    kernels = {e.name: e.kernelspecs for e in discover_environments(specs)}
    assert kernels["devops"] == ("by-prefix", "devops")
    assert kernels["r-env"] == ("conda-env-r-env-r",)


def test_an_unreadable_environment_is_skipped_with_a_warning(conda_home, tmp_path):
    # chmod 000 stops everyone but root; as root, the discovery runs in a child whose root has
    # lost the capabilities that bypass file permissions (setpriv, util-linux).
    root = conda_home / "miniconda3"
    root_2021(root)
    env_2025(root / "envs" / "open")
    locked = env_2025(root / "envs" / "locked")
    locked.chmod(0)
    script = (
        "import json, logging, sys\n"
        "logging.basicConfig(format='%(message)s')\n"
        "from jupyterlab_gpu_monitor.conda import discovery, locations, condarc\n"
        "locations.SYSTEM_CONDA_ROOTS = condarc.SYSTEM_CONDARC_DIRS = ()\n"
        "print(json.dumps([e.name for e in discovery.discover_environments()]))\n"
    )
    command = [sys.executable, "-c", script]
    if os.geteuid() == 0:
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    finally:
        locked.chmod(0o755)
    assert sorted(json.loads(result.stdout)) == ["base", "open"]
    assert (
        f"skipped {locked} (from the envs folder {root}/envs): permission denied" in result.stderr
    )


def test_a_listing_is_reused_until_conda_meta_or_history_changes(conda_home):
    root = conda_home / "miniconda3"
    root_2021(root)
    env = env_2025(root / "envs" / "train")
    meta = env / "conda-meta"

    def count() -> int:
        return {e.name: e.package_count for e in discover_environments()}["train"]

    assert count() == 16
    before = os.stat(meta)
    shutil.copy(meta / "pip-25.0.1-pyh145f28c_0.json", meta / "numpy-2.2.3-py313h0b4a0b1_0.json")
    # conda-meta's mtime put back: the cached listing stands, though a record was added.
    os.utime(meta, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert count() == 16
    # A conda transaction appends to the history: the environment is read again.
    with open(meta / "history", "a") as history:
        history.write(
            "==> 2025-03-15 10:00:00 <==\n+conda-forge/osx-arm64::numpy-2.2.3-py313h0b4a0b1_0\n"
        )
    assert count() == 17
    # An install that leaves the history alone still changes conda-meta.
    (meta / "pip-25.0.1-pyh145f28c_0.json").unlink()
    assert count() == 16


def test_find_by_id_or_name_never_by_path(conda_home):
    root_2021(conda_home / "miniconda3")
    root_2021(conda_home / "anaconda3")
    env_2025(conda_home / "miniconda3" / "envs" / "devops")
    environments = discover_environments()
    assert find_environment(environments, "devops").prefix == str(
        conda_home / "miniconda3/envs/devops"
    )
    bases = [e for e in environments if e.name == "base"]
    assert find_environment(environments, bases[1].id) == bases[1]
    with pytest.raises(AmbiguousEnvironment) as ambiguous:
        find_environment(environments, "base")
    assert sorted(ambiguous.value.ids) == sorted(e.id for e in bases)
    for key in (str(conda_home / "miniconda3/envs/devops"), "../devops", "/etc"):
        with pytest.raises(EnvironmentNotFound):
            find_environment(environments, key)


def test_environment_of_a_kernels_prefix_has_the_listings_id(conda_home, tmp_path):
    env = env_2025(conda_home / "miniconda3" / "envs" / "devops")
    root_2021(conda_home / "miniconda3")
    listed = find_environment(discover_environments(), "devops")
    # A symlinked spelling of the same prefix, as /proc/<pid>/environ may give it.
    (tmp_path / "link").symlink_to(conda_home / "miniconda3")
    assert environment_of(str(tmp_path / "link" / "envs" / "devops")) == listed
    assert environment_of(str(env / "bin" / "..")) == listed
    system = tmp_path / "usr"
    (system / "bin").mkdir(parents=True)
    assert environment_of(str(system)) is None


def test_prefix_of_executable_walks_up_to_the_environment(conda_home):
    env = env_2025(conda_home / "envs" / "r")
    assert prefix_of_executable(str(env / "bin" / "python3.13")) == str(env)
    assert prefix_of_executable(str(env / "lib" / "R" / "bin" / "R")) == str(env)
    assert prefix_of_executable("/usr/bin/python3") is None


def test_a_pixi_file_that_is_not_json_costs_only_the_name(conda_home, conda_warnings):
    env = env_2025(conda_home / "work" / ".pixi" / "envs" / "gpu")
    (env / "conda-meta" / "pixi").write_text('{"manifest_path": ')
    (found,) = discover_environments(extra_envs_dirs=[str(conda_home / "work" / ".pixi" / "envs")])
    # The environment is named after its folder, within its workspace.
    assert (found.name, found.manager, found.package_count) == ("work:gpu", "pixi", 16)
    assert len(conda_warnings) == 1 and "is not pixi's JSON" in conda_warnings[0]
