"""The notebooks' GPU ledger as a lab's Prometheus keeps it: a real jupyter server whose fake
nvidia-smi replays the two idle RTX A5000 of a workstation with the capture's process (llama-server,
22430 of GPU 0's 22437 MiB and 17246 of GPU 1's 17253) as a real kernel's, and a real Prometheus
(Debian's) scraping the server every second and evaluating the lab's recording rules every
second; the server asks it for the lab's ledger."""

from __future__ import annotations

import json
import secrets
import time

import pytest
from jupyterlab_gpu_monitor.kernel.ledger import notebook_label

from .prometheus_lab import (
    LAB_RULES,
    free_port,
    query,
    rules_every_second,
    running_jupyter_server,
    running_prometheus,
    wait_for,
)
from .replay import SMI_FIXTURES
from .test_cli import run

A5000_XML = SMI_FIXTURES / "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml"
CAPTURE_PID = "100477"
IDLE_HELD = "jupyter_notebook_gpu_idle_held_seconds_total"


def held_seconds(prometheus: str, gpu: str) -> list[tuple[float, float]]:
    """The idle-held counter of GPU ``gpu`` as Prometheus stored it over the last minute: each
    scrape's time and value."""
    (series,) = query(prometheus, f'{IDLE_HELD}{{gpu="{gpu}"}}[1m]')
    return [(float(at), float(value)) for at, value in series["values"]]


def test_a_kernel_idle_holding_gpus_counts_its_time_within_a_scrape(tmp_path):
    control = tmp_path / "fake-smi-control.json"
    control.write_text("{}")
    port, token = free_port(), secrets.token_hex(16)
    token_file = tmp_path / "token"
    token_file.write_text(token)
    job = {
        "job_name": "jupyter",
        "metrics_path": "/gpu-monitor/metrics",
        "authorization": {"credentials_file": str(token_file)},
        "static_configs": [{"targets": [f"127.0.0.1:{port}"]}],
    }
    replay = {"FAKE_SMI_XML": str(A5000_XML), "FAKE_SMI_CONTROL": str(control)}
    rules = rules_every_second(LAB_RULES, tmp_path)
    with (
        running_prometheus(tmp_path / "prometheus", [job], rule_files=[rules]) as prometheus,
        running_jupyter_server(
            tmp_path / "jupyter",
            replay,
            "--GpuMonitor.interval=0.5",
            "--GpuMonitor.metrics_host=node-1",
            "--GpuMonitor.metrics_user=ana",
            f"--GpuMonitor.lab_prometheus_url={prometheus}",
            port=port,
            token=token,
        ) as jupyter,
    ):
        pid = jupyter.open_notebook("ledger.ipynb")
        # From now on the capture's process is the kernel: it idle-holds both GPUs.
        control.write_text(json.dumps({"FAKE_SMI_PIDS": f"{CAPTURE_PID}:{pid}"}))
        wait_for(prometheus, f"{IDLE_HELD} > 12", lambda result: len(result) == 2, 60)

        (series, _) = query(prometheus, IDLE_HELD)
        assert series["metric"] | {"gpu": "", "uuid": ""} == {
            "__name__": IDLE_HELD,
            "job": "jupyter",
            "instance": f"127.0.0.1:{port}",
            "notebook": notebook_label("ledger.ipynb", "hash"),
            "host": "node-1",
            "user": "ana",
            "gpu": "",
            "uuid": "",
        }
        # Between two scrapes, the counter grew by the time between them (times the kernel's
        # share of the GPU's memory), give or take the half second between two reads.
        for gpu, share in (("0", 22430 / 22437), ("1", 17246 / 17253)):
            scrapes = held_seconds(prometheus, gpu)
            (first_at, first), (last_at, last) = scrapes[0], scrapes[-1]
            assert last_at - first_at >= 10
            assert last - first == pytest.approx((last_at - first_at) * share, abs=1.0)

        # The lab's ledger for the last hour, from the recording rules: the notebook's idle-held
        # GPU-hours, both GPUs together, as the counters say.
        counted = sum(float(each["value"][1]) for each in query(prometheus, IDLE_HELD)) / 3600
        label = notebook_label("ledger.ipynb", "hash")
        ledger = json.loads(jupyter.get("gpu-monitor/api/lab/ledger?since=3600"))
        assert (ledger["since_seconds"], ledger["user"], ledger["error"]) == (3600, "ana", None)
        (row,) = ledger["notebooks"]
        # Her own notebook by its name, which her server knows; the series hold its hash.
        assert (row["user"], row["notebook"], row["own"], row["busy_hours"]) == (
            "ana",
            "ledger.ipynb",
            True,
            0,
        )
        # The rule's last evaluation, up to a second and a scrape before the counters read.
        assert row["idle_held_hours"] == pytest.approx(counted, abs=4 / 3600)
        # The same in a terminal (by the hash: no server there), as a table with its digest,
        # and as CSV.
        lab = ("--lab-prometheus-url", prometheus, "--GpuMonitor.metrics_user=ana")
        table = run("lab", "report", "--since", "1h", *lab)
        assert table.returncode == 0, table.stderr
        heads, line, digest = table.stdout.splitlines()
        assert heads.split() == ["USER", "NOTEBOOK", "BUSY", "GPU-h", "IDLE-HELD", "GPU-h"]
        assert line.split()[:4] == ["ana", label, "(yours)", "0.0"]
        assert digest.startswith("1 notebook held 0.0 GPU-hours at under 30 %; the largest: ana's")
        as_csv = run("lab", "report", "--since", "1h", "--csv", *lab).stdout.splitlines()
        assert as_csv[0] == "user,notebook,own,busy_gpu_hours,idle_held_gpu_hours"
        assert as_csv[1].startswith(f"ana,{label},true,0.000,0.0")

        # The kernel lets go (the capture's process is someone else's again): no more time.
        control.write_text("{}")
        time.sleep(2)
        (stopped,) = query(prometheus, f'{IDLE_HELD}{{gpu="0"}}')
        time.sleep(3)
        (later,) = query(prometheus, f'{IDLE_HELD}{{gpu="0"}}')
        assert float(later["value"][1]) == float(stopped["value"][1])
