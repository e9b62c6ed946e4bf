"""A package index on loopback, of small wheels built in the test, and the environment pip and
uv run in against it: what the export and fix tests install from, as from PyPI or PyTorch's
index, with nothing leaving the machine.

The index is a folder served by ``http.server``: its directory listings are the simple index
pages pip and uv read, so a wheel at ``<root>/<index>/<project>/`` is in the index
``<url>/<index>``. The wheels hold one module each; their names, versions (PyTorch's local
versions too: ``+cpu``, ``+cu130``) and dependencies give the shape a test needs.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def build_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A pure-Python wheel as the wheel spec has it (a module, METADATA, WHEEL, RECORD) of
    ``name`` at ``version``, depending on ``requires``, written into ``folder``."""
    module = name.replace("-", "_")
    info = f"{module}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": f"__version__ = {version!r}\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        "Requires-Python: >=3.9\n" + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = [
        f"{path},sha256={_digest(text)},{len(text.encode())}\n" for path, text in files.items()
    ]
    files[f"{info}/RECORD"] = "".join(record) + f"{info}/RECORD,,\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def _digest(text: str) -> str:
    raw = hashlib.sha256(text.encode()).digest()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@contextmanager
def served(root: Path) -> Iterator[str]:
    """``root`` served over HTTP on loopback for as long as the block runs; its URL."""
    with serving(partial(_Quiet, directory=str(root))) as url:
        yield url


@contextmanager
def serving(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """An HTTP server on loopback answering with ``handler`` for as long as the block runs;
    its URL. It stops with the block, whatever happens in it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # A short poll: shutting down waits for it.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Not on the test's output."""


def isolated_environment(tmp_path: Path) -> dict[str, str]:
    """The environment pip and uv run in: no configuration file of the machine or the user and
    no PIP_/UV_ variable (this machine's find-links hold a real torch), caches in the test's
    folder."""
    environ = {
        key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "UV_"))
    }
    environ.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        PIP_CACHE_DIR=str(tmp_path / "pip-cache"),
        UV_CACHE_DIR=str(tmp_path / "uv-cache"),
        # No user or system uv.toml (a project's pyproject.toml still counts: UV_NO_CONFIG
        # would drop that too).
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_CONFIG_DIRS=str(tmp_path / "config"),
        UV_PYTHON_DOWNLOADS="never",
    )
    return environ
