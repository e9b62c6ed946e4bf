"""environment.yml as ``conda env export`` writes it, from the records on disk.

Three styles: ``no-builds`` (``--no-builds``: every package ``name=version``, pip-only
packages in a ``pip:`` section), ``from-history`` (``--from-history``: the specs the user asked
for, from ``conda-meta/history``) and ``with-builds`` (conda's default, ``name=version=build``).
``variables:`` come from ``conda-meta/state`` as ``conda env config vars set`` wrote them. The
text is laid out as conda lays it out (its ruamel settings: mapping 2, sequence 4, offset 2),
with PyYAML, which jupyter_server already requires and which quotes what needs quoting.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import Any

import yaml

from ..translation import gettext
from .condarc import load_settings
from .history import parse_history, requested_specs
from .locations import conda_roots
from .model import Environment
from .prefix import split_dist
from .records import packages

log = logging.getLogger(__name__)

STYLES = ("no-builds", "from-history", "with-builds")

# The channels conda calls "defaults" (DEFAULT_CHANNELS_UNIX and _WIN, and the retired ones).
_DEFAULT_CHANNEL = re.compile(r"pkgs/(main|r|msys2|free|pro)")
# What `conda env config vars unset` leaves in conda-meta/state.
_UNSET = "***unset***"


class UnsupportedExport(ValueError):
    """A style this environment cannot be exported in (a venv has no conda history)."""


class _CondaLayout(yaml.SafeDumper):
    """Sequences indented under their key (``  - item``), as conda writes them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        """Never indentless: a sequence under a key is indented, as in conda's files."""
        super().increase_indent(flow, False)


def export_channel(channel: str) -> str:
    """The name ``conda env export`` gives a channel: ``defaults`` for Anaconda's own."""
    return "defaults" if _DEFAULT_CHANNEL.fullmatch(channel) else channel


def environment_variables(prefix: str) -> dict[str, str]:
    """The variables ``conda env config vars set`` stored in ``conda-meta/state``, in order,
    without those marked unset. A state file that is not JSON is skipped with a warning."""
    path = os.path.join(prefix, "conda-meta", "state")
    try:
        with open(path, encoding="utf-8") as handle:
            state = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        log.warning("ignored the variables of %s: %s", path, error)
        return {}
    variables = state.get("env_vars") if isinstance(state, dict) else None
    if not isinstance(variables, dict):
        return {}
    return {str(key): str(value) for key, value in variables.items() if value != _UNSET}


def configured_channels(environment: Environment) -> list[str]:
    """The channels conda is configured with for this environment's installation: what its
    .condarc files (and the user's and the system's) say, else ``defaults``."""
    roots = conda_roots()
    parent = Path(environment.prefix).parent
    if environment.kind == "conda-root":
        roots.append(environment.prefix)
    elif parent.name == "envs":
        roots.append(str(parent.parent))
    settings = load_settings(list(dict.fromkeys(roots)))
    for problem in settings.problems:
        log.warning("%s", problem)
    return settings.channels


def _installed_names(prefix: str) -> set[str]:
    try:
        names = os.listdir(os.path.join(prefix, "conda-meta"))
    except OSError:
        return set()
    return {dist[0] for dist in map(split_dist, names) if dist}


def environment_document(environment: Environment, style: str = "no-builds") -> dict[str, Any]:
    """The environment.yml content, keys in conda's order: name, channels, dependencies,
    variables, prefix. A venv gets ``python=<its version>`` and ``pip`` before its pip
    section, so that conda can rebuild it. Raises UnsupportedExport for ``from-history`` of a
    venv, ValueError for an unknown style."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}, not {style!r}")
    prefix = environment.prefix
    channels = configured_channels(environment)
    dependencies: list[Any]
    if style == "from-history":
        if environment.kind == "venv":
            message = gettext(
                "{name} is a venv: it has no conda history to export from; export it without "
                "style=from-history"
            )
            raise UnsupportedExport(message.format(name=environment.name))
        try:
            with open(os.path.join(prefix, "conda-meta", "history"), encoding="utf-8") as handle:
                history = handle.read()
        except (OSError, UnicodeDecodeError) as error:
            log.warning("no history for %s: %s", prefix, error)
            history = ""
        dependencies = requested_specs(parse_history(history), _installed_names(prefix))
    else:
        found = packages(prefix)
        with_builds = style == "with-builds"
        conda = [package for package in found if package.installer == "conda"]
        dependencies = [
            "=".join((p.name, p.version, p.build) if with_builds else (p.name, p.version))
            for p in conda
        ]
        if environment.kind == "venv" and environment.python_version:
            dependencies = [f"python={environment.python_version}", "pip"]
        pip = [f"{p.name}=={p.version}" for p in found if p.installer == "pip"]
        if pip:
            dependencies.append({"pip": pip})
        # conda puts each channel its packages came from before the configured ones.
        for package in conda:
            channel = export_channel(package.channel)
            if channel not in channels:
                channels.insert(0, channel)
    document: dict[str, Any] = {"name": environment.name}
    if channels:
        document["channels"] = channels
    if dependencies:
        document["dependencies"] = dependencies
    variables = environment_variables(prefix)
    if variables:
        document["variables"] = variables
    document["prefix"] = prefix
    return document


def export_yaml(environment: Environment, style: str = "no-builds") -> str:
    """environment.yml text for this environment in one of ``STYLES``, as conda writes it."""
    return yaml.dump(
        environment_document(environment, style),
        Dumper=_CondaLayout,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=float("inf"),
    )
