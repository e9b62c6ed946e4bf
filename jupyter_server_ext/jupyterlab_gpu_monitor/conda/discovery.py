"""Find every environment on this machine without spawning conda (which takes seconds to start).

Candidates come from ``locations``; each is read by ``prefix.scan`` and the result is cached,
reused only while the prefix's conda-meta and history mtimes (a venv's pyvenv.cfg and
site-packages mtimes) are unchanged, so a listing polled by a browser costs a few stat calls
per environment. A prefix that is gone, cannot be read, or is not an environment is skipped
with a warning, logged once while the problem lasts.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import AmbiguousEnvironment, EnvironmentNotFound
from .kernelspecs import Launch, launches
from .locations import Candidate, normal_path, search
from .model import Environment
from .prefix import PrefixScan, fingerprint, scan

log = logging.getLogger(__name__)

_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*\Z")


class _Notices:
    """Warnings logged once while they persist: a listing that a browser polls must not log
    the same twenty stale environments.txt entries at each request. A problem that goes away
    and comes back is logged again."""

    def __init__(self) -> None:
        self._previous: set[str] = set()
        self._current: set[str] = set()

    def warn(self, message: str) -> None:
        """Log a warning unless the previous round logged it already."""
        if message not in self._previous and message not in self._current:
            log.warning("%s", message)
        self._current.add(message)

    def next_round(self) -> None:
        """End a discovery: what it did not warn about again is forgotten."""
        self._previous, self._current = self._current, set()


# prefix -> (root flag, fingerprint, scan, real path); only prefixes of the last discovery.
_cache: dict[str, tuple[bool, tuple, PrefixScan, str]] = {}
_notices = _Notices()
# One discovery at a time: two requests that arrive together share one cold scan.
_lock = threading.Lock()


def _read(candidate: Candidate) -> tuple[PrefixScan, str] | None:
    prefix = candidate.prefix
    where = f"{prefix} (from {candidate.origin})"
    try:
        key = fingerprint(prefix)
        cached = _cache.get(prefix)
        if cached is not None and cached[:2] == (candidate.root, key):
            return cached[2], cached[3]
        found = scan(prefix, candidate.root)
    except FileNotFoundError:
        if candidate.listed:
            _notices.warn(f"skipped {where}: it no longer exists")
        return None
    except PermissionError:
        _notices.warn(f"skipped {where}: permission denied")
        return None
    except OSError as error:
        _notices.warn(f"skipped {where}: {error.strerror or error}")
        return None
    if found is None:
        if candidate.listed:
            _notices.warn(f"skipped {where}: not an environment (no conda-meta/ or pyvenv.cfg)")
        return None
    real = os.path.realpath(prefix)
    _cache[prefix] = (candidate.root, key, found, real)
    return found, real


def _environment_id(scan: PrefixScan, names: Counter) -> str:
    if names[scan.name] == 1 and _ID.match(scan.name):
        return scan.name
    slug = re.sub(r"[^A-Za-z0-9._+-]+", "-", scan.name).strip("-.") or "env"
    return f"{slug}-{hashlib.sha256(scan.prefix.encode()).hexdigest()[:8]}"


def _environments(found: list[tuple[PrefixScan, str]], runs: list[Launch]) -> list[Environment]:
    by_real = {real: scan for scan, real in found}
    specs: dict[str, list[str]] = {scan.prefix: [] for scan, _ in found}
    for launch in runs:
        if launch.prefix is not None:
            target = by_real.get(os.path.realpath(launch.prefix))
            targets = [target] if target else []
        else:
            targets = [s for s, _ in found if s.name == launch.env_name and s.kind != "venv"]
        for target in targets[:1]:
            specs[target.prefix].append(launch.kernelspec)
    names = Counter(scan.name for scan, _ in found)
    environments = [
        Environment(
            id=_environment_id(scan, names),
            name=scan.name,
            prefix=scan.prefix,
            kind=scan.kind,
            manager=scan.manager,
            python_version=scan.python_version,
            package_count=scan.package_count,
            kernelspecs=tuple(sorted(specs[scan.prefix])),
            modified=scan.modified,
        )
        for scan, _ in found
    ]
    return sorted(environments, key=lambda environment: environment.prefix)


def _discover(
    kernelspecs: Mapping[str, Mapping[str, Any]] | None,
    extra_envs_dirs: Iterable[str],
    extra: Sequence[Candidate],
) -> list[Environment]:
    runs = launches(kernelspecs or {})
    from_specs = [Candidate(r.prefix, f"kernelspec {r.kernelspec}") for r in runs if r.prefix]
    with _lock:
        found_search = search(extra_envs_dirs, [*from_specs, *extra])
        for problem in found_search.problems:
            _notices.warn(problem)
        found = [read for read in map(_read, found_search.candidates) if read is not None]
        _notices.next_round()
        for stale in set(_cache) - {scan.prefix for scan, _ in found}:
            del _cache[stale]
    return _environments(found, runs)


def discover_environments(
    kernelspecs: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    extra_envs_dirs: Iterable[str] = (),
    extra_prefixes: Iterable[tuple[str, str]] = (),
) -> list[Environment]:
    """Every conda environment, conda root and (behind a kernelspec) venv, sorted by prefix.

    ``kernelspecs`` is ``KernelSpecManager.get_all_specs()``: it tells which kernelspecs launch
    each environment, and adds the environments they launch. ``extra_envs_dirs`` are searched
    like conda's envs_dirs; ``extra_prefixes`` are ``(prefix, where it was found)`` pairs.
    Never raises for what it finds on disk: problems are logged warnings.
    """
    extra = [Candidate(prefix, origin) for prefix, origin in extra_prefixes]
    return _discover(kernelspecs, extra_envs_dirs, extra)


def environment_of(
    prefix: str, kernelspecs: Mapping[str, Mapping[str, Any]] | None = None
) -> Environment | None:
    """The environment whose prefix this is (``sys.prefix`` of a kernel, or the prefix above
    its ``/proc/<pid>/exe``; see ``kernelspecs.prefix_of_executable``), with the same id as in
    the listing; None when it is no environment (a system Python)."""
    extra = [Candidate(prefix, "the prefix asked for", listed=False)]
    target = os.path.realpath(normal_path(prefix))
    for environment in _discover(kernelspecs, (), extra):
        if os.path.realpath(environment.prefix) == target:
            return environment
    return None


def find_environment(environments: Sequence[Environment], key: str) -> Environment:
    """The environment with this id, else the one with this name. Raises EnvironmentNotFound,
    or AmbiguousEnvironment (with the ids to choose from) when several share the name. A path
    matches nothing: environments are only ever named by what the listing says."""
    for environment in environments:
        if environment.id == key:
            return environment
    named = [environment for environment in environments if environment.name == key]
    if len(named) == 1:
        return named[0]
    if named:
        raise AmbiguousEnvironment(key, [environment.id for environment in named])
    raise EnvironmentNotFound(key)
