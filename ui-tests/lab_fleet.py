"""A lab of three machines for tests/lab.spec.ts: a real Prometheus (Debian's) evaluating the
lab's rules and scraping every second node-1, a JupyterLab of this folder's test configuration
(user ana, the two-A5000 capture), node-2, cleo's jupyter server (the eight V100S under load),
and node-3, dan's (eight idle H100 80GB), each with the fake nvidia-smi replaying its real
capture; and two machines with no server of ours whose exporters' real scrapes it serves:
ub20-a100-k8s, a Kubernetes node's DCGM exporter (an A100 in MIG mode), and gpu-box-7, a
workstation's nvidia_gpu_exporter (an H100 under load; its capture's masked uuid, node-3's GPU
0's masked alike, replaced: two GPUs, not one).

    python lab_fleet.py NODE1_PORT

prints one JSON line, ``{"url": ..., "prometheus": ...}``, once every part answers; SIGUSR1
stops node-3's server (the machine stops reporting); SIGTERM or SIGINT stops everything.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import threading
from contextlib import ExitStack
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "jupyter_server_ext"))

from tests.prometheus_lab import (  # noqa: E402
    LAB_RULES,
    free_port,
    rules_every_second,
    running_jupyter_server,
    running_process,
    running_prometheus,
    serving_exporter_machines,
)
from tests.replay import SMI_FIXTURES  # noqa: E402

FOLDER = HERE / ".lab-fleet"
# gpu-box-7's H100, masked as the captures mask (GPU 0 of no other capture).
GPU_BOX_UUID = "00000000-0000-0000-0000-0000000000b7"
OTHERS = {
    "cleo": ("node-2", "xml/tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml"),
    "dan": ("node-3", "xml/h100-80gb-hbm3-x8-driver-580.105.08-v13.xml"),
}


def main(node1_port: int) -> None:
    shutil.rmtree(FOLDER, ignore_errors=True)
    ports = {user: free_port() for user in OTHERS}
    targets = [f"127.0.0.1:{port}" for port in (node1_port, *ports.values())]
    job = {
        "job_name": "jupyter",
        "metrics_path": "/gpu-monitor/metrics",
        "static_configs": [{"targets": targets}],
    }
    stop, stop_node3 = threading.Event(), threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGUSR1, lambda *_: stop_node3.set())
    with ExitStack() as running:
        FOLDER.mkdir(parents=True)
        # The lab's rules, evaluated every second: the ledger fills within the test.
        rules = [rules_every_second(LAB_RULES, FOLDER)]
        exporters = running.enter_context(
            serving_exporter_machines(uuids={"nvidia_gpu_exporter": GPU_BOX_UUID})
        )
        prometheus = running.enter_context(
            running_prometheus(FOLDER / "prometheus", [job, *exporters], rule_files=rules)
        )
        others = {
            user: running.enter_context(
                running_jupyter_server(
                    FOLDER / user,
                    {"FAKE_SMI_XML": str(SMI_FIXTURES / capture)},
                    f"--GpuMonitor.metrics_host={host}",
                    f"--GpuMonitor.metrics_user={user}",
                    "--GpuMonitor.metrics_unauthenticated_networks=127.0.0.0/8",
                    port=ports[user],
                )
            )
            for user, (host, capture) in OTHERS.items()
        }
        url = f"http://127.0.0.1:{node1_port}"
        node1 = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--config",
            str(HERE / "jupyter_server_test_config.py"),
            f"--port={node1_port}",
            "--no-browser",
        ]
        environment = {**os.environ, "GALATA_LAB_PROMETHEUS": prometheus}
        log = FOLDER / "node-1.log"
        running.enter_context(running_process(node1, log, f"{url}/lab", "node-1", environment))
        print(json.dumps({"url": url, "prometheus": prometheus}), flush=True)
        while not stop.wait(0.2):
            if stop_node3.is_set():
                stop_node3.clear()
                others["dan"].process.terminate()


if __name__ == "__main__":
    main(int(sys.argv[1]))
