"""requirements.txt and pylock.toml of real venvs, made with ``python -m venv`` + pip and with
uv from small wheels served on loopback: a PyPI-like index and a PyTorch-like index per build
(``/whl/cpu``), as download.pytorch.org lays them out. The exported file is installed into a
fresh venv with pip and with uv, and the fresh venv must hold every distribution, version and
source the first one held.

pip and uv run with their configuration files and variables set aside, so that nothing but
the loopback index serves them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from jupyterlab_gpu_monitor.conda.discovery import discover_environments
from jupyterlab_gpu_monitor.conda.distributions import python_distributions
from jupyterlab_gpu_monitor.conda.export import export_text
from jupyterlab_gpu_monitor.conda.pip_files import requirement_line

from .local_index import build_wheel, isolated_environment, served

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = pytest.importorskip("tomli")

UV = shutil.which("uv", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
needs_uv = pytest.mark.skipif(UV is None, reason="uv is not installed")


@dataclass(frozen=True)
class Index:
    """The loopback server: ``simple`` a PyPI-like index, ``pytorch`` the base of the
    per-build indexes (``pytorch/cpu``), ``files`` wheels installed by URL."""

    url: str

    @property
    def simple(self) -> str:
        return f"{self.url}/simple"

    @property
    def pytorch(self) -> str:
        return f"{self.url}/whl"

    def file(self, name: str) -> str:
        return f"{self.url}/files/{name}"


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Iterator[Index]:
    """A folder of wheels behind ``http.server``, whose directory listings are the simple
    index pages pip and uv read: ``/simple/<project>/`` and ``/whl/cpu/<project>/``. pip and
    setuptools are the wheels ``ensurepip`` bundles, for the venvs that uv makes without them."""
    root = tmp_path_factory.mktemp("index")
    build_wheel(root / "whl" / "cpu" / "torch", "torch", "2.13.0+cpu", ("tinyhelper>=1",))
    build_wheel(root / "simple" / "tinyhelper", "tinyhelper", "1.2.0")
    build_wheel(root / "simple" / "unrelated", "unrelated", "0.1")
    build_wheel(root / "files", "urlpkg", "0.3")
    import ensurepip

    bundled = Path(ensurepip.__file__).with_name("_bundled")
    for bundled_wheel in bundled.glob("*.whl"):
        project = bundled_wheel.name.split("-")[0]
        (root / "simple" / project).mkdir(parents=True, exist_ok=True)
        shutil.copy(bundled_wheel, root / "simple" / project)

    with served(root) as url:
        yield Index(url)


@pytest.fixture
def isolated(tmp_path) -> dict[str, str]:
    """The environment pip and uv run in (see local_index.isolated_environment)."""
    return isolated_environment(tmp_path)


def call(environ: dict[str, str], *argv: str) -> str:
    result = subprocess.run(argv, env=environ, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{argv}: {result.stdout}{result.stderr}"
    return result.stdout


def pip_venv(environ: dict[str, str], prefix: Path) -> Path:
    call(environ, sys.executable, "-m", "venv", str(prefix))
    return prefix / "bin" / "python"


def uv_venv(environ: dict[str, str], prefix: Path) -> Path:
    assert UV is not None
    call(environ, UV, "venv", "--quiet", "--python", sys.executable, str(prefix))
    return prefix / "bin" / "python"


def pip_install(environ: dict[str, str], python: Path, index: Index, *args: str) -> None:
    call(
        environ, str(python), "-m", "pip", "install", "--quiet", "--index-url", index.simple, *args
    )


def uv_install(environ: dict[str, str], python: Path, index: Index, *args: str) -> None:
    assert UV is not None
    call(
        environ,
        UV,
        "pip",
        "install",
        "--quiet",
        "--python",
        str(python),
        "--index-url",
        index.simple,
        *args,
    )


def contents(prefix: Path) -> dict[str, tuple[str, str | None]]:
    """name -> (version, the URL direct_url.json records, if any), as the records say."""
    return {
        d.name.lower(): (d.version, (d.direct_url or {}).get("url"))
        for d in python_distributions(str(prefix))
    }


def as_environment(prefix: Path):
    (found,) = discover_environments({"env": {"spec": {"argv": [str(prefix / "bin" / "python")]}}})
    return found


@pytest.fixture
def pip_made(tmp_path, index, isolated) -> Path:
    """A venv made by ``python -m venv`` and pip: torch's CPU build from the PyTorch-like
    index (with its dependency from the PyPI-like one), and a wheel installed by URL."""
    prefix = tmp_path / "made-by-pip"
    python = pip_venv(isolated, prefix)
    pip_install(
        isolated,
        python,
        index,
        "--extra-index-url",
        f"{index.pytorch}/cpu",
        "torch==2.13.0+cpu",
        index.file("urlpkg-0.3-py3-none-any.whl"),
    )
    return prefix


def test_requirements_of_a_pip_venv_name_the_index_of_the_torch_build(pip_made, index):
    text = export_text(as_environment(pip_made), "requirements", index.pytorch)
    lines = text.splitlines()
    assert lines[0] == f"--extra-index-url {index.pytorch}/cpu"
    assert "torch==2.13.0+cpu" in lines and "tinyhelper==1.2.0" in lines
    # pip records the archive's hash when it downloads from a URL: the line pins it.
    (url_line,) = [line for line in lines if line.startswith("urlpkg")]
    assert url_line.startswith(f"urlpkg @ {index.file('urlpkg-0.3-py3-none-any.whl')}#sha256=")


@pytest.mark.parametrize("installer", ["pip", pytest.param("uv", marks=needs_uv)])
def test_requirements_of_a_pip_venv_rebuild_it(pip_made, index, isolated, tmp_path, installer):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(export_text(as_environment(pip_made), "requirements", index.pytorch))
    copy = tmp_path / f"copy-by-{installer}"
    if installer == "pip":
        python = pip_venv(isolated, copy)
        pip_install(isolated, python, index, "-r", str(requirements))
    else:
        python = uv_venv(isolated, copy)
        uv_install(isolated, python, index, "-r", str(requirements))
    assert contents(copy) == contents(pip_made)


@needs_uv
def test_requirements_of_a_uv_venv_rebuild_it_with_uv_pip_sync_and_with_pip(
    index, isolated, tmp_path
):
    made = tmp_path / "made-by-uv"
    python = uv_venv(isolated, made)
    uv_install(
        isolated, python, index, "--extra-index-url", f"{index.pytorch}/cpu", "torch==2.13.0+cpu"
    )
    before = contents(made)
    assert before == {"tinyhelper": ("1.2.0", None), "torch": ("2.13.0+cpu", None)}
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(export_text(as_environment(made), "requirements", index.pytorch))
    synced = tmp_path / "synced"
    python = uv_venv(isolated, synced)
    call(
        isolated,
        UV,
        "pip",
        "sync",
        "--quiet",
        "--python",
        str(python),
        "--index-url",
        index.simple,
        str(requirements),
    )
    assert contents(synced) == before
    with_pip = tmp_path / "with-pip"
    python = pip_venv(isolated, with_pip)
    pip_install(isolated, python, index, "-r", str(requirements))
    after = contents(with_pip)
    # pip's venv starts with pip and setuptools, which the uv venv never had.
    assert {name: after[name] for name in before} == before


# The keys PEP 751 gives a lock file and a [[packages]] entry, and which sources exclude which.
_LOCK_KEYS = {
    "lock-version",
    "environments",
    "requires-python",
    "extras",
    "dependency-groups",
    "default-groups",
    "created-by",
    "packages",
    "tool",
}
_PACKAGE_KEYS = {
    "name",
    "version",
    "marker",
    "requires-python",
    "dependencies",
    "index",
    "vcs",
    "directory",
    "archive",
    "sdist",
    "wheels",
    "attestation-identities",
    "tool",
}
_SOURCES = {"vcs", "directory", "archive", "sdist", "wheels"}


def check_pylock(text: str) -> dict:
    """pylock.toml against PEP 751's structure: the required keys, their types, one source at
    most per package, packages named as PEP 503 normalizes them, hashes where an archive is."""
    lock = tomllib.loads(text)
    assert set(lock) <= _LOCK_KEYS
    assert lock["lock-version"] == "1.0" and isinstance(lock["created-by"], str)
    for package in lock["packages"]:
        assert set(package) <= _PACKAGE_KEYS
        assert package["name"] == package["name"].lower().replace("_", "-")
        assert len(_SOURCES & set(package)) <= 1
        if "archive" in package:
            assert set(package["archive"]) <= {
                "url",
                "path",
                "size",
                "upload-time",
                "hashes",
                "subdirectory",
            }
        if "vcs" in package:
            assert {"type", "commit-id"} <= set(package["vcs"])
        if "directory" in package:
            assert "path" in package["directory"]
    return lock


def test_pylock_of_a_pip_venv_follows_pep_751(pip_made, index):
    lock = check_pylock(export_text(as_environment(pip_made), "pylock", index.pytorch))
    assert lock["requires-python"] == f"==3.{sys.version_info.minor}.*"
    by_name = {package["name"]: package for package in lock["packages"]}
    assert set(by_name) == set(contents(pip_made))
    assert by_name["torch"] == {
        "name": "torch",
        "version": "2.13.0+cpu",
        "requires-python": ">=3.9",
        "index": f"{index.pytorch}/cpu",
    }
    assert "index" not in by_name["tinyhelper"] and "wheels" not in by_name["tinyhelper"]
    archive = by_name["urlpkg"]["archive"]
    assert archive["url"] == index.file("urlpkg-0.3-py3-none-any.whl")
    assert set(archive["hashes"]) == {"sha256"}


@needs_uv
def test_pylock_of_urls_rebuilds_the_venv_with_uv(index, isolated, tmp_path):
    # Every package installed by URL: pip records each archive's hash, so the lock names every
    # archive with its hash, which is what uv needs to install from a pylock.toml.
    made = tmp_path / "by-url"
    call(isolated, sys.executable, "-m", "venv", "--without-pip", str(made))
    call(
        isolated,
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(made / "bin" / "python"),
        "install",
        "--quiet",
        "--no-deps",
        index.file("urlpkg-0.3-py3-none-any.whl"),
        f"{index.simple}/tinyhelper/tinyhelper-1.2.0-py3-none-any.whl",
    )
    pylock = tmp_path / "pylock.toml"
    pylock.write_text(export_text(as_environment(made), "pylock", index.pytorch))
    check_pylock(pylock.read_text())
    copy = tmp_path / "from-pylock"
    python = uv_venv(isolated, copy)
    call(isolated, UV, "pip", "install", "--quiet", "--python", str(python), "-r", str(pylock))
    assert contents(copy) == contents(made)


def direct_url_dist(site: Path, name: str, version: str, direct_url: dict) -> None:
    folder = site / f"{name}-{version}.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (folder / "INSTALLER").write_text("pip\n")
    (folder / "direct_url.json").write_text(json.dumps(direct_url))


def test_vcs_and_editable_installs_are_written_as_their_source(tmp_path):
    # direct_url.json as PEP 610 gives them for a git install and an editable folder.
    prefix = tmp_path / "venv"
    site = prefix / "lib" / "python3.11" / "site-packages"
    (prefix / "pyvenv.cfg").parent.mkdir(parents=True, exist_ok=True)
    (prefix / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    direct_url_dist(
        site,
        "gitpkg",
        "0.1.dev3",
        {
            "url": "https://github.com/example/gitpkg.git",
            "vcs_info": {"vcs": "git", "commit_id": "7a1c", "requested_revision": "main"},
            "subdirectory": "python",
        },
    )
    direct_url_dist(
        site, "mine", "1.0", {"url": "file:///home/me/mine", "dir_info": {"editable": True}}
    )
    found = python_distributions(str(prefix))
    assert [requirement_line(d) for d in found] == [
        "gitpkg @ git+https://github.com/example/gitpkg.git@7a1c#subdirectory=python",
        "-e file:///home/me/mine",
    ]
    lock = check_pylock(export_text(as_environment(prefix), "pylock"))
    assert lock["packages"][0]["vcs"] == {
        "type": "git",
        "url": "https://github.com/example/gitpkg.git",
        "requested-revision": "main",
        "commit-id": "7a1c",
        "subdirectory": "python",
    }
    assert lock["packages"][1]["directory"] == {"path": "/home/me/mine", "editable": True}
