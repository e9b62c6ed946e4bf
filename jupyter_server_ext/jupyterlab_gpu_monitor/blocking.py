"""Blocking work, off the event loop: each class of it on a bounded pool of threads of its own,
awaited with a time bound.

- ``GPU``: NVML reads, the parsing of nvidia-smi's output and of Prometheus' answers.
- ``MACHINE``: the walks of /proc (each kernel's processes) and the machine's readings.
- ``FILES``: environments and their files (conda/, the inspector's package reads, a kernel's
  process and kernelspec).
- ``REQUESTS``: the work of a request (parsing bodies, attributing spans, serializing history).

A class that stalls (a file on a hung network filesystem, a burst of one kind of request) fills
its own pool and waits in its own queue; the others go on, so the GPU routes keep answering.
Nothing here uses asyncio's default executor (``asyncio.to_thread``): it is one pool for
everything, and its threads are joined when the interpreter exits, so one read that never
returns would starve the GPU reads and keep the server from stopping. These threads are daemon
threads: neither the server's stop nor the interpreter's exit waits for them.

A thread stuck in a read cannot be interrupted. ``run`` gives up waiting after its time bound;
with a ``key`` (a path, a source), the key stays busy until that thread returns, and another call
with the key fails at once instead of stacking a second stuck thread behind the first.
"""

from __future__ import annotations

import asyncio
import itertools
import queue
import threading
import time
from collections.abc import Hashable
from concurrent.futures import Executor, Future, InvalidStateError
from typing import Any, Callable, TypeVar

T = TypeVar("T")


class Stopping(RuntimeError):
    """The server stops: the work a request waited for will not be done."""

    def __init__(self) -> None:
        super().__init__("the server is stopping")


class TimedOut(Exception):
    """Work that did not finish within its bound. (No TimeoutError, which is an OSError: code
    that catches what a file read raises must not take it for one.)

    ``pool`` names the class of work; ``seconds`` is the bound; ``started`` says whether a
    thread had begun the work (else it was still queued behind others, and was dropped);
    ``stuck_seconds`` is set when the call was refused at once because earlier work with the
    same key has been running that long without returning.
    """

    def __init__(
        self,
        pool: str,
        seconds: float | None,
        started: bool,
        stuck_seconds: float | None = None,
    ):
        if stuck_seconds is not None:
            text = f"{pool} work with the same key has not returned for {stuck_seconds:.0f} s"
        elif started:
            text = f"{pool} work did not finish within {seconds:g} s"
        else:
            text = f"{pool} work did not start within {seconds:g} s: every thread was busy"
        super().__init__(text)
        self.pool = pool
        self.seconds = seconds
        self.started = started
        self.stuck_seconds = stuck_seconds


class Pool(Executor):
    """At most ``max_workers`` daemon threads, started as work comes, serving one queue.

    ``stop_waiting`` fails every piece of work not yet done with ``Stopping``, so that the
    requests awaiting it answer now; the pool stays usable (a test process starts many servers).
    """

    def __init__(self, name: str, max_workers: int):
        self.name = name
        self.max_workers = max_workers
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        # Released by a thread when it waits for work: a submit that takes it starts no thread.
        self._idle = threading.Semaphore(0)
        # Guards the counts and sets below, never held across the work itself.
        self._lock = threading.Lock()
        self._threads = 0
        self._numbers = itertools.count(1)
        self._unfinished: set[Future] = set()
        self._stuck: dict[Hashable, Future] = {}

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future:
        """Queue ``fn(*args, **kwargs)``; its Future, as any Executor gives."""
        future: Future = Future()
        with self._lock:
            self._unfinished.add(future)
        future.add_done_callback(self._finished)
        self._queue.put((future, fn, args, kwargs))
        if not self._idle.acquire(blocking=False):
            with self._lock:
                start = self._threads < self.max_workers
                if start:
                    self._threads += 1
            if start:
                name = f"gpu-monitor-{self.name}-{next(self._numbers)}"
                threading.Thread(target=self._serve, name=name, daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop waiting for the work under way (``stop_waiting``); never joins a thread."""
        self.stop_waiting()

    def stop_waiting(self) -> None:
        """Fail every piece of work not yet done with ``Stopping``: queued work is then skipped,
        and what a stuck thread returns one day is dropped."""
        with self._lock:
            unfinished = list(self._unfinished)
        for future in unfinished:
            try:
                future.set_exception(Stopping())
            except InvalidStateError:
                pass  # it finished meanwhile

    def stuck_seconds(self, key: Hashable) -> float | None:
        """How long the work that timed out with this key has been running; None when no such
        work is still running."""
        future = self._stuck.get(key)
        if future is None or future.done():
            return None
        return time.monotonic() - getattr(future, "started_at", time.monotonic())

    def hold(self, key: Hashable, future: Future) -> None:
        """Keep ``key`` busy until ``future``'s thread returns."""
        with self._lock:
            self._stuck[key] = future

        def release(done: Future) -> None:
            with self._lock:
                if self._stuck.get(key) is done:
                    del self._stuck[key]

        future.add_done_callback(release)

    def _finished(self, future: Future) -> None:
        with self._lock:
            self._unfinished.discard(future)

    def _serve(self) -> None:
        while True:
            future, fn, args, kwargs = self._queue.get()
            try:
                if future.set_running_or_notify_cancel():
                    future.started_at = time.monotonic()
                    try:
                        result = fn(*args, **kwargs)
                    except BaseException as error:
                        _settle(future.set_exception, error)
                    else:
                        _settle(future.set_result, result)
            except RuntimeError:
                pass  # failed with Stopping while it was queued: nobody waits for it
            finally:
                # No reference kept to the work (or its result) while the thread waits.
                del future, fn, args, kwargs
                self._idle.release()


def _settle(method: Callable[[Any], None], value: Any) -> None:
    try:
        method(value)
    except InvalidStateError:
        pass  # given up on (Stopping) while it ran


# How long the work of one request (its body, its spans, its history) may wait and run on the
# REQUESTS threads before the request is answered 503 (busy): a browser gives up before that.
REQUEST_WORK_SECONDS = 30.0
# How long a walk of /proc or a reading of the machine may take before the read goes on without
# it: milliseconds, unless a process in uninterruptible sleep hangs a read of its /proc files.
MACHINE_READ_SECONDS = 5.0

GPU = Pool("gpu", 2)
MACHINE = Pool("machine", 2)
FILES = Pool("files", 4)
# One: a request's work is Python holding the GIL, which a second thread would only take turns
# with (and keep the event loop waiting longer for it).
REQUESTS = Pool("requests", 1)
POOLS = (GPU, MACHINE, FILES, REQUESTS)


async def run(
    pool: Pool,
    function: Callable[..., T],
    *args: Any,
    timeout_seconds: float | None,
    key: Hashable | None = None,
) -> T:
    """``function(*args)`` on a thread of ``pool``; raises TimedOut when it has not finished
    within ``timeout_seconds`` from this call (None: no bound), queued time included. Work
    still queued then is dropped; work a thread runs goes on, and with a ``key`` keeps it
    busy: a call with that key meanwhile raises TimedOut at once. Raises Stopping when the
    server stops meanwhile."""
    if key is not None:
        stuck = pool.stuck_seconds(key)
        if stuck is not None:
            raise TimedOut(pool.name, timeout_seconds, started=True, stuck_seconds=stuck)
    work = pool.submit(function, *args)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(work), timeout_seconds)
    except asyncio.TimeoutError:
        if work.done() and not work.cancelled():
            return work.result()  # it finished as the bound passed
        if work.cancel():
            raise TimedOut(pool.name, timeout_seconds, started=False) from None
        if key is not None:
            pool.hold(key, work)
        raise TimedOut(pool.name, timeout_seconds, started=True) from None
    except asyncio.CancelledError:
        work.cancel()  # the caller gave up: queued work need not run
        raise


def stop_waiting() -> None:
    """Fail the work every pool has not finished with ``Stopping`` (the server stops)."""
    for pool in POOLS:
        pool.stop_waiting()
