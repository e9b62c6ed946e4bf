"""One prefix read from disk: is it a conda environment or a venv, its name, its Python and
how many packages it holds, without opening a single package record (their file names say
``<name>-<version>-<build>.json``)."""

from __future__ import annotations

import json
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .history import creator, parse_history

log = logging.getLogger(__name__)

# Enough of conda-meta/history for its first "# cmd:" line, which names the tool that made it.
_HISTORY_HEAD_BYTES = 4096
# A history's first command names the tool that made the environment; installers and anything
# else count as conda.
_MANAGERS = {"mamba": "mamba", "micromamba": "micromamba"}


@dataclass(frozen=True)
class PrefixScan:
    """What one prefix holds, as cached between listings (see ``Environment``)."""

    prefix: str
    name: str
    kind: str
    manager: str
    python_version: str | None
    package_count: int
    modified: float | None


def split_dist(file_name: str) -> tuple[str, str, str] | None:
    """``python-dateutil-2.8.2-pyhd8ed1ab_0.json`` -> ``("python-dateutil", "2.8.2",
    "pyhd8ed1ab_0")``: conda names a record after its dist, and neither a version nor a build
    has a dash."""
    stem = file_name[:-5] if file_name.endswith(".json") else file_name
    parts = stem.rsplit("-", 2)
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 and all(parts) else None


def site_packages(prefix: str) -> list[Path]:
    """The site-packages folders of a prefix: ``lib/python3.X[t]/site-packages`` on Unix,
    ``Lib/site-packages`` on Windows; none when the path cannot even be looked at (a name
    longer than the file system takes)."""
    base = Path(prefix)
    try:
        found = sorted(base.glob("lib/python3*/site-packages"))
        windows = base / "Lib" / "site-packages"
        if windows.is_dir():
            found.append(windows)
    except OSError:
        return []
    return found


def read_pyvenv_cfg(prefix: str) -> dict[str, str]:
    """The ``key = value`` lines of ``pyvenv.cfg``, keys lowercased."""
    values = {}
    text = (Path(prefix) / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    for line in text.splitlines():
        key, equals, value = line.partition("=")
        if equals:
            values[key.strip().lower()] = value.strip()
    return values


def _mtime_ns(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return None


def fingerprint(prefix: str) -> tuple:
    """What must be unchanged for a cached scan to stand: the mtimes of conda-meta and its
    history (a venv's: of pyvenv.cfg and its site-packages). Raises OSError like ``scan``."""
    meta = os.path.join(prefix, "conda-meta")
    meta_mtime = _mtime_ns(meta)
    if meta_mtime is not None:
        return ("conda", meta_mtime, _mtime_ns(os.path.join(meta, "history")))
    folders = site_packages(prefix)
    return (
        "venv",
        _mtime_ns(os.path.join(prefix, "pyvenv.cfg")),
        _mtime_ns(str(folders[0])) if folders else None,
    )


def _conda_name(prefix: str, root: bool, meta: str) -> tuple[str, str | None]:
    """The name and, for pixi, the manager: ``base`` for a root; pixi names its environments
    after their workspace (the project folder), ``workspace:env`` for a non-default one, as
    its CONDA_DEFAULT_ENV does."""
    if root:
        return "base", None
    path = os.path.join(meta, "pixi")
    try:
        with open(path, encoding="utf-8") as handle:
            pixi = json.load(handle)
    except FileNotFoundError:
        return os.path.basename(prefix), None
    except (OSError, ValueError) as error:
        log.warning("%s is not pixi's JSON (%s): named after its folder", path, error)
        pixi = {}
    if not isinstance(pixi, dict):
        pixi = {}
    environment = str(pixi.get("environment_name") or os.path.basename(prefix))
    parts = Path(prefix).parts
    # <workspace>/.pixi/envs/<env>
    workspace = parts[-4] if len(parts) >= 4 and parts[-3:-1] == (".pixi", "envs") else None
    if workspace is None:
        return environment, "pixi"
    return (workspace if environment == "default" else f"{workspace}:{environment}"), "pixi"


def _scan_conda(prefix: str, root: bool) -> PrefixScan:
    meta = os.path.join(prefix, "conda-meta")
    records = [split_dist(name) for name in os.listdir(meta) if name.endswith(".json")]
    records = [record for record in records if record]
    python = next((version for name, version, _ in records if name == "python"), None)
    history = os.path.join(meta, "history")
    try:
        modified = os.stat(history).st_mtime
        with open(history, "rb") as handle:
            head = handle.read(_HISTORY_HEAD_BYTES).decode("utf-8", errors="replace")
    except FileNotFoundError:
        modified, head = os.stat(meta).st_mtime, ""
    name, manager = _conda_name(prefix, root, meta)
    if manager is None:
        manager = _MANAGERS.get(creator(parse_history(head)) or "", "conda")
    # A conda installation has condabin/ (conda) or envs/ (micromamba's root prefix).
    is_root = root or any(os.path.isdir(os.path.join(prefix, d)) for d in ("condabin", "envs"))
    return PrefixScan(
        prefix=prefix,
        name=name if not is_root else "base",
        kind="conda-root" if is_root else "conda-env",
        manager=manager,
        python_version=python,
        package_count=len(records),
        modified=modified,
    )


def _venv_name(prefix: str, prompt: str | None) -> str:
    """The prompt the venv was made with, else its folder's name; a hidden folder (``.venv``)
    is named after the project folder that holds it."""
    if prompt:
        return prompt.strip("'\"")
    path = Path(prefix)
    return path.parent.name if path.name.startswith(".") and path.parent.name else path.name


def _scan_venv(prefix: str) -> PrefixScan:
    config = read_pyvenv_cfg(prefix)
    manager = "uv" if "uv" in config else "virtualenv" if "virtualenv" in config else "venv"
    version = config.get("version_info") or config.get("version")
    if version:
        # virtualenv writes sys.version_info in full: 3.11.7.final.0.
        version = ".".join(version.split(".")[:3])
    count = 0
    for folder in site_packages(prefix):
        count += sum(1 for name in os.listdir(folder) if name.endswith(".dist-info"))
    return PrefixScan(
        prefix=prefix,
        name=_venv_name(prefix, config.get("prompt")),
        kind="venv",
        manager=manager,
        python_version=version or None,
        package_count=count,
        modified=None,
    )


def scan(prefix: str, root: bool = False) -> PrefixScan | None:
    """Read a prefix: a conda environment (``conda-meta/``; mamba, micromamba and pixi make the
    same) or a venv (``pyvenv.cfg``; venv, virtualenv, uv). None when it is neither.
    Raises FileNotFoundError when the prefix is gone, PermissionError when it cannot be read."""
    os.stat(prefix)
    try:
        meta = os.stat(os.path.join(prefix, "conda-meta"))
    except FileNotFoundError:
        meta = None
    if meta is not None and stat.S_ISDIR(meta.st_mode):
        return _scan_conda(prefix, root)
    try:
        os.stat(os.path.join(prefix, "pyvenv.cfg"))
    except FileNotFoundError:
        return None
    return _scan_venv(prefix)


def manager_of(prefix: str) -> str | None:
    """The tool that made the environment at ``prefix`` (see PrefixScan.manager); None when it
    is none, or cannot be read."""
    try:
        found = scan(prefix)
    except OSError:
        return None
    return found.manager if found is not None else None


@dataclass(frozen=True)
class Project:
    """The project whose tool manages an environment: a change to its packages belongs in the
    project, or the tool's next sync (``uv sync``, ``uv run``, ``pixi install``, ``pixi run``)
    undoes it."""

    tool: str  # "uv" or "pixi"
    # uv: the project's folder; pixi: the workspace's manifest (pixi.toml or pyproject.toml).
    path: str
    # pixi: the environment's name in the workspace ("default", "cuda"...).
    environment: str | None = None


def project_of(prefix: str) -> Project | None:
    """The uv project (``<project>/.venv`` beside a ``uv.lock``, or a ``pyproject.toml`` with a
    ``[tool.uv]`` table) or pixi workspace (``<workspace>/.pixi/envs/<name>``) whose
    environment ``prefix`` is; None otherwise."""
    folder = os.path.normpath(prefix)
    parts = Path(folder).parts
    if len(parts) >= 4 and parts[-3:-1] == (".pixi", "envs"):
        return _pixi_workspace(folder)
    project = os.path.dirname(folder)
    if os.path.basename(folder) != ".venv":
        return None
    if os.path.isfile(os.path.join(project, "uv.lock")) or _has_table(
        os.path.join(project, "pyproject.toml"), "[tool.uv"
    ):
        return Project("uv", project)
    return None


def _pixi_workspace(prefix: str) -> Project | None:
    """The manifest pixi's record names (``conda-meta/pixi``), else the workspace's own."""
    environment = os.path.basename(prefix)
    workspace = str(Path(prefix).parents[2])
    try:
        with open(os.path.join(prefix, "conda-meta", "pixi"), encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        record = {}
    if isinstance(record, dict):
        environment = str(record.get("environment_name") or environment)
        named = record.get("manifest_path")
        if isinstance(named, str) and os.path.isfile(named):
            return Project("pixi", named, environment)
    if os.path.isfile(os.path.join(workspace, "pixi.toml")):
        return Project("pixi", os.path.join(workspace, "pixi.toml"), environment)
    pyproject = os.path.join(workspace, "pyproject.toml")
    return Project("pixi", pyproject, environment) if _has_table(pyproject, "[tool.pixi") else None


def _has_table(toml_file: str, table: str) -> bool:
    try:
        with open(toml_file, encoding="utf-8") as handle:
            return table in handle.read(256 * 1024)
    except (OSError, UnicodeDecodeError):
        return False
