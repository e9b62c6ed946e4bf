"""A real ``jupyter server`` with the extension, on loopback with a token of its own, and a client
for our routes whose every answer is checked against the REST contract.

The GPU check (scripts/gpu_check) asks it about a kernel on a real GPU; the payload recorder
(scripts/record_payloads.py) records its answers for the frontend's tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from jupyterlab_gpu_monitor.contract import validator
from tornado.httpclient import AsyncHTTPClient, HTTPClientError

# How long a server may take to answer its first request: a cold start on a loaded machine
# imports JupyterLab's server pieces and our extension.
START_TIMEOUT_SECONDS = 90


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Api:
    """The server's routes, with its token; every answer of ours checked against the contract."""

    def __init__(self, base: str, token: str, problems: dict[str, list[str]]):
        self._http = AsyncHTTPClient()
        self._base = base
        self._headers = {"Authorization": f"token {token}"}
        # Route -> what the contract found wrong in its last answer (empty: nothing).
        self.problems = problems

    async def call(self, method: str, path: str, body=None, payload: str | None = None):
        """The JSON answer of ``path``; an answer of ours checked against ``payload``."""
        response = await self._http.fetch(
            f"{self._base}/{path}",
            method=method,
            headers=self._headers,
            body=json.dumps(body) if body is not None else None,
            raise_error=False,
        )
        if response.code >= 400:
            raise RuntimeError(f"{method} {path}: {response.code} {response.body[:300]!r}")
        answer = json.loads(response.body) if response.body else None
        if payload is not None:
            found = [error.message[:200] for error in validator(payload).iter_errors(answer)]
            self.problems[f"{method} {path.split('?')[0]}"] = found
        return answer

    async def open_notebook(self, path: str, kernel_name: str) -> str:
        """A notebook session on ``path`` with a new kernel of ``kernel_name``; its kernel id."""
        session = await self.call(
            "POST",
            "api/sessions",
            {"path": path, "name": path, "type": "notebook", "kernel": {"name": kernel_name}},
        )
        return session["kernel"]["id"]


def write_kernelspec(folder: Path, name: str, python: str, display_name: str) -> None:
    """A kernelspec ``name`` in the server's data folder that runs ipykernel with ``python``."""
    spec = folder / "data" / "kernels" / name
    spec.mkdir(parents=True, exist_ok=True)
    argv = [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": display_name, "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel))


def _environment(folder: Path, package_path: str, monitor: dict) -> dict[str, str]:
    """Jupyter's folders of its own (no user's config or kernels) and the notebooks' root, our
    ``GpuMonitor`` settings, and our package's tree first on the path of the server and of the
    kernels it starts."""
    config, data, runtime, root = (folder / name for name in ("config", "data", "runtime", "root"))
    for path in (config, data, runtime, root):
        path.mkdir(parents=True, exist_ok=True)
    settings = {
        "ServerApp": {"jpserver_extensions": {"jupyterlab_gpu_monitor": True}},
        "GpuMonitor": monitor,
    }
    (config / "jupyter_server_config.json").write_text(json.dumps(settings))
    path = os.pathsep.join(filter(None, [package_path, os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_DATA_DIR": str(data),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYTHONPATH": path,
    }


async def _wait_until_up(api: Api, server: asyncio.subprocess.Process) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if server.returncode is not None:
            raise RuntimeError(f"jupyter server exited with {server.returncode}")
        try:
            await api.call("GET", "api/status")
            return
        except (OSError, RuntimeError, HTTPClientError):
            await asyncio.sleep(0.3)  # not listening yet, or not answering yet
    raise RuntimeError(f"jupyter server did not answer within {START_TIMEOUT_SECONDS} s")


@asynccontextmanager
async def running_server(
    folder: Path, log: Path, package_path: str, monitor: dict, problems: dict[str, list[str]]
) -> AsyncIterator[Api]:
    """A server in ``folder`` (its kernelspecs in ``folder/data/kernels``) with ``monitor`` as
    its ``GpuMonitor`` settings, its output in ``log``; stopped, kernels and all, on exit."""
    environment = _environment(folder, package_path, monitor)
    port, token = free_port(), secrets.token_hex(16)
    with log.open("wb") as output:
        server = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "jupyter_server", f"--port={port}", "--ip=127.0.0.1",
              "--ServerApp.port_retries=0", "--no-browser", f"--IdentityProvider.token={token}",
              "--ServerApp.allow_root=True", f"--ServerApp.root_dir={folder / 'root'}"],
            stdout=output, stderr=asyncio.subprocess.STDOUT, env=environment,
        )  # fmt: skip
    try:
        api = Api(f"http://127.0.0.1:{port}", token, problems)
        await _wait_until_up(api, server)
        yield api
    finally:
        server.terminate()  # jupyter_server shuts its kernels down on SIGTERM
        try:
            await asyncio.wait_for(server.wait(), 30)
        except asyncio.TimeoutError:
            server.kill()
            await server.wait()
