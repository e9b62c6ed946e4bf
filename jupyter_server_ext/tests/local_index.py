"""A package index on loopback, of small wheels built here, for running the fixes the inspector
gives (pip and uv install from it as from PyPI or PyTorch's index, nothing leaves the machine).

The wheels stand in for the torch family by their names, versions (with PyTorch's local
versions, ``+cpu`` and ``+cu130``) and dependencies; they hold one empty module each.
"""

from __future__ import annotations

import base64
import hashlib
import html
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def build_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A pure-Python wheel of ``name`` at ``version`` that depends on ``requires``."""
    module = name.replace("-", "_")
    dist_info = f"{module}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": f'__version__ = "{version}"\n',
        f"{dist_info}/METADATA": "\n".join(
            ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
            + [f"Requires-Dist: {requirement}" for requirement in requires]
        )
        + "\n",
        f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nGenerator: local_index\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [f"{path},sha256={_digest(text)},{len(text.encode())}" for path, text in files.items()]
    files[f"{dist_info}/RECORD"] = "\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def _digest(text: str) -> str:
    raw = hashlib.sha256(text.encode()).digest()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def write_simple_index(root: Path, wheels: list[Path]) -> None:
    """``root`` as a PEP 503 simple index of ``wheels``: ``<root>/<project>/index.html``."""
    projects: dict[str, list[Path]] = {}
    for wheel in wheels:
        project = wheel.name.split("-", 1)[0].replace("_", "-").lower()
        projects.setdefault(project, []).append(wheel)
    for project, files in projects.items():
        page = root / project
        page.mkdir(parents=True, exist_ok=True)
        links = "".join(
            f'<a href="{html.escape(wheel.name)}">{html.escape(wheel.name)}</a>\n'
            for wheel in files
        )
        (page / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
        for wheel in files:
            (page / wheel.name).write_bytes(wheel.read_bytes())


@contextmanager
def served(root: Path) -> Iterator[str]:
    """``root`` served over HTTP on loopback for as long as the block runs; its URL."""
    handler = partial(_QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Not on the test's output."""
