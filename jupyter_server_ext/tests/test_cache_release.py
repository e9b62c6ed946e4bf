"""Releasing a kernel's cached GPU memory (``POST kernels/<id>/release-cached-memory``) in real
ipykernel kernels through a real Jupyter server: one of the server's own Python, and one of
``.kernel-envs/torch-cpu``, where torch is installed (`make kernel-envs`)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from types import SimpleNamespace

import pytest
import tornado
from jupyter_server.auth.authorizer import AllowAllAuthorizer
from jupyterlab_gpu_monitor.kernel.cache_release import (
    CacheRelease,
    ReleaseRefused,
    parse_reply,
    release_cached_memory,
)
from tornado.httpclient import AsyncHTTPClient

from .replay import server_config
from .test_inspector_routes import status_of
from .test_kernels import kernel_pid, run_in_kernel, start_session
from .test_probe import environment

TORCH_KERNEL = "gpu-monitor-torch-cpu"
UNKNOWN_KERNEL = "00000000-0000-0000-0000-000000000000"
# Kernel code: the names a cell gained since `names_before = set(globals())`, without
# IPython's own (`_i3`, `_`, ...), which every cell adds.
NO_NEW_NAMES = (
    "new = {n for n in globals() if not n.startswith('_')} - names_before - {'names_before'}\n"
    "assert new == set(), new"
)


@pytest.fixture
def torch_kernelspec(jp_data_dir) -> str:
    """A kernelspec of the server whose Python is the torch-cpu environment's."""
    python = environment("torch-cpu") / "bin" / "python"
    spec_dir = jp_data_dir / "kernels" / TORCH_KERNEL
    spec_dir.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec = {"argv": argv, "display_name": "torch-cpu", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return TORCH_KERNEL


async def torch_notebook(jp_fetch, path: str) -> str:
    """The kernel id of a new notebook session in the torch-cpu environment."""
    body = {"path": path, "type": "notebook", "kernel": {"name": TORCH_KERNEL}}
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    return json.loads(response.body)["kernel"]["id"]


async def until_idle(serverapp, kernel_id: str) -> None:
    """Until the server has seen the kernel go idle: the status message follows the cell's
    reply, a moment after run_in_kernel returned."""
    kernel = serverapp.kernel_manager.get_kernel(kernel_id)
    for _ in range(100):
        if kernel.execution_state == "idle":
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the kernel stayed {kernel.execution_state}")


def release(jp_fetch, kernel_id: str, **options):
    return jp_fetch(
        "gpu-monitor", "api", "kernels", kernel_id, "release-cached-memory",
        method="POST", body=b"", **options,
    )  # fmt: skip


async def released(jp_fetch, kernel_id: str) -> dict:
    return json.loads((await release(jp_fetch, kernel_id)).body)


async def test_a_kernel_that_never_imported_torch_gets_nothing_imported_nor_named(
    jp_fetch, jp_serverapp, torch_kernelspec
):
    kernel_id = await torch_notebook(jp_fetch, "clean.ipynb")
    await run_in_kernel(jp_serverapp, kernel_id, "names_before = set(globals())")
    await until_idle(jp_serverapp, kernel_id)

    answer = await released(jp_fetch, kernel_id)

    assert answer == {
        "outcome": "torch_not_imported",
        "reserved_before_bytes": None,
        "reserved_after_bytes": None,
        "released_bytes": None,
    }
    # torch is installed in this kernel's environment, and still not imported.
    await run_in_kernel(
        jp_serverapp, kernel_id, "assert 'torch' not in __import__('sys').modules, 'imported'"
    )
    await run_in_kernel(jp_serverapp, kernel_id, NO_NEW_NAMES)


async def test_torch_without_cuda_has_nothing_to_release_and_leaves_no_trace_in_history(
    jp_fetch, jp_serverapp, torch_kernelspec
):
    kernel_id = await torch_notebook(jp_fetch, "cpu.ipynb")
    counted = "(get_ipython().execution_count, len(In))"  # the In[] number and the history
    await run_in_kernel(
        jp_serverapp, kernel_id, f"import torch\nseen = {counted}\nnames_before = set(globals())"
    )
    await until_idle(jp_serverapp, kernel_id)

    answer = await released(jp_fetch, kernel_id)

    assert answer["outcome"] == "cuda_not_initialized" and answer["released_bytes"] is None
    # The next cell counts one more than the last: the release took no number, no history.
    await run_in_kernel(
        jp_serverapp, kernel_id, f"assert {counted} == (seen[0] + 1, seen[1] + 1), {counted}"
    )
    await run_in_kernel(jp_serverapp, kernel_id, NO_NEW_NAMES)


# Kernel code: a stand-in for torch's CUDA side on two GPUs, with 3 GiB and 1 GiB reserved of
# which empty_cache() gives back all but 512 MiB on GPU 0; only what gc.collect() finds
# unreachable (a reference cycle holding a "tensor") is freed before it. CUDA itself needs a GPU.
STAND_IN_TORCH = """
import gc, sys, types
GiB, MiB = 1024**3, 1024**2
class _Cuda:
    reserved = [3 * GiB, 1 * GiB]
    held_by_cycles = 0
    def is_initialized(self): return True
    def device_count(self): return 2
    def memory_reserved(self, device): return self.reserved[device]
    def empty_cache(self):
        assert self.held_by_cycles == 0, 'empty_cache ran before gc.collect'
        self.reserved = [512 * MiB, 0]
class _Tensor:
    def __del__(self): torch.cuda.held_by_cycles -= 1
torch = types.ModuleType('torch')
torch.cuda = _Cuda()
sys.modules['torch'] = torch
cycle = [_Tensor()]; cycle.append(cycle); torch.cuda.held_by_cycles = 1
del cycle
"""


async def test_released_memory_is_what_torch_reserved_before_less_after_gc_then_empty_cache(
    jp_fetch, jp_serverapp
):
    session = await start_session(jp_fetch, "train.ipynb")
    kernel_id = session["kernel"]["id"]
    await run_in_kernel(jp_serverapp, kernel_id, "import gc; gc.disable()\n" + STAND_IN_TORCH)
    await until_idle(jp_serverapp, kernel_id)

    answer = await released(jp_fetch, kernel_id)

    gib = 1024**3
    assert answer == {
        "outcome": "released",
        "reserved_before_bytes": 4 * gib,
        "reserved_after_bytes": gib // 2,
        "released_bytes": 4 * gib - gib // 2,
    }


# Kernel code, after STAND_IN_TORCH: each empty_cache() counted, and slow enough (a GPU with
# frees pending) that every request of a burst arrives while the first one runs.
COUNTED_EMPTY_CACHE = """
import time
empty_cache_calls = 0
_empty_cache = torch.cuda.empty_cache
def _counted():
    global empty_cache_calls
    empty_cache_calls += 1
    time.sleep(2)
    _empty_cache()
torch.cuda.empty_cache = _counted
"""


async def test_twenty_releases_of_one_kernel_at_once_all_get_the_one_release_it_ran(
    jp_fetch, jp_serverapp, jp_http_port, jp_base_url, jp_auth_header
):
    session = await start_session(jp_fetch, "clicked-twenty-times.ipynb")
    kernel_id = session["kernel"]["id"]
    await run_in_kernel(jp_serverapp, kernel_id, STAND_IN_TORCH + COUNTED_EMPTY_CACHE)
    await until_idle(jp_serverapp, kernel_id)
    # Twenty browser tabs: as many connections at once (jp_fetch's client holds 10).
    client = AsyncHTTPClient(force_instance=True, max_clients=20)
    url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}gpu-monitor/api/kernels/{kernel_id}"

    answers = await asyncio.gather(
        *(
            client.fetch(
                f"{url}/release-cached-memory",
                method="POST",
                body=b"",
                headers=jp_auth_header,
                raise_error=False,
                request_timeout=60,
            )
            for _ in range(20)
        )
    )

    assert [answer.code for answer in answers] == [200] * 20, [a.body for a in answers]
    gib = 1024**3
    assert {answer.body for answer in answers} == {
        json.dumps(
            {
                "outcome": "released",
                "reserved_before_bytes": 4 * gib,
                "reserved_after_bytes": gib // 2,
                "released_bytes": 4 * gib - gib // 2,
            }
        ).encode()
    }
    await run_in_kernel(jp_serverapp, kernel_id, "assert empty_cache_calls == 1, empty_cache_calls")


def test_a_reply_that_released_memory_gives_the_bytes_the_gpus_got_back():
    # An execute_reply's content as ipykernel sends it (IPython pretty-prints the dict).
    content = {
        "status": "ok",
        "execution_count": 0,
        "user_expressions": {
            "gpu_monitor_release": {
                "status": "ok",
                "data": {
                    "text/plain": "{'outcome': 'released',\n"
                    " 'reserved_before_bytes': 4026531840,\n"
                    " 'reserved_after_bytes': 589299712}"
                },
                "metadata": {},
            }
        },
        "payload": [],
    }
    assert parse_reply(content) == CacheRelease("released", 4026531840, 589299712, 3437232128)


def test_a_reply_that_is_no_answer_of_ours_is_refused_without_evaluating_it():
    content = {
        "status": "ok",
        "user_expressions": {
            "gpu_monitor_release": {
                "status": "ok",
                "data": {"text/plain": "__import__('os').system('true')"},
            }
        },
    }
    with pytest.raises(ReleaseRefused) as refused:
        parse_reply(content)
    assert refused.value.kind == "failed" and "unexpected" in refused.value.message


async def test_a_torch_module_of_the_users_own_is_a_clear_error(jp_fetch, jp_serverapp, tmp_path):
    # A notebook folder with a torch.py of its own, imported in place of PyTorch.
    (tmp_path / "own-torch").mkdir()
    (tmp_path / "own-torch" / "torch.py").write_text("VERSION = 'mine'\n")
    session = await start_session(jp_fetch, "shadow.ipynb")
    kernel_id = session["kernel"]["id"]
    code = f"import sys; sys.path.insert(0, {str(tmp_path / 'own-torch')!r}); import torch"
    await run_in_kernel(jp_serverapp, kernel_id, code)
    await until_idle(jp_serverapp, kernel_id)

    code, message = await status_of(release(jp_fetch, kernel_id))

    assert code == 502
    assert message.startswith("the kernel could not release its cached GPU memory: ")
    assert "AttributeError" in message and "cuda" in message


async def test_a_kernel_running_a_cell_is_refused_not_queued(jp_fetch, jp_serverapp):
    session = await start_session(jp_fetch, "busy.ipynb")
    kernel_id = session["kernel"]["id"]
    await run_in_kernel(jp_serverapp, kernel_id, "import time")
    kernel = jp_serverapp.kernel_manager.get_kernel(kernel_id)
    client = kernel.client()
    client.start_channels()
    try:
        client.execute("time.sleep(5)")  # not waited for
        for _ in range(100):
            if kernel.execution_state == "busy":
                break
            await asyncio.sleep(0.05)
        assert kernel.execution_state == "busy"

        code, message = await status_of(release(jp_fetch, kernel_id))
    finally:
        client.stop_channels()
    assert code == 409
    assert message == "the kernel is running a cell: try again when it is idle"


async def test_a_kernel_that_does_not_answer_is_given_up_without_holding_the_server(
    jp_fetch, jp_serverapp
):
    session = await start_session(jp_fetch, "stopped.ipynb")
    kernel_id = session["kernel"]["id"]
    await run_in_kernel(jp_serverapp, kernel_id, "x = 1")
    await until_idle(jp_serverapp, kernel_id)
    pid = kernel_pid(jp_serverapp, kernel_id)
    os.kill(pid, signal.SIGSTOP)  # a kernel stuck where it cannot answer (in C code, swapped)
    try:
        asking = asyncio.ensure_future(
            release_cached_memory(jp_serverapp.kernel_manager, kernel_id, timeout_seconds=1.5)
        )
        # The server answers meanwhile.
        assert (await jp_fetch("api", "status")).code == 200
        with pytest.raises(ReleaseRefused) as refused:
            await asking
    finally:
        os.kill(pid, signal.SIGCONT)
    assert refused.value.kind == "timeout"
    assert refused.value.message.startswith("the kernel did not answer within 1.5 s")


async def test_an_unknown_kernel_is_404(jp_fetch):
    code, message = await status_of(release(jp_fetch, UNKNOWN_KERNEL))
    assert code == 404 and message == "no such kernel on this server"


async def test_an_anonymous_request_runs_nothing(jp_fetch, jp_serverapp):
    session = await start_session(jp_fetch, "mine.ipynb")
    with pytest.raises(tornado.httpclient.HTTPClientError) as raised:
        await release(jp_fetch, session["kernel"]["id"], headers={"Authorization": ""})
    assert raised.value.code == 403


class ReadOnlyAuthorizer(AllowAllAuthorizer):
    """A user who may look at everything but run no code in kernels."""

    def is_authorized(self, handler, user, action, resource) -> bool:
        return not (resource == "kernels" and action == "execute")


@pytest.mark.parametrize(
    "jp_server_config",
    [{**server_config(interval=0.5), "ServerApp": {
        **server_config()["ServerApp"], "authorizer_class": ReadOnlyAuthorizer}}],
)  # fmt: skip
async def test_a_user_who_may_not_run_code_in_kernels_may_not_release(jp_fetch, jp_serverapp):
    kernel = await jp_serverapp.kernel_manager.start_kernel(kernel_name="python3")
    assert (await jp_fetch("gpu-monitor", "api", "kernels")).code == 200
    with pytest.raises(tornado.httpclient.HTTPClientError) as raised:
        await release(jp_fetch, kernel)
    assert raised.value.code == 403


@pytest.mark.parametrize("state", ["restarting", "dead"])
async def test_a_kernel_that_is_not_idle_is_not_asked(state):
    # A kernel manager's view of a kernel in that state: asked, it would answer late or never.
    kernel = SimpleNamespace(execution_state=state, client=None)
    manager = SimpleNamespace(get_kernel=lambda kernel_id: kernel)
    with pytest.raises(ReleaseRefused) as refused:
        await release_cached_memory(manager, "k")
    assert refused.value.kind == "busy"
    assert refused.value.message == f"the kernel is {state}: try again when it is idle"


async def rest_kernel(jp_fetch) -> str:
    """A kernel started through the REST API, as a script or another tool starts one; no
    websocket ever connects to it."""
    response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3"}))
    return json.loads(response.body)["id"]


async def listed_state(jp_fetch, kernel_id: str) -> str:
    kernels = json.loads((await jp_fetch("gpu-monitor", "api", "kernels")).body)
    (kernel,) = [k for k in kernels if k["kernel_id"] == kernel_id]
    return kernel["execution_state"]


async def test_a_kernel_no_client_talked_to_is_released_not_refused_as_starting(
    jp_fetch, jp_serverapp
):
    kernel_id = await rest_kernel(jp_fetch)
    assert jp_serverapp.kernel_manager.get_kernel(kernel_id).execution_state == "starting"

    answer = await released(jp_fetch, kernel_id)

    assert answer["outcome"] == "torch_not_imported"


async def test_a_kernel_no_client_talked_to_is_listed_idle_once_ready(jp_fetch):
    kernel_id = await rest_kernel(jp_fetch)
    states = [await listed_state(jp_fetch, kernel_id)]
    for _ in range(100):  # it may still be importing ipykernel
        if states[-1] != "starting":
            break
        await asyncio.sleep(0.2)
        states.append(await listed_state(jp_fetch, kernel_id))
    assert states[-1] == "idle", states
