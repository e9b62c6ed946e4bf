"""What the environment inspector reports: environments and their packages, JSON-ready."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any


@dataclass(frozen=True)
class Environment:
    """One environment found on disk.

    ``kind`` is conda-root, conda-env or venv; ``manager`` names the tool that made it (conda,
    mamba, micromamba, pixi, venv, virtualenv, uv). ``id`` names it in URLs: its name when no other
    environment has that name, else the name and a short hash of the prefix; never a path.
    ``package_count`` counts conda's records (a venv's: its ``*.dist-info``), which is what a
    cached listing can know without opening them. ``modified`` is the mtime of
    ``conda-meta/history`` in epoch seconds (of ``conda-meta`` where there is no history, as in
    pixi's environments); None for a venv.
    """

    id: str
    name: str
    prefix: str
    kind: str
    manager: str
    python_version: str | None
    package_count: int
    kernelspecs: tuple[str, ...]
    modified: float | None

    def to_json(self) -> dict[str, Any]:
        """The environment as the REST API sends it."""
        payload = asdict(self)
        payload["kernelspecs"] = list(self.kernelspecs)
        return payload


@dataclass(frozen=True)
class UnreadableEnvironment:
    """A folder that may be an environment whose files did not answer in time (a network
    filesystem that hangs, a FIFO where conda keeps a file): listed apart, with why, and read
    again once its files answer. ``origin`` says where the folder was found."""

    prefix: str
    origin: str
    message: str

    def to_json(self) -> dict[str, Any]:
        """The folder as the REST API sends it."""
        return asdict(self)


@dataclass(frozen=True)
class Listing:
    """One discovery: the environments found, and the folders that did not answer in time."""

    environments: list[Environment]
    unreadable: list[UnreadableEnvironment]

    @cached_property
    def answer(self) -> str:
        """``GET envs``'s body, encoded once per discovery: a burst of listings shares one
        discovery, and encoding 40 environments for each of 100 requests held the event loop
        a second (tests/test_starvation.py)."""
        listing = {
            "environments": [environment.to_json() for environment in self.environments],
            "unreadable": [folder.to_json() for folder in self.unreadable],
        }
        return json.dumps({**listing, **conda_env_list(self.environments)})


@dataclass(frozen=True)
class Package:
    """One installed package.

    ``installer`` is "conda" for a conda record, "pip" for a Python distribution that a PyPI
    installer (pip, uv...) put there without a conda record; ``build`` is empty and ``channel``
    is "pypi" for those. ``conda_name`` is set on a pip package when a conda package of the
    environment also installed that distribution (conda's numpy under pip's numpy, conda's
    pytorch under pip's torch): the two fight over the same files.
    """

    name: str
    version: str
    build: str
    channel: str
    installer: str
    conda_name: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The package as the REST API sends it."""
        return asdict(self)


def conda_env_list(environments: Sequence[Environment]) -> dict[str, Any]:
    """The listing in the shape of ``conda env list --json``: ``envs``, the prefixes, and
    ``envs_details`` keyed by prefix, with conda's own ``name`` and ``base`` and the rest of
    each environment, so that scripts written for conda's output read ours."""
    details = {}
    for environment in environments:
        entry = environment.to_json()
        del entry["prefix"]
        details[environment.prefix] = {**entry, "base": environment.kind == "conda-root"}
    return {"envs": [environment.prefix for environment in environments], "envs_details": details}
