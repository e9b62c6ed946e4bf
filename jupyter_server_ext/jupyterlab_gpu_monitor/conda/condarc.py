"""conda's own settings that tell where environments live and which channels are configured,
read from the same .condarc files and variables conda reads, in conda's order of precedence."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

# conda's search path starts in these system folders (conda/base/constants.py SEARCH_PATH).
SYSTEM_CONDARC_DIRS = ("/etc/conda", "/var/lib/conda")

# The C loader when PyYAML was built with libyaml: a listing reads these files at each request.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class CondaSettings:
    """``envs_dirs`` and ``channels`` merged over every .condarc, highest precedence first, and
    the files that could not be read (``problems``: one sentence each)."""

    envs_dirs: list[str] = field(default_factory=list)
    channels: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _folder(path: Path) -> list[Path]:
    return [path / ".condarc", path / "condarc", path / "condarc.d"]


def condarc_paths(roots: Sequence[str]) -> list[Path]:
    """The .condarc files that exist, lowest precedence first, as conda searches them: system
    folders, each conda root (conda's $CONDA_ROOT; micromamba's .mambarc too), the user's
    config folders, ~/.condarc, the active environment, then $CONDARC."""
    home = Path.home()
    places = [place for folder in SYSTEM_CONDARC_DIRS for place in _folder(Path(folder))]
    for root in roots:
        places += [*_folder(Path(root)), Path(root) / ".mambarc"]
    if os.environ.get("XDG_CONFIG_HOME"):
        places += _folder(Path(os.environ["XDG_CONFIG_HOME"]) / "conda")
    places += [
        *_folder(home / ".config" / "conda"),
        *_folder(home / ".conda"),
        home / ".condarc",
        home / ".mambarc",
    ]
    if os.environ.get("CONDA_PREFIX"):
        places += _folder(Path(os.environ["CONDA_PREFIX"]))
    if os.environ.get("CONDARC"):
        places.append(Path(os.environ["CONDARC"]))
    files: list[Path] = []
    for place in dict.fromkeys(places):
        if place.name == "condarc.d":
            try:
                files += sorted(p for p in place.iterdir() if p.suffix in (".yml", ".yaml"))
            except OSError:
                continue
        elif place.is_file():
            files.append(place)
    return files


def string_list(value: object) -> list[str]:
    """The strings of a YAML or JSON value: a list's, or a lone string as a list of one."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _expand(path: str) -> str:
    return os.path.expandvars(os.path.expanduser(path))


def _add(target: list[str], values: Iterable[str]) -> None:
    for value in values:
        if value and value not in target:
            target.append(value)


def load_settings(roots: Sequence[str]) -> CondaSettings:
    """conda's ``envs_dirs`` and ``channels`` for these conda roots. Variables win over files
    (``CONDA_ENVS_DIRS``, and ``CONDA_ENVS_PATH``, its older name); among files the later in
    the search path wins, and a list setting merges every file's entries, as conda does.
    Without any ``channels`` setting conda uses ``defaults``."""
    settings = CondaSettings()
    for variable in ("CONDA_ENVS_DIRS", "CONDA_ENVS_PATH"):
        _add(settings.envs_dirs, map(_expand, os.environ.get(variable, "").split(os.pathsep)))
    for path in reversed(condarc_paths(roots)):
        try:
            content = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            reason = getattr(error, "strerror", None) or str(error).splitlines()[0]
            settings.problems.append(f"cannot read {path}: {reason}")
            continue
        if not isinstance(content, dict):
            continue
        envs_dirs = string_list(content.get("envs_dirs")) + string_list(content.get("envs_path"))
        _add(settings.envs_dirs, map(_expand, envs_dirs))
        _add(settings.channels, string_list(content.get("channels")))
    if not settings.channels:
        settings.channels = ["defaults"]
    return settings
