"""Where environments may be: conda roots, envs folders, ``~/.conda/environments.txt``, and the
prefixes a caller names. Nothing here opens an environment; ``prefix.py`` does that."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .condarc import load_settings

# Where the installers put a conda root when nothing else says where it is.
SYSTEM_CONDA_ROOTS = (
    "/opt/conda",
    "/opt/miniconda3",
    "/opt/anaconda3",
    "/opt/miniforge3",
    "/opt/mambaforge",
    "/usr/local/miniconda3",
    "/usr/local/anaconda3",
    "/usr/share/miniconda",
)
HOME_CONDA_ROOTS = (
    "miniconda3",
    "anaconda3",
    "miniforge3",
    "mambaforge",
    "micromamba",
    ".local/share/mamba",
    "opt/miniconda3",
    "opt/anaconda3",
)


@dataclass(frozen=True)
class Candidate:
    """A folder that may be an environment. ``listed``: something named it on purpose
    (environments.txt, a kernelspec, conda itself), so its absence is worth a warning; a
    folder met while listing an envs folder is not. ``root``: a conda root ("base")."""

    prefix: str
    origin: str
    listed: bool = True
    root: bool = False


@dataclass
class Search:
    """The candidates of one discovery, and what could not be read."""

    candidates: list[Candidate] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def normal_path(path: str) -> str:
    """An absolute path with ``~`` and variables expanded, as written (symlinks kept: a venv's
    ``bin/python`` is a symlink to another Python, and resolving it would leave the venv)."""
    return os.path.normpath(os.path.abspath(os.path.expandvars(os.path.expanduser(path))))


def _root_of_program(program: str) -> str | None:
    """``<root>/bin/conda`` or ``<root>\\Scripts\\conda.exe`` (also python) -> ``<root>``."""
    folder = Path(program).parent
    if folder.name.lower() in ("bin", "scripts", "condabin"):
        return str(folder.parent)
    return None


def conda_roots() -> list[str]:
    """The conda installations (base environments) on this machine that exist: the one the
    variables of an activated conda name, micromamba's root, then the usual install places."""
    environ = os.environ
    named: list[str | None] = [
        _root_of_program(environ["CONDA_EXE"]) if environ.get("CONDA_EXE") else None,
        _root_of_program(environ["CONDA_PYTHON_EXE"]) if environ.get("CONDA_PYTHON_EXE") else None,
        environ.get("CONDA_ROOT"),
        environ.get("MAMBA_ROOT_PREFIX"),
    ]
    active = environ.get("CONDA_PREFIX")
    if active:
        # An activated env under <root>/envs, or the root itself.
        parent = Path(active).parent
        named.append(str(parent.parent) if parent.name == "envs" else active)
    home = Path.home()
    named += [str(home / place) for place in HOME_CONDA_ROOTS]
    named += list(SYSTEM_CONDA_ROOTS)
    roots = [normal_path(root) for root in named if root]
    return [root for root in dict.fromkeys(roots) if os.path.isdir(root)]


def _envs_dirs(roots: Sequence[str], configured: Iterable[str], extra: Iterable[str]) -> list[str]:
    home = Path.home()
    pixi_home = os.environ.get("PIXI_HOME") or str(home / ".pixi")
    folders = [
        *configured,
        *(os.path.join(root, "envs") for root in roots),
        str(home / ".conda" / "envs"),
        os.path.join(pixi_home, "envs"),
        *extra,
    ]
    return list(dict.fromkeys(normal_path(folder) for folder in folders))


def environments_txt() -> Path:
    """The file where conda, mamba and micromamba register every environment they create."""
    return Path.home() / ".conda" / "environments.txt"


def search(extra_envs_dirs: Iterable[str] = (), extra: Iterable[Candidate] = ()) -> Search:
    """Every candidate, one per folder however many ways lead to it: conda roots, the
    prefixes of ``~/.conda/environments.txt``, the folders in every envs folder (``envs_dirs``
    of the .condarc files and variables, ``<root>/envs``, ``~/.conda/envs``, pixi's global
    envs, and ``extra_envs_dirs``), then the ``extra`` candidates."""
    roots = conda_roots()
    settings = load_settings(roots)
    found = Search(problems=list(settings.problems))
    candidates = [Candidate(root, "a conda root", listed=False, root=True) for root in roots]
    registry = environments_txt()
    try:
        lines = registry.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        lines = []
    except OSError as error:
        found.problems.append(f"cannot read {registry}: {error.strerror}")
        lines = []
    candidates += [Candidate(line.strip(), str(registry)) for line in lines if line.strip()]
    for folder in _envs_dirs(roots, settings.envs_dirs, extra_envs_dirs):
        try:
            with os.scandir(folder) as entries:
                names = sorted(entry.name for entry in entries if not entry.name.startswith("."))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as error:
            found.problems.append(f"cannot list the envs folder {folder}: {error.strerror}")
            continue
        where = f"the envs folder {folder}"
        candidates += [Candidate(os.path.join(folder, n), where, listed=False) for n in names]
    candidates += extra
    # One candidate per folder, however many ways lead to it (symlinks included); the first
    # way names it.
    seen: dict[str, Candidate] = {}
    for candidate in candidates:
        prefix = normal_path(candidate.prefix)
        seen.setdefault(
            os.path.realpath(prefix),
            Candidate(prefix, candidate.origin, candidate.listed, candidate.root),
        )
    found.candidates = list(seen.values())
    return found
