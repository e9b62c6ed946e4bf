"""The packages of one environment: conda's records in ``conda-meta/*.json``, and the Python
distributions a PyPI installer (pip, uv) put into site-packages without a conda record."""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from .model import Package
from .prefix import fingerprint, site_packages, split_dist

log = logging.getLogger(__name__)

# prefix -> (its fingerprint when read, its packages), the most recently used last. Bounded:
# prefixes come from requests (a kernel's probe), and a PyTorch environment's packages are
# hundreds of records; a lab server's kernels use a few environments at a time.
_cache: OrderedDict[str, tuple[tuple, list[Package]]] = OrderedDict()
CACHED_ENVIRONMENTS = 32
# Requests read packages in worker threads, several at a time.
_cache_lock = threading.Lock()

# A channel URL ends in its platform folder: https://conda.anaconda.org/conda-forge/linux-64.
_SUBDIR = re.compile(
    r"noarch|(linux|osx|win|emscripten|wasi|zos)-(32|64|aarch64|armv6l|armv7l|ppc64le|ppc64|"
    r"s390x|arm64|riscv64|wasm32|z)"
)
# Servers whose channels conda names by their path: conda-forge, pkgs/main...
_NAMED_BY_PATH = {"conda.anaconda.org", "repo.anaconda.com", "repo.continuum.io"}
_DIST_INFO = re.compile(r"site-packages/([^/]+\.(?:dist-info|egg-info))(?:/|$)")


def normalize(name: str) -> str:
    """A Python distribution name as PEP 503 compares them: ``Foo_Bar.baz`` -> ``foo-bar-baz``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def channel_name(record: dict[str, Any]) -> str:
    """The channel of a record as ``conda list`` names it: ``conda-forge``, ``pkgs/main``, or
    the address of any other server, without its platform folder or token."""
    channel = str(record.get("channel") or "")
    if not channel and record.get("url"):
        channel = str(record["url"]).rsplit("/", 1)[0]
    if "://" not in channel:
        parts = [part for part in channel.split("/") if part]
        host = None
    else:
        address = urlsplit(channel)
        parts = [part for part in address.path.split("/") if part]
        host = address.hostname
    if parts and _SUBDIR.fullmatch(parts[-1]):
        parts.pop()
    if len(parts) >= 2 and parts[0] == "t":
        parts = parts[2:]  # an anaconda.org token: /t/<token>/<channel>
    if host is None or host in _NAMED_BY_PATH:
        return "/".join(parts) or "unknown"
    return f"{address.scheme}://{address.netloc}/{'/'.join(parts)}".rstrip("/")


def read_records(prefix: str) -> list[dict[str, Any]]:
    """Every readable record of ``conda-meta/``; one that is not JSON is skipped with a
    warning, as conda skips it. A venv has none."""
    meta = os.path.join(prefix, "conda-meta")
    try:
        names = sorted(name for name in os.listdir(meta) if name.endswith(".json"))
    except FileNotFoundError:
        return []
    except OSError as error:
        log.warning("cannot read the packages of %s: %s", prefix, error.strerror)
        return []
    records = []
    for name in names:
        path = os.path.join(meta, name)
        try:
            with open(path, encoding="utf-8") as handle:
                record = json.load(handle)
        except (OSError, ValueError) as error:
            log.warning("skipped the package record %s: %s", path, error)
            continue
        if not isinstance(record, dict):
            log.warning("skipped the package record %s: not a JSON object", path)
            continue
        dist = split_dist(name) or ("", "", "")
        record.setdefault("name", dist[0])
        record.setdefault("version", dist[1])
        record.setdefault("build", record.get("build_string") or dist[2])
        records.append(record)
    return records


def _read_installer(dist_info: str) -> str:
    try:
        with open(os.path.join(dist_info, "INSTALLER"), encoding="utf-8") as handle:
            return handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return ""


def packages(prefix: str) -> list[Package]:
    """The packages of a prefix, sorted by name: its conda records, then every
    ``*.dist-info`` in site-packages that no conda record owns and whose ``INSTALLER`` is not
    conda, as a pip package (what conda lists as ``pypi``). Unreadable parts are skipped with a
    warning; this never raises for what it finds on disk.

    Kept until the prefix or its site-packages change: a PyTorch environment's records are
    megabytes of JSON, and every inspection of a kernel asks twice. A folder that is no
    environment (no conda-meta, no site-packages) is not kept."""
    try:
        # pip adds and removes distributions in site-packages, not in conda-meta.
        folders = site_packages(prefix)
        prefix_state = fingerprint(prefix)
        key = (prefix_state, *(folder.stat().st_mtime_ns for folder in folders))
    except OSError:
        key = None
    with _cache_lock:
        cached = _cache.get(prefix)
        if key is not None and cached is not None and cached[0] == key:
            _cache.move_to_end(prefix)
            return list(cached[1])
    found = _read_packages(prefix)
    if key is not None and (prefix_state[0] == "conda" or folders):
        with _cache_lock:
            _cache[prefix] = (key, found)
            _cache.move_to_end(prefix)
            while len(_cache) > CACHED_ENVIRONMENTS:
                _cache.popitem(last=False)
    return list(found)


def _read_packages(prefix: str) -> list[Package]:
    records = read_records(prefix)
    found = []
    owned_folders: set[str] = set()
    # Python distribution (normalized) -> the conda package that installed it: conda's
    # "pytorch" installs "torch".
    owners: dict[str, str] = {}
    for record in records:
        name = str(record["name"])
        found.append(
            Package(
                name=name,
                version=str(record["version"]),
                build=str(record["build"]),
                channel=channel_name(record),
                installer="conda",
            )
        )
        owners.setdefault(normalize(name), name)
        files = record.get("files")
        for path in files if isinstance(files, list) else ():
            match = _DIST_INFO.search(path) if isinstance(path, str) else None
            if match:
                owned_folders.add(match.group(1))
                owners[normalize(match.group(1).split("-", 1)[0])] = name
    for folder in site_packages(prefix):
        try:
            entries = sorted(entry for entry in os.listdir(folder) if entry.endswith(".dist-info"))
        except OSError as error:
            log.warning("cannot read %s: %s", folder, error.strerror)
            continue
        for entry in entries:
            if entry in owned_folders or _read_installer(os.path.join(folder, entry)) == "conda":
                continue
            distribution, _, version = entry[: -len(".dist-info")].partition("-")
            name = normalize(distribution)
            found.append(
                Package(
                    name=name,
                    version=version,
                    build="",
                    channel="pypi",
                    installer="pip",
                    conda_name=owners.get(name),
                )
            )
    return sorted(found, key=lambda package: (package.name, package.installer))


def conda_and_pip(found: Sequence[Package]) -> list[tuple[Package, Package]]:
    """Pairs of (conda package, pip package) that install the same Python distribution in one
    environment: pip's files replaced some of conda's, and conda no longer knows what is there."""
    by_name = {package.name: package for package in found if package.installer == "conda"}
    return [
        (by_name[package.conda_name], package)
        for package in found
        if package.conda_name is not None and package.conda_name in by_name
    ]
