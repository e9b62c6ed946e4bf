"""Startup benchmark: what the extension adds to a server's start, as ratios of the same run.

    python bench/startup.py [--rounds 15]

1. Time from spawning ``jupyter server`` to its first answered ``GET /api/status``: with this
   extension as its only extension / with none (goal: at most 1.05). The two kinds of start
   alternate, in one process, so that both see the same machine.
2. Time to import the server module (``jupyterlab_gpu_monitor.extension``, into a Python that
   has imported jupyter_server already, as a server has) / time to import
   ``jupyter_server.serverapp`` itself, each in a fresh Python, alternating.

Configuration files are out of the way (an empty JUPYTER_CONFIG_DIR, JUPYTER_NO_CONFIG), so
that the extensions of this environment (JupyterLab's own, language packs) load in neither.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

IMPORT_SERVER = "import jupyter_server.serverapp"
IMPORT_OURS = "import jupyterlab_gpu_monitor.extension"


def _free_port() -> int:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return listener.getsockname()[1]


def _isolated_environment(config_dir: str) -> dict[str, str]:
    return {
        **os.environ,
        "JUPYTER_CONFIG_DIR": config_dir,
        "JUPYTER_NO_CONFIG": "1",
        "JUPYTER_PLATFORM_DIRS": "1",
    }


def time_to_first_status(extensions: dict[str, bool], environment: dict[str, str]) -> float:
    """Seconds from spawning a server with ``extensions`` to its first 200 on /api/status."""
    port, token = _free_port(), secrets.token_hex(8)
    with tempfile.TemporaryDirectory() as root:
        command = [
            sys.executable,
            "-m",
            "jupyter_server",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--ServerApp.open_browser=False",
            "--ServerApp.allow_root=True",
            *(f"--ServerApp.jpserver_extensions={name}={on}" for name, on in extensions.items()),
        ]
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/status", headers={"Authorization": f"token {token}"}
        )
        start = time.perf_counter()
        server = subprocess.Popen(
            command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            while True:
                try:
                    with urllib.request.urlopen(request, timeout=5) as answer:
                        if answer.status == 200:
                            return time.perf_counter() - start
                except (urllib.error.URLError, ConnectionError):
                    if server.poll() is not None:
                        raise RuntimeError(f"the server exited ({server.returncode})") from None
                    time.sleep(0.005)
        finally:
            server.terminate()
            server.wait(timeout=30)


def import_seconds(before: str, statement: str, environment: dict[str, str]) -> float:
    """Seconds ``statement`` takes in a fresh Python that has run ``before``."""
    program = (
        f"import time\n{before}\nstart = time.perf_counter()\n{statement}\n"
        "print(time.perf_counter() - start)"
    )
    answer = subprocess.run(
        [sys.executable, "-c", program], env=environment, capture_output=True, text=True
    )
    if answer.returncode != 0:
        raise RuntimeError(answer.stderr)
    return float(answer.stdout)


def _median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="starts of each kind")
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as config_dir:
        environment = _isolated_environment(config_dir)
        bare, ours = [], []
        time_to_first_status({}, environment)  # warm the file cache for both
        for _ in range(rounds):
            bare.append(time_to_first_status({}, environment))
            ours.append(time_to_first_status({"jupyterlab_gpu_monitor": True}, environment))
        ratio = statistics.median(ours) / statistics.median(bare)
        print(
            f"first GET /api/status, with the extension / bare: {ratio:.3f} "
            f"({_median_ms(ours)} / {_median_ms(bare)}, median of {rounds}; goal <= 1.05)"
        )
        server_import, our_import = [], []
        for _ in range(rounds):
            server_import.append(import_seconds("", IMPORT_SERVER, environment))
            our_import.append(import_seconds(IMPORT_SERVER, IMPORT_OURS, environment))
        ratio = statistics.median(our_import) / statistics.median(server_import)
        print(
            f"import of the server module / of jupyter_server.serverapp: {ratio:.3f} "
            f"({_median_ms(our_import)} / {_median_ms(server_import)}, median of {rounds})"
        )


if __name__ == "__main__":
    main()
