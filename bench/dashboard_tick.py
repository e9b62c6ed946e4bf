"""The dashboard's tick in a real JupyterLab: main-thread time a second in Debian's Chromium.

    jlpm build:prod && python bench/dashboard_tick.py      (`make bench` runs it)

A real JupyterLab server reads the 8x V100S capture through the tests' fake nvidia-smi every
second and starts with an hour of its readings (tests/seeded_history.py). Chromium opens /lab
and measures, through the DevTools protocol (``Performance.getMetrics``' TaskDuration), the
page's main-thread time a second: first with no GPU view open (the status bar only: the
baseline), then with the GPU Dashboard open on its 1 minute and its 1 hour window, every chart
drawn. The dashboard's tick is the difference; goal (issue 28): under 16 ms, one frame, and an
hour's window no dearer than a minute's.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "jupyter_server_ext"))

from tests.loaded_server import KERNEL, V100S  # noqa: E402
from tests.prometheus_lab import running_jupyter_server  # noqa: E402
from tests.replay import SMI_FIXTURES  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        environment = {
            "FAKE_SMI_XML": str(SMI_FIXTURES / V100S),
            "SEEDED_HISTORY_XML": str(SMI_FIXTURES / V100S),
            "SEEDED_HISTORY_KERNEL": KERNEL,
            "PYTHONPATH": str(REPO / "jupyter_server_ext"),
        }
        with running_jupyter_server(
            folder,
            environment,
            "--ServerApp.jpserver_extensions=tests.seeded_history=True",
            "--LabApp.expose_app_in_browser=True",
            "--GpuMonitor.interval=1",
        ) as server:
            subprocess.run(
                ["node", str(REPO / "bench" / "dashboard_tick.mjs"), server.url, server.token],
                check=True,
            )


if __name__ == "__main__":
    main()
