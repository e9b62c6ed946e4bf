"""Kernels that jupyter_server calls "starting" long after they are ready.

jupyter_server learns a kernel's state from the status messages the kernel publishes, and a
kernel publishes them only around a request. A kernel started through the REST API that no
client has asked anything (no websocket connected) has published nothing since it started:
the server calls it "starting" for good. Asking it for its kernel_info settles that: the reply
says it is ready, and the busy and idle it publishes around the request move the server's
state to idle. jupyter_server does not count kernel_info as activity, so asking keeps no
kernel from being culled.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Iterable

from jupyter_client.session import new_id

from .listing import RunningKernel

log = logging.getLogger(__name__)

# How long a kernel listed as "starting" is given to answer: a local one answers in
# milliseconds once its Python has imported ipykernel, which takes seconds on a cold disk.
SETTLE_SECONDS = 30.0

# The kernels being asked, by id: a listing while one is asked asks it no second time.
_settling: set[str] = set()


async def shell_client(kernel):
    """A client of ``kernel`` on the shell channel only, started, with an identity of its own.

    The kernel manager's clients share its session, whose id is their shell socket's
    identity: the kernel would send each reply to one of them, whichever it chose, and a
    second client of ours asking at the same moment would miss its reply.
    """
    session = kernel.session.clone()
    session.session = new_id()
    client = kernel.client(session=session)
    # A gateway's client starts its channels asynchronously, a local kernel's at once.
    started = client.start_channels(iopub=False, stdin=False, hb=False, control=False)
    if inspect.isawaitable(started):
        await started
    return client


async def answers(client, timeout_seconds: float) -> bool:
    """Whether the kernel of ``client`` answers a kernel_info request within the time."""
    try:
        await client.kernel_info(reply=True, timeout=timeout_seconds)
    except (TimeoutError, asyncio.TimeoutError):
        return False
    return True


def settle_starting(kernel_manager, kernels: Iterable[RunningKernel]) -> None:
    """Ask each local kernel listed as "starting" for its kernel_info, without waiting: once it
    answers, the server, and the next listing, see it idle."""
    for kernel in kernels:
        if kernel.execution_state != "starting" or kernel.pid is None:
            continue
        if kernel.kernel_id in _settling:
            continue
        _settling.add(kernel.kernel_id)
        asking = asyncio.ensure_future(_settle(kernel_manager, kernel.kernel_id))
        asking.add_done_callback(lambda _, kernel_id=kernel.kernel_id: _settling.discard(kernel_id))


async def _settle(kernel_manager, kernel_id: str) -> None:
    try:
        client = await shell_client(kernel_manager.get_kernel(kernel_id))
    except KeyError:
        return  # shut down since it was listed
    except Exception as error:  # a kernel manager of another kind: the listing goes on
        log.debug("kernel %s not asked for its kernel_info: %s", kernel_id, error)
        return
    try:
        await answers(client, SETTLE_SECONDS)
    finally:
        client.stop_channels()
