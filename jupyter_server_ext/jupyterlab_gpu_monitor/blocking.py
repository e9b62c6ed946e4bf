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

The GPU reads come first: bulk work (a history's columns, span figures) calls ``give_way``
between its pieces, and waits there while a read is under way. Pools keep a class of work from
queueing behind another, but Python runs one thread at a time: a thread serializing megabytes
of history takes the GIL back after each of the read's system calls, and a read made of
hundreds of them took a second, so the GPU routes, which wait for a read not older than two
intervals, waited with it.

The same for the event loop: each of its system calls (an accept, a send) gives up the GIL, and
a thread of Python work takes it back for the interpreter's switch interval, 5 ms by default.
A GPU route makes tens of such calls, so while one thread serialized history it waited a
quarter of a second. ``answer_promptly`` shortens the interval to 1 ms for the server's
process (kernels are processes of their own): CPU-bound threads switch more often, for a cost
of a few per cent of their speed, only while two of them want the GIL at once.

A thread stuck in a read cannot be interrupted. ``run`` gives up waiting after its time bound;
with a ``key`` (a path, a source), the key stays busy until that thread returns, and another call
with the key fails at once instead of stacking a second stuck thread behind the first.
"""

from __future__ import annotations

import asyncio
import itertools
import queue
import sys
import threading
import time
from collections.abc import Hashable, Iterator
from concurrent.futures import Executor, Future, InvalidStateError
from contextlib import contextmanager
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


# The most a thread of Python work keeps the GIL from the event loop (see the module's text).
SWITCH_INTERVAL_SECONDS = 0.001


def answer_promptly() -> None:
    """Shorten the server process's GIL switch interval to SWITCH_INTERVAL_SECONDS (never
    lengthen one set shorter)."""
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_SECONDS))


# How long bulk work gives way to one GPU read: a read takes tens of milliseconds of the GIL;
# one that takes longer waits for a process or a file, and need not be waited for.
GIVE_WAY_SECONDS = 0.25


class ReadsFirst:
    """The GPU reads under way, for the bulk work that gives way to them."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._started: list[float] = []

    @contextmanager
    def reading(self) -> Iterator[None]:
        """A GPU read (on the event loop, across its awaits): ``give_way`` waits while it
        lasts, for at most GIVE_WAY_SECONDS from its start."""
        started = time.monotonic()
        with self._changed:
            self._started.append(started)
        try:
            yield
        finally:
            with self._changed:
                self._started.remove(started)
                self._changed.notify_all()

    def give_way(self) -> None:
        """Wait while a read that began less than GIVE_WAY_SECONDS ago is under way; at once
        otherwise."""
        with self._changed:
            while self._started:
                left = min(self._started) + GIVE_WAY_SECONDS - time.monotonic()
                if left <= 0:
                    return
                self._changed.wait(left)


READS = ReadsFirst()
give_way = READS.give_way


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
