"""This server's kernels, each with its process and its notebook or console, as the GPU reads
list them: what jupyter_server's kernel and session managers hold, read cheaply at every read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunningKernel:
    """One of this server's kernels, and the notebook or console it serves."""

    kernel_id: str
    name: str
    # The kernel's local process; None for a remote kernel (gateway), which has none here.
    pid: int | None
    execution_state: str | None = None
    session_path: str | None = None
    session_type: str | None = None


class SessionsOfKernels:
    """Kernel id -> its session (notebook or console). Listing the sessions costs a kernel
    model per session (5 ms a read with 200 notebooks open), so the list is kept while neither
    the kernels nor jupyter_server's session table change (sqlite counts the rows its
    connection changed); a session manager without that table is listed at every read."""

    def __init__(self, session_manager: Any):
        self._manager = session_manager
        self._listed: dict[str, dict] = {}
        self._listed_for: tuple | None = None

    async def by_kernel(self, kernel_ids: list[str]) -> dict[str, dict]:
        if self._manager is None:
            return {}
        version = self._table_version()
        key = (tuple(kernel_ids), version)
        if version is None or key != self._listed_for:
            try:
                listed = await self._manager.list_sessions()
            except Exception as error:  # its database (a file, or a custom manager's store)
                log.warning("kernels listed without their notebooks: %s", error)
                return {}
            self._listed = {(session.get("kernel") or {}).get("id"): session for session in listed}
            # Read after the listing: it deletes the rows of kernels that died.
            self._listed_for = (key[0], self._table_version())
        return self._listed

    def _table_version(self) -> int | None:
        connection = getattr(self._manager, "connection", None)
        changes = getattr(connection, "total_changes", None)
        return changes if isinstance(changes, int) else None


class _Listed:
    """A kernel as listed: its manager, and its execution state as the manager's trait last
    said (the trait is watched: reading a trait costs more than the rest of a kernel's
    listing)."""

    __slots__ = ("kernel", "manager", "state", "watcher")

    def __init__(self, manager: Any):
        self.manager = manager
        self.kernel: RunningKernel | None = None
        self.watcher: Callable[[Any], None] | None = None
        has_trait = getattr(manager, "has_trait", None)
        if callable(has_trait) and has_trait("execution_state"):
            self.watcher = self._changed
            manager.observe(self.watcher, names="execution_state")
        self.state = getattr(manager, "execution_state", None)

    def _changed(self, change: Any) -> None:
        self.state = change["new"]

    def execution_state(self) -> str | None:
        if self.watcher is None:
            return getattr(self.manager, "execution_state", None)
        return self.state

    def forget(self) -> None:
        if self.watcher is not None:
            self.manager.unobserve(self.watcher, names="execution_state")


class KernelListing:
    """This server's kernels with their process and session (notebook or console path), read
    at every read of the GPUs: each kernel's manager is looked up once and its execution state
    watched, and a kernel whose process, state and session are as at the read before is the
    same object, not a new one."""

    def __init__(self, kernel_manager: Any, session_manager: Any):
        self._kernel_manager = kernel_manager
        self._sessions = SessionsOfKernels(session_manager)
        self._listed: dict[str, _Listed] = {}

    async def kernels(self) -> list[RunningKernel]:
        """The kernels now; without their sessions, with a warning, when the session manager
        fails."""
        kernel_ids = list(self._kernel_manager.list_kernel_ids())
        by_kernel = await self._sessions.by_kernel(kernel_ids)
        before = self._listed
        listed = {}
        for kernel_id in kernel_ids:
            entry = before.pop(kernel_id, None)
            if entry is None:
                try:
                    entry = _Listed(self._kernel_manager.get_kernel(kernel_id))
                except KeyError:
                    continue  # shut down since it was listed
            session = by_kernel.get(kernel_id, {})
            pid = getattr(getattr(entry.manager, "provisioner", None), "pid", None)
            state = entry.execution_state()
            path, kind = session.get("path"), session.get("type")
            kernel = entry.kernel
            if (
                kernel is None
                or kernel.pid != pid
                or kernel.execution_state != state
                or kernel.session_path != path
                or kernel.session_type != kind
            ):
                name = getattr(entry.manager, "kernel_name", "")
                entry.kernel = RunningKernel(kernel_id, name, pid, state, path, kind)
            listed[kernel_id] = entry
        for gone in before.values():
            gone.forget()
        self._listed = listed
        return [entry.kernel for entry in listed.values()]

    def last_activity(self, kernel_id: str) -> float | None:
        """When the kernel last sent a message (jupyter_server's ``last_activity``: a status,
        an output, a reply), in seconds since the epoch; None where unknown."""
        entry = self._listed.get(kernel_id)
        when = getattr(entry.manager, "last_activity", None) if entry is not None else None
        return when.timestamp() if isinstance(when, datetime) else None
