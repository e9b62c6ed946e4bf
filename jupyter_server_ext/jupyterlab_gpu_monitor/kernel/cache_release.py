"""Release the GPU memory PyTorch's caching allocator keeps in an idle kernel.

PyTorch keeps the blocks a notebook freed (``del model``) reserved for its next tensors: the
driver, and so every other user of the GPU, still sees them as taken. ``torch.cuda.empty_cache()``
hands them back. It runs in the kernel as one silent execute (``silent``, no history, the code
empty, the work in ``user_expressions``): the notebook's In[] counter, its history and its
namespace stay as they were, and torch is only looked up in ``sys.modules``, never imported.
"""

from __future__ import annotations

import ast
import asyncio
import time
from dataclasses import asdict, dataclass
from typing import Any

from .. import blocking
from ..translation import gettext
from .ready import answers, shell_client

# How long an idle kernel may take to answer. It answers an empty execute in milliseconds;
# gc.collect() over a notebook's heap of tens of millions of objects takes seconds, and
# empty_cache() waits for the GPU's pending frees. Past this, the request is given up.
REPLY_TIMEOUT_SECONDS = 10.0

# Runs in a dictionary of its own (see RELEASE_EXPRESSION) and leaves its answer in RESULT: a
# dict of str, int and None, whose repr ast.literal_eval reads back.
RELEASE_SOURCE = """
import gc, sys
torch = sys.modules.get("torch")
if torch is None:
    RESULT = {"outcome": "torch_not_imported"}
elif not torch.cuda.is_initialized():
    RESULT = {"outcome": "cuda_not_initialized"}
else:
    # The caching allocator's bookkeeping: reading it initialises no device.
    def reserved():
        return sum(torch.cuda.memory_reserved(d) for d in range(torch.cuda.device_count()))
    before = reserved()
    gc.collect()  # tensors only unreachable cycles still hold go back to the cache first
    torch.cuda.empty_cache()
    RESULT = {"outcome": "released", "reserved_before_bytes": before,
              "reserved_after_bytes": reserved()}
"""

# One expression for ``user_expressions``: the statements run in a fresh dictionary, so the
# user's namespace gains no name.
RELEASE_EXPRESSION = (
    f"(lambda namespace: (exec({RELEASE_SOURCE!r}, namespace), namespace['RESULT'])[1])({{}})"
)
EXPRESSION_NAME = "gpu_monitor_release"
# Our answer prints in a few hundred characters. A kernel that prints dicts its own way (a
# pretty-printer of the user's) may send megabytes, which ast.literal_eval would take seconds
# and gigabytes to read: beyond this, it is refused unread.
MAX_ANSWER_CHARACTERS = 64 * 1024
OUTCOMES = ("torch_not_imported", "cuda_not_initialized", "released")


@dataclass
class CacheRelease:
    """What releasing a kernel's cached GPU memory did (``CacheReleaseAnswer`` of the API)."""

    outcome: str  # one of OUTCOMES
    reserved_before_bytes: int | None = None  # on all GPUs, before empty_cache()
    reserved_after_bytes: int | None = None
    released_bytes: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The answer as the REST API sends it."""
        return asdict(self)


class ReleaseRefused(Exception):
    """The kernel was not asked, or did not answer: ``kind`` is ``busy``, ``timeout`` or
    ``failed``, and the message says what to do."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


def parse_reply(content: dict[str, Any]) -> CacheRelease:
    """The outcome in an ``execute_reply``'s content; ReleaseRefused (``failed``) when the
    expression raised or answered something else."""
    if content.get("status") != "ok":
        raise ReleaseRefused("failed", _failure(content))
    result = content.get("user_expressions", {}).get(EXPRESSION_NAME, {})
    if result.get("status") != "ok":
        raise ReleaseRefused("failed", _failure(result))
    text = result.get("data", {}).get("text/plain", "")
    if len(text) > MAX_ANSWER_CHARACTERS:
        message = gettext(
            "the kernel's answer is {size} KiB, more than the {limit} KiB a release's answer "
            "can be: something in the kernel changes how it prints a dict"
        )
        raise ReleaseRefused(
            "failed", message.format(size=len(text) // 1024, limit=MAX_ANSWER_CHARACTERS // 1024)
        )
    try:
        answer = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        answer = None
    if not isinstance(answer, dict) or answer.get("outcome") not in OUTCOMES:
        message = gettext("the kernel answered something unexpected: {answer}")
        raise ReleaseRefused("failed", message.format(answer=text[:200]))
    if answer["outcome"] != "released":
        return CacheRelease(answer["outcome"])
    before, after = answer.get("reserved_before_bytes"), answer.get("reserved_after_bytes")
    if not all(isinstance(value, int) and value >= 0 for value in (before, after)):
        message = gettext("the kernel answered something unexpected: {answer}")
        raise ReleaseRefused("failed", message.format(answer=text[:200]))
    return CacheRelease("released", before, after, max(0, before - after))


def _failure(content: dict[str, Any]) -> str:
    error = f"{content.get('ename', 'Error')}: {content.get('evalue', '')}".strip().rstrip(":")
    return gettext("the kernel could not release its cached GPU memory: {error}").format(
        error=error[:300]
    )


# The release under way in each kernel, by kernel id, for the requests that join it.
_in_flight: dict[str, asyncio.Future[CacheRelease]] = {}


async def release_cached_memory(
    kernel_manager, kernel_id: str, timeout_seconds: float = REPLY_TIMEOUT_SECONDS
) -> CacheRelease:
    """Run ``gc.collect()`` and ``torch.cuda.empty_cache()`` in a kernel of this server that
    imported torch, silently, and say what it gave back.

    A request for a kernel whose release is under way joins it: the kernel runs it once, and
    every request gets its answer. Asked again meanwhile, the kernel would run it twice for
    nothing, or the second request find it busy with the first and be refused.

    The caller checks that the kernel exists. ReleaseRefused: ``busy`` when the kernel runs a
    cell (the request would wait behind it), or is restarting, dead, or starting and not
    answering yet; ``timeout`` when it does not answer in time; ``failed`` when the
    expression raised.
    """
    release = _in_flight.get(kernel_id)
    if release is None:
        release = asyncio.ensure_future(_release(kernel_manager, kernel_id, timeout_seconds))
        _in_flight[kernel_id] = release
        release.add_done_callback(lambda _: _in_flight.pop(kernel_id, None))
    # Shielded: a request that goes away does not cancel the release the others wait for.
    return await asyncio.shield(release)


async def _release(kernel_manager, kernel_id: str, timeout_seconds: float) -> CacheRelease:
    kernel = kernel_manager.get_kernel(kernel_id)
    state = getattr(kernel, "execution_state", None)
    if state == "busy":
        raise ReleaseRefused(
            "busy", gettext("the kernel is running a cell: try again when it is idle")
        )
    not_idle = gettext("the kernel is {state}: try again when it is idle")
    if state in ("restarting", "dead"):
        # It would answer late or never: the request would only time out.
        raise ReleaseRefused("busy", not_idle.format(state=state))
    deadline = time.monotonic() + timeout_seconds
    # Only the shell channel: its reply is all that is read.
    client = await shell_client(kernel)
    try:
        # "starting" may be a kernel no client has talked to, ready for long (kernel_ready.py):
        # one that answers its kernel_info is.
        if state == "starting" and not await answers(client, timeout_seconds):
            raise ReleaseRefused("busy", not_idle.format(state=state))
        try:
            reply = await client.execute(
                "",
                silent=True,
                store_history=False,
                user_expressions={EXPRESSION_NAME: RELEASE_EXPRESSION},
                allow_stdin=False,
                # Were it to fail, the cells the notebook queued meanwhile must still run.
                stop_on_error=False,
                reply=True,
                timeout=max(0.0, deadline - time.monotonic()),
            )
        except (TimeoutError, asyncio.TimeoutError):
            message = gettext(
                "the kernel did not answer within {seconds} s; it may still release the memory "
                "once it is idle"
            )
            raise ReleaseRefused(
                "timeout", message.format(seconds=f"{timeout_seconds:g}")
            ) from None
    finally:
        client.stop_channels()
    # Even an answer within the bound takes a literal's parse: off the event loop.
    return await blocking.run(
        blocking.REQUESTS,
        parse_reply,
        reply["content"],
        timeout_seconds=blocking.REQUEST_WORK_SECONDS,
    )
