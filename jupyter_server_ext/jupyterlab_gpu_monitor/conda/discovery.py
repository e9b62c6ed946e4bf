"""Find every environment on this machine without spawning conda (which takes seconds to start).

Candidates come from ``locations``; each is read by ``prefix.scan`` and the result is cached,
reused only while the prefix's conda-meta and history mtimes (a venv's pyvenv.cfg and
site-packages mtimes) are unchanged, so a listing polled by a browser costs a few stat calls
per environment. A prefix that is gone, cannot be read, or is not an environment is skipped
with a warning, logged once while the problem lasts.

Every file is read on the FILES threads (see blocking.py), and a listing waits for them at most
``FILES_SECONDS``: a folder whose files have not answered by then (a network filesystem that
hangs, a FIFO as ``conda-meta/history``) is listed as unreadable, with why, and is not read again
until the thread stuck on it returns, so that a browser polling the listing does not stack one
stuck thread per poll. Nothing here holds a lock: two listings may run at once, and the caller
(``catalog.EnvironmentCatalog``) has requests that arrive together share one.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
from collections import Counter
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from .. import blocking
from ..contract import is_text
from ..translation import gettext
from .errors import AmbiguousEnvironment, EnvironmentFilesTimeout, EnvironmentNotFound
from .kernelspecs import Launch, launches
from .locations import Candidate, Search, normal_path, search
from .model import Environment, Listing, UnreadableEnvironment
from .prefix import PrefixScan, fingerprint, scan

log = logging.getLogger(__name__)

T = TypeVar("T")

_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*\Z")
# How long a listing waits for the files it reads: the folders where environments are
# registered, then each environment's. A local disk answers a listing of dozens in well under a
# second, cold.
FILES_SECONDS = 5.0
# The key of the search on the FILES threads: while one is stuck, no other starts.
_SEARCH = "search environments"


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
# Written by the reading threads (one prefix each), pruned on the event loop.
_cache: dict[str, tuple[bool, tuple, PrefixScan, str]] = {}
_notices = _Notices()


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


def _unreadable(
    candidate: Candidate, late: blocking.TimedOut, bound_seconds: float
) -> UnreadableEnvironment:
    """The entry of a folder whose read timed out within the listing's bound, and its warning
    (one while it lasts)."""
    _notices.warn(
        f"skipped {candidate.prefix} (from {candidate.origin}): its files do not answer (a "
        "network filesystem that hangs, or a FIFO in conda-meta?); listed as unreadable until "
        "they do"
    )
    if late.stuck_seconds is not None:
        message = gettext(
            "its files have not answered for {seconds} s: a network filesystem may hang, or a "
            "FIFO stands where conda keeps a file; it is read again once they answer"
        ).format(seconds=f"{late.stuck_seconds:.0f}")
    elif late.started:
        message = gettext(
            "its files did not answer within {seconds} s: a network filesystem may hang, or a "
            "FIFO stands where conda keeps a file; it is read again once they answer"
        ).format(seconds=f"{bound_seconds:g}")
    else:
        message = gettext(
            "not read within {seconds} s: the server's readers of environment files wait on "
            "folders that do not answer; it is read again once they do"
        ).format(seconds=f"{bound_seconds:g}")
    return UnreadableEnvironment(candidate.prefix, candidate.origin, message)


def _not_text(candidate: Candidate) -> UnreadableEnvironment:
    """The entry of a folder whose path is not UTF-8, shown with replacement characters."""
    shown = candidate.prefix.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    _notices.warn(f"skipped {shown!r} (from {candidate.origin}): its path is not UTF-8")
    message = gettext(
        "its path is not UTF-8 text, which the server cannot send nor a command name: rename "
        "the folder (its name on disk shows here with replacement characters)"
    )
    origin = candidate.origin.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return UnreadableEnvironment(shown, origin, message)


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


def _search(
    kernelspecs: Mapping[str, Mapping[str, Any]] | None,
    extra_envs_dirs: Sequence[str],
    extra: Sequence[Candidate],
) -> tuple[list[Launch], Search]:
    runs = launches(kernelspecs or {})
    from_specs = [Candidate(r.prefix, f"kernelspec {r.kernelspec}") for r in runs if r.prefix]
    return runs, search(extra_envs_dirs, [*from_specs, *extra])


def _search_timeout(late: blocking.TimedOut) -> EnvironmentFilesTimeout:
    if late.stuck_seconds is not None:
        message = gettext(
            "the folders where environments are registered (~/.conda/environments.txt, the "
            ".condarc files, the envs folders) have not answered for {seconds} s: a network "
            "filesystem may hang. The GPU readings are not affected; ask again in a minute."
        ).format(seconds=f"{late.stuck_seconds:.0f}")
    else:
        message = gettext(
            "the folders where environments are registered (~/.conda/environments.txt, the "
            ".condarc files, the envs folders) did not answer within {seconds} s: a network "
            "filesystem may hang. The GPU readings are not affected; ask again in a minute."
        ).format(seconds=f"{late.seconds:g}")
    return EnvironmentFilesTimeout(message)


async def _discover(
    kernelspecs: Mapping[str, Mapping[str, Any]] | None,
    extra_envs_dirs: Iterable[str],
    extra: Sequence[Candidate],
    timeout_seconds: float,
) -> tuple[Listing, dict[str, str]]:
    """The listing, and the real path of each environment's prefix."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_seconds
    try:
        runs, found_search = await blocking.run(
            blocking.FILES,
            _search,
            kernelspecs,
            list(extra_envs_dirs),
            list(extra),
            timeout_seconds=timeout_seconds,
            key=_SEARCH,
        )
    except blocking.TimedOut as late:
        raise _search_timeout(late) from None
    for problem in found_search.problems:
        _notices.warn(problem)
    # What is left of the bound: the listing as a whole answers within it.
    remaining = max(0.0, deadline - loop.time())
    candidates = [c for c in found_search.candidates if is_text(c.prefix)]
    unreadable = [
        _not_text(candidate)
        for candidate in found_search.candidates
        if not is_text(candidate.prefix)
    ]
    reads = await asyncio.gather(
        *(
            blocking.run(
                blocking.FILES, _read, c, timeout_seconds=remaining, key=("prefix", c.prefix)
            )
            for c in candidates
        ),
        return_exceptions=True,
    )
    found: list[tuple[PrefixScan, str]] = []
    for candidate, read in zip(candidates, reads):
        if isinstance(read, blocking.TimedOut):
            unreadable.append(_unreadable(candidate, read, timeout_seconds))
        elif isinstance(read, BaseException):
            raise read
        elif read is not None:
            found.append(read)
    _notices.next_round()
    kept = {scan.prefix for scan, _ in found}
    for stale in set(_cache) - kept:
        _cache.pop(stale, None)
    listing = Listing(_environments(found, runs), sorted(unreadable, key=lambda u: u.prefix))
    return listing, {scan.prefix: real for scan, real in found}


async def list_environments(
    kernelspecs: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    extra_envs_dirs: Iterable[str] = (),
    extra_prefixes: Iterable[tuple[str, str]] = (),
    timeout_seconds: float = FILES_SECONDS,
) -> Listing:
    """Every conda environment, conda root and (behind a kernelspec) venv, sorted by prefix,
    and the folders whose files did not answer within ``timeout_seconds``.

    ``kernelspecs`` is ``KernelSpecManager.get_all_specs()``: it tells which kernelspecs launch
    each environment, and adds the environments they launch. ``extra_envs_dirs`` are searched
    like conda's envs_dirs; ``extra_prefixes`` are ``(prefix, where it was found)`` pairs.
    Never raises for what it finds on disk (problems are logged warnings), except
    EnvironmentFilesTimeout when the folders where environments are registered do not answer
    in time.
    """
    extra = [Candidate(prefix, origin) for prefix, origin in extra_prefixes]
    listing, _ = await _discover(kernelspecs, extra_envs_dirs, extra, timeout_seconds)
    return listing


async def environment_at(
    prefix: str,
    kernelspecs: Mapping[str, Mapping[str, Any]] | None = None,
    timeout_seconds: float = FILES_SECONDS,
) -> Environment | None:
    """The environment whose prefix this is (``sys.prefix`` of a kernel, or the prefix above
    its ``/proc/<pid>/exe``; see ``kernelspecs.prefix_of_executable``), with the same id as in
    the listing; None when it is no environment (a system Python). Raises
    EnvironmentFilesTimeout when the folder's files do not answer in time."""
    asked = normal_path(prefix)
    extra = [Candidate(asked, "the prefix asked for", listed=False)]
    found, real_of = await _discover(kernelspecs, (), extra, timeout_seconds)
    for folder in found.unreadable:
        if folder.prefix == asked:
            raise EnvironmentFilesTimeout(f"{folder.prefix}: {folder.message}")
    try:
        # Resolving the links reads every folder on the way: on a FILES thread too.
        target = await blocking.run(
            blocking.FILES,
            os.path.realpath,
            asked,
            timeout_seconds=timeout_seconds,
            key=("prefix", asked),
        )
    except blocking.TimedOut as late:
        message = _unreadable(extra[0], late, timeout_seconds).message
        raise EnvironmentFilesTimeout(f"{asked}: {message}") from None
    for environment in found.environments:
        if real_of[environment.prefix] == target:
            return environment
    return None


def _run_alone(work: Coroutine[Any, Any, T]) -> T:
    # A loop of its own, set as no thread's current loop: callers without a loop (tests, the
    # benchmark) leave no trace of it.
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(work)
    finally:
        loop.close()


def discover_environments(
    kernelspecs: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    extra_envs_dirs: Iterable[str] = (),
    extra_prefixes: Iterable[tuple[str, str]] = (),
) -> list[Environment]:
    """``list_environments``' environments, for a caller without an event loop (those whose
    files did not answer in time are logged, not listed)."""
    found = list_environments(
        kernelspecs, extra_envs_dirs=extra_envs_dirs, extra_prefixes=extra_prefixes
    )
    return _run_alone(found).environments


def environment_of(
    prefix: str, kernelspecs: Mapping[str, Mapping[str, Any]] | None = None
) -> Environment | None:
    """``environment_at``, for a caller without an event loop."""
    return _run_alone(environment_at(prefix, kernelspecs))


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
