"""One Sampler per server: reads the GPUs on a timer while someone is watching.

However many browser tabs poll, the GPUs are read once per interval, by one task, with at most
one read in flight; with nobody watching for ``idle_seconds`` the task ends and costs nothing.
A watcher that asks only every few seconds (a status bar while no chart is shown) says so
(``every``): while only such watchers ask, the GPUs are read when they ask, at most once per
half of their period, and the timer does not run.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from .. import blocking
from ..translation import gettext
from .errors import GpuReadError
from .history import History
from .model import Snapshot
from .source import GpuSource, RemembersHistory

log = logging.getLogger(__name__)


class Sampler:
    """Owns the source, the latest snapshot and the history ring."""

    def __init__(
        self,
        source: GpuSource,
        interval_seconds: float = 1.0,
        history_seconds: float = 3600.0,
        idle_seconds: float = 30.0,
        annotate: Callable[[Snapshot], Awaitable[None]] | None = None,
    ):
        self.source = source
        # Adds this server's view to each read, good or failed (processes -> kernels, the
        # machine), once per read.
        self._annotate = annotate
        self.interval_seconds = interval_seconds
        self.idle_seconds = idle_seconds
        self.history = History(history_seconds, interval_seconds)
        self.reads = 0
        self.read_errors: Counter[str] = Counter()
        self.latest: Snapshot | None = None
        self._latest_json: str | None = None
        self._whole_history: asyncio.Future | None = None
        self.last_good: Snapshot | None = None
        self._latest_at = float("-inf")  # monotonic time of the latest read
        self._last_watched = float("-inf")
        self._task: asyncio.Task | None = None
        self._next_read: asyncio.Future | None = None
        # A read made for a slow watcher, shared by those that ask while it runs.
        self._asked_read: asyncio.Future | None = None
        # One read at a time, whether the timer or a slow watcher asked for it.
        self._reading = asyncio.Lock()
        self._seeded = False
        self._stopped = False

    @property
    def sampling(self) -> bool:
        """Whether the reading task is running (someone watched within ``idle_seconds``)."""
        return self._task is not None and not self._task.done()

    async def snapshot(self, every: float | None = None) -> Snapshot:
        """The latest snapshot, read within the last two intervals; for a watcher that asks
        only ``every`` seconds (longer than the interval), within half of that. Raises
        blocking.Stopping once the server stops."""
        # A seldom watcher neither starts the timer nor keeps it going: it shares the
        # timer's reads while a chart keeps it going, and gets its own read otherwise.
        if every is not None and every > self.interval_seconds:
            await self._fresh_for(every)
        else:
            await self._fresh()
        assert self.latest is not None
        return self.latest

    async def snapshot_json(self, every: float | None = None) -> str:
        """The latest snapshot as the API sends it, serialized once per read, not per client."""
        snapshot = await self.snapshot(every)
        if self._latest_json is None:
            self._latest_json = json.dumps(snapshot.to_json())
        return self._latest_json

    async def history_json(self, since: float | None) -> bytes:
        """The history after ``since`` (all of it when None), in the columnar form of
        ``History.since``, as the API sends it (UTF-8: encoding megabytes is no work for the
        event loop either). Built from a copy on the REQUESTS thread (see
        blocking.py): a panel opening on an hour of 8 GPUs asks for all of it, 57,600 values,
        2 MB of JSON, and thirty panels opening at once wait in their own queue, not in the GPU
        reads' (blocking.TimedOut when they waited too long). The whole history is built once
        per read, however many panels open."""
        await self._fresh()
        if since is not None:
            return await self._history_text(since)
        whole = self._whole_history
        if whole is None or (whole.done() and (whole.cancelled() or whole.exception())):
            self._whole_history = asyncio.ensure_future(self._history_text(None))
        # Shielded: one client giving up must not cancel what the others wait for.
        return await asyncio.shield(self._whole_history)

    async def stop(self) -> None:
        """End the reading task and release the source; the requests waiting for a read are
        answered that the server stops (blocking.Stopping), and so are those that come after."""
        self._stopped = True
        for task in (self._task, self._asked_read):
            if task is not None and not task.done():
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass
        self.source.close()

    async def _history_text(self, since: float | None) -> bytes:
        return await blocking.run(
            blocking.REQUESTS,
            _history_text,
            self.history.copy(),
            since,
            timeout_seconds=blocking.REQUEST_WORK_SECONDS,
        )

    async def _fresh(self) -> None:
        if self._stopped:
            raise blocking.Stopping()
        self._last_watched = time.monotonic()
        loop = asyncio.get_running_loop()
        if self._next_read is None or self._next_read.done():
            self._next_read = loop.create_future()
        if not self.sampling:
            self._task = loop.create_task(self._run())
        if time.monotonic() - self._latest_at > 2 * self.interval_seconds:
            # Shielded: one caller giving up must not cancel the read the others wait for.
            await asyncio.shield(self._next_read)

    async def _fresh_for(self, every: float) -> None:
        """A read for a slow watcher, unless one was made within half its period."""
        if self._stopped:
            raise blocking.Stopping()
        if time.monotonic() - self._latest_at <= every / 2:
            return
        if self._asked_read is None or self._asked_read.done():
            self._asked_read = asyncio.ensure_future(self._read_for(every))
        asked = self._asked_read
        try:
            # Shielded: one caller giving up must not cancel the read the others wait for.
            await asyncio.shield(asked)
        except asyncio.CancelledError:
            if asked.cancelled() and self._stopped:
                raise blocking.Stopping() from None
            raise

    async def _read_for(self, every: float) -> Snapshot:
        await self._seed_history()
        return await self._read_and_keep(every)

    async def _run(self) -> None:
        try:
            await self._seed_history()
            while time.monotonic() - self._last_watched < self.idle_seconds:
                started = time.monotonic()
                snapshot = await self._read_and_keep()
                if self._next_read is not None and not self._next_read.done():
                    self._next_read.set_result(snapshot)
                await asyncio.sleep(max(0.0, self.interval_seconds - (time.monotonic() - started)))
        finally:
            # Stopped or broken: nobody may wait for a read that will not come.
            if self._next_read is not None and not self._next_read.done():
                if self._stopped:
                    self._next_read.set_exception(blocking.Stopping())
                    self._next_read.exception()  # retrieved: nobody may be waiting
                else:
                    self._next_read.cancel()

    async def _read_and_keep(self, spacing_seconds: float | None = None) -> Snapshot:
        """Read the GPUs and keep the read as the latest and in the history, with how far apart
        reads are being made (the interval when None: the timer's)."""
        async with self._reading:
            with blocking.READS.reading():
                snapshot = await self._read()
            self.latest = snapshot
            self._latest_json = None
            self._whole_history = None
            self._latest_at = time.monotonic()
            self.history.append(snapshot, spacing_seconds)
            if snapshot.error is None:
                self.last_good = snapshot
            return snapshot

    async def _seed_history(self) -> None:
        # First read (or everything aged out): a source with a memory fills the charts now,
        # before the readings of a seldom watcher too.
        if self._seeded and self.history:
            return
        self._seeded = True
        if not isinstance(self.source, RemembersHistory):
            return
        end = time.time()
        try:
            past = await self.source.history(
                end - self.history.history_seconds, end, self.interval_seconds
            )
        except GpuReadError as error:
            log.warning("GPU history not filled from %s: %s", self.source.name, error.message)
            return
        except Exception:
            # Charts that start empty are no reason to stop reading.
            log.exception("filling the GPU history failed unexpectedly")
            return
        self.history.seed(past)

    async def _read(self) -> Snapshot:
        self.reads += 1
        try:
            snapshot = await self.source.sample()
        except GpuReadError as error:
            self.read_errors[error.kind] += 1
            failed = error
        except Exception:
            # A bug of ours must not end sampling or reach the client as a 500 forever.
            log.exception("GPU read failed unexpectedly")
            self.read_errors["unknown"] += 1
            failed = GpuReadError(
                "unknown", gettext("reading the GPUs failed unexpectedly (see the server log)")
            )
        else:
            for gpu in snapshot.gpus:
                gpu.keep_processes()
            failed = None
        if failed is not None:
            snapshot = Snapshot(
                source=None if self.source.name == "auto" else self.source.name,
                timestamp=time.time(),
                error=failed.to_error(),
            )
        if self._annotate is not None:
            try:
                await self._annotate(snapshot)
            except Exception:
                # The readings stand without this server's view; the log says why it failed.
                log.exception("joining the read with kernels and the machine failed")
        return snapshot


def _history_text(history: History, since: float | None) -> bytes:
    return json_in_pieces(history.since(since)).encode()


def json_in_pieces(value: Any) -> str:
    """``json.dumps(value)``, the same text, made a column at a time. json's C encoder holds
    the GIL for the whole of one call: one call over an hour of 8 GPUs (2 MB) keeps the event
    loop, and the GPU reads' threads, waiting tens of milliseconds at a time, at each of thirty
    panels opening; between columns (a fraction of a millisecond each) they get their turn, and
    a GPU read under way is let finish (blocking.give_way)."""
    blocking.give_way()
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        fields = (f"{json.dumps(key)}: {json_in_pieces(item)}" for key, item in value.items())
        return "{" + ", ".join(fields) + "}"
    if isinstance(value, list) and value and isinstance(value[0], (dict, list)):
        return "[" + ", ".join(json_in_pieces(item) for item in value) + "]"
    return json.dumps(value)
