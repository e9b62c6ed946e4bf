"""environment.yml as ``conda env export`` writes it, from the records on disk; and
requirements.txt and pylock.toml of the distributions pip or uv installed.

Three environment.yml styles: ``no-builds`` (``--no-builds``: every package ``name=version``,
pip-only packages in a ``pip:`` section), ``from-history`` (``--from-history``: the specs the
user asked for, from ``conda-meta/history``) and ``with-builds`` (conda's default,
``name=version=build``). ``variables:`` come from ``conda-meta/state`` as ``conda env config
vars set`` wrote them. The text is laid out as conda lays it out (its ruamel settings: mapping
2, sequence 4, offset 2), with PyYAML, which jupyter_server already requires and which quotes
what needs quoting. The ``pip:`` section is what ``requirements`` writes (``pip_files.py``):
the index of each PyTorch build, and a URL install's URL, so that ``conda env create`` can run
its pip step. A style that leaves something out says what, in a comment at the top.
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
from .distributions import Distribution, python_distributions
from .history import parse_history, requested_specs
from .locations import conda_roots
from .model import Environment, Package
from .pip_files import PYTORCH_INDEX, pip_requirements, pylock_text, requirements_text
from .prefix import split_dist
from .records import packages

log = logging.getLogger(__name__)

ENVIRONMENT_FILE_STYLES = ("no-builds", "from-history", "with-builds")
# requirements.txt and pylock.toml: a venv's whole content, a conda environment's pip part.
PIP_STYLES = ("requirements", "pylock")
STYLES = ENVIRONMENT_FILE_STYLES + PIP_STYLES
# The file each style writes, and its media type.
FILE_NAMES = {
    **dict.fromkeys(ENVIRONMENT_FILE_STYLES, "environment.yml"),
    "requirements": "requirements.txt",
    "pylock": "pylock.toml",
}
MEDIA_TYPES = {
    **dict.fromkeys(ENVIRONMENT_FILE_STYLES, "application/yaml"),
    "requirements": "text/plain",
    "pylock": "application/toml",
}
# conda 25.7 (conda/conda#14886, Environment.from_prefix) lists the channels of the packages
# in the order it meets them, before the configured ones; earlier condas (env.py's
# from_environment) put each new one first, which reverses that order.
_CHANNELS_IN_ORDER_MET = (25, 7)

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


def _installation_root(environment: Environment) -> str | None:
    """The conda root an environment belongs to: itself, or the root of its ``envs/``."""
    parent = Path(environment.prefix).parent
    if environment.kind == "conda-root":
        return environment.prefix
    if parent.name == "envs":
        return str(parent.parent)
    return None


def configured_channels(environment: Environment) -> list[str]:
    """The channels conda is configured with for this environment's installation: what its
    .condarc files (and the user's and the system's) say, else ``defaults``."""
    roots = conda_roots()
    root = _installation_root(environment)
    if root is not None:
        roots.append(root)
    settings = load_settings(list(dict.fromkeys(roots)))
    for problem in settings.problems:
        log.warning("%s", problem)
    return settings.channels


def installation_conda_version(environment: Environment) -> tuple[int, ...] | None:
    """The version of the conda that manages this environment, from the ``conda`` record of
    its root (``conda-25.7.0-py313h8f79df9_0.json``); None where there is no such record."""
    root = _installation_root(environment)
    if root is None:
        return None
    try:
        names = os.listdir(os.path.join(root, "conda-meta"))
    except OSError:
        return None
    for dist in map(split_dist, names):
        if dist and dist[0] == "conda":
            numbers = re.findall(r"\d+", dist[1])[:3]
            return tuple(int(number) for number in numbers) or None
    return None


def export_channels(
    configured: list[str], conda: list[Package], conda_version: tuple[int, ...] | None
) -> list[str]:
    """The ``channels:`` of ``conda env export``: the channel of each package (in name order)
    that is not configured, then the configured ones. conda 25.7 and later keep the order in
    which they meet them; an older conda (known from the installation's conda record) put each
    one first, as it came, so that the last met comes first."""
    met = [export_channel(package.channel) for package in conda]
    met = [channel for channel in dict.fromkeys(met) if channel != "unknown"]
    if conda_version is not None and conda_version < _CHANNELS_IN_ORDER_MET:
        channels = list(configured)
        for channel in met:
            if channel not in channels:
                channels.insert(0, channel)
        return channels
    return list(dict.fromkeys([*met, *configured]))


def _installed_names(prefix: str) -> set[str]:
    try:
        names = os.listdir(os.path.join(prefix, "conda-meta"))
    except OSError:
        return set()
    return {dist[0] for dist in map(split_dist, names) if dist}


def environment_document(
    environment: Environment, style: str = "no-builds", index_base: str = PYTORCH_INDEX
) -> dict[str, Any]:
    """The environment.yml content, keys in conda's order: name, channels, dependencies,
    variables, prefix. A venv gets ``python=<its version>`` and ``pip`` before its pip
    section, so that conda can rebuild it. Raises UnsupportedExport for ``from-history`` of a
    venv, ValueError for a style that is no environment.yml's."""
    if style not in ENVIRONMENT_FILE_STYLES:
        raise ValueError(
            f"style must be one of {', '.join(ENVIRONMENT_FILE_STYLES)}, not {style!r}"
        )
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
        pip = pip_requirements(python_distributions(prefix), index_base)
        if pip:
            dependencies.append({"pip": pip})
        channels = export_channels(channels, conda, installation_conda_version(environment))
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


def _pins(found: list[Distribution]) -> str:
    return ", ".join(f"{d.name}=={d.version}" for d in found)


def left_out(environment: Environment, style: str) -> list[str]:
    """What a file of this style leaves out of the environment, one sentence each: the pip
    packages of ``from-history``, which conda's history never names; the conda packages of
    ``requirements`` and ``pylock``. Empty when it leaves nothing out."""
    if style == "from-history":
        pip = python_distributions(environment.prefix)
        return [f"pip packages not in conda's history, left out: {_pins(pip)}"] if pip else []
    if style in PIP_STYLES:
        conda = [p for p in packages(environment.prefix) if p.installer == "conda"]
        if conda:
            return [
                f"the {len(conda)} conda packages of {environment.prefix} are left out: only "
                "what pip or uv installed is here; environment.yml has the rest"
            ]
    return []


def export_yaml(
    environment: Environment, style: str = "no-builds", index_base: str = PYTORCH_INDEX
) -> str:
    """environment.yml text for this environment in one of ``ENVIRONMENT_FILE_STYLES``, as
    conda writes it, after a comment naming what the style leaves out, if anything."""
    text = yaml.dump(
        environment_document(environment, style, index_base),
        Dumper=_CondaLayout,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=float("inf"),
    )
    return "".join(f"# {note}\n" for note in left_out(environment, style)) + text


def export_text(
    environment: Environment, style: str = "no-builds", index_base: str = PYTORCH_INDEX
) -> str:
    """The file of one of ``STYLES``: environment.yml, requirements.txt or pylock.toml (whose
    packages from an index name no wheel: the records on disk have no wheel's address or
    hash). ``index_base`` is where PyTorch's per-build indexes are."""
    if style in ENVIRONMENT_FILE_STYLES:
        return export_yaml(environment, style, index_base)
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}, not {style!r}")
    found = python_distributions(environment.prefix)
    notes = left_out(environment, style)
    if style == "requirements":
        return requirements_text(found, notes, index_base)
    if any(d.direct_url is None for d in found):
        notes.append(
            "Packages from an index name no wheel: their dist-info records hash the installed "
            "files, not the wheels; `uv pip compile --format pylock.toml` on requirements.txt "
            "locks the wheels too."
        )
    return pylock_text(found, environment.python_version, notes, index_base)
