"""``GET lab``: every machine of a lab, from a real Prometheus (Debian's) scraping real jupyter
servers on loopback, each with the fake nvidia-smi replaying a real capture: node-1, a
workstation with two RTX A5000 on which two users run a server each (JupyterHub), and node-2,
a server with eight Tesla V100S."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from jupyterlab_gpu_monitor.cli.lab import format_lab
from jupyterlab_gpu_monitor.config import GpuMonitor
from jupyterlab_gpu_monitor.contract import constant
from jupyterlab_gpu_monitor.gpu.model import MIB
from jupyterlab_gpu_monitor.kernel.ledger import notebook_label
from jupyterlab_gpu_monitor.lab import service
from jupyterlab_gpu_monitor.lab.view import exporter_host, lab_nodes, nodes_json
from jupyterlab_gpu_monitor.metrics import ServerIdentity
from tornado.httpclient import HTTPClientError

from .prometheus_lab import (
    exporters_lab_view,
    free_port,
    running_jupyter_server,
    running_prometheus,
    serving_exporter_machines,
)
from .replay import SMI_FIXTURES, server_config
from .test_cli import assert_in_command_terms, run
from .test_lab_ledger import CAPTURE_PID

A5000 = SMI_FIXTURES / "xml/rtx-a5000-x2-driver-590.44-v13-2procs.xml"
V100S = SMI_FIXTURES / "xml/tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml"


def lab_of(server) -> dict:
    return json.loads(server.get("gpu-monitor/api/lab"))


def until(server, done, timeout_seconds: float = 60) -> dict:
    """The lab's view once ``done`` says it is there (Prometheus takes its targets in every
    5 s, and the view is read again every 5 s)."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        view = lab_of(server)
        if done(view):
            return view
        assert time.monotonic() < deadline, json.dumps(view)[:2000]
        time.sleep(0.5)


def test_the_lab_shows_each_machine_once_with_its_notebooks_and_which_stopped(tmp_path: Path):
    servers = {
        "ana": ("node-1", A5000),
        "ben": ("node-1", A5000),  # the same workstation, another user's server
        "cleo": ("node-2", V100S),
    }
    ports = {user: free_port() for user in servers}
    tokens = {user: secrets.token_hex(16) for user in servers}
    jobs = []
    for user in servers:
        token_file = tmp_path / f"{user}-token"
        token_file.write_text(tokens[user])
        jobs.append(
            {
                "job_name": user,
                "metrics_path": "/gpu-monitor/metrics",
                "authorization": {"credentials_file": str(token_file)},
                "static_configs": [{"targets": [f"127.0.0.1:{ports[user]}"]}],
            }
        )
    control = tmp_path / "ana-fake-smi.json"
    control.write_text("{}")
    with ExitStack() as running:
        prometheus = running.enter_context(running_prometheus(tmp_path / "prometheus", jobs))
        jupyter = {}
        for user, (host, capture) in servers.items():
            replay = {"FAKE_SMI_XML": str(capture)}
            if user == "ana":
                replay["FAKE_SMI_CONTROL"] = str(control)
            jupyter[user] = running.enter_context(
                running_jupyter_server(
                    tmp_path / user,
                    replay,
                    f"--GpuMonitor.metrics_host={host}",
                    f"--GpuMonitor.metrics_user={user}",
                    f"--GpuMonitor.lab_prometheus_url={prometheus}",
                    "--GpuMonitor.lab_open_url=https://hub.lab/hub/spawn/{user}/{node}",
                    port=ports[user],
                    token=tokens[user],
                )
            )
        ana = jupyter["ana"]
        # Ana's notebook holds the workstation's GPUs: the capture's process is its kernel.
        pid = ana.open_notebook("train.ipynb")
        control.write_text(json.dumps({"FAKE_SMI_PIDS": f"{CAPTURE_PID}:{pid}"}))

        view = until(
            ana,
            lambda view: (
                view["reporting"] == 2
                and any(gpu["holders"] for node in view["nodes"] for gpu in node["gpus"])
            ),
        )
        assert (view["configured"], view["user"], view["error"], view["known"]) == (
            True,
            "ana",
            None,
            2,
        )
        node1, node2 = view["nodes"]
        # The workstation's two GPUs once, though two servers report them.
        assert node1["host"] == "node-1" and node1["reporting"]
        assert node1["open_url"] == "https://hub.lab/hub/spawn/ana/node-1"
        assert [(gpu["index"], gpu["name"]) for gpu in node1["gpus"]] == [
            (0, "NVIDIA RTX A5000"),
            (1, "NVIDIA RTX A5000"),
        ]
        gpu0 = node1["gpus"][0]
        assert (gpu0["memory_used_mib"], gpu0["memory_total_mib"], gpu0["free"]) == (
            22437,
            24564,
            False,
        )
        # At 0 % since Prometheus first scraped it. node-2's GPUs compute, but GPU 3 (23 %).
        assert view["timestamp"] - 60 <= gpu0["idle_since"] <= view["timestamp"]
        idle = [gpu["index"] for gpu in view["nodes"][1]["gpus"] if gpu["idle_since"] is not None]
        assert idle == [3]
        # Her own notebook by its name: her server knows what its hash stands for.
        assert gpu0["holders"] == [
            {"user": "ana", "notebook": "train.ipynb", "memory_used_mib": 22430, "own": True}
        ]
        # Ben sees the same notebook as another user's, by its hash only.
        (ben_holder,) = until(
            jupyter["ben"], lambda view: bool(view["nodes"][0]["gpus"][0]["holders"])
        )["nodes"][0]["gpus"][0]["holders"]
        assert (ben_holder["user"], ben_holder["notebook"], ben_holder["own"]) == (
            "ana",
            notebook_label("train.ipynb", "hash"),
            False,
        )
        assert node2["host"] == "node-2" and len(node2["gpus"]) == 8
        assert all(gpu["name"] == "Tesla V100S-PCIE-32GB" for gpu in node2["gpus"])

        # The same from a terminal, as ana (no server there to name her notebook's hash).
        printed = run("lab", "--lab-prometheus-url", prometheus, "--GpuMonitor.metrics_user=ana")
        assert printed.returncode == 0, printed.stderr
        lines = printed.stdout.splitlines()
        assert lines[0] == "node-1  reporting  2 GPUs, 0 free"
        assert lines[1] == (
            "  GPU 0  NVIDIA RTX A5000  0 %  21.9 / 24.0 GiB  "
            f"ana {notebook_label('train.ipynb', 'hash')} (yours) 21.9 GiB"
        )
        assert lines[3] == "node-2  reporting  8 GPUs, 0 free"  # eight busy, full GPUs
        assert lines[-1] == "2 of 2 machines reporting"
        as_json = run("lab", "--json", "--lab-prometheus-url", prometheus)
        assert [node["host"] for node in json.loads(as_json.stdout)["nodes"]] == [
            "node-1",
            "node-2",
        ]

        # node-2's server stops: node-2 is still known, no longer reporting.
        jupyter["cleo"].process.terminate()
        view = until(ana, lambda view: view["reporting"] == 1)
        assert view["known"] == 2
        # Its series went stale at the first failed scrape: known from the last day, no GPUs.
        assert view["nodes"][1] == {
            "host": "node-2",
            "reporting": False,
            "last_seen": None,
            "open_url": "https://hub.lab/hub/spawn/ana/node-2",
            "gpus": [],
            "exporter": None,
        }


@pytest.fixture
def jp_server_config():
    return server_config(lab_prometheus_url=f"http://127.0.0.1:{free_port()}")


async def test_an_unreachable_lab_prometheus_is_the_views_error_not_the_servers(
    fake_smi, jp_fetch, monkeypatch
):
    monkeypatch.setattr(service, "REFRESH_SECONDS", 0.0)
    view = json.loads((await jp_fetch("gpu-monitor", "api", "lab")).body)
    assert (view["configured"], view["nodes"], view["known"]) == (True, [], 0)
    assert view["error"]["kind"] == "unknown"
    assert view["error"]["message"].startswith("Prometheus at http://127.0.0.1:")
    assert "GpuMonitor.lab_prometheus_url" in view["error"]["hint"]
    # This server's own GPUs are read as ever.
    gpus = json.loads((await jp_fetch("gpu-monitor", "api", "gpus")).body)
    assert gpus["error"] is None and gpus["gpus"]


async def test_the_ledger_takes_whole_hours_from_an_hour_to_a_month(fake_smi, jp_fetch):
    # A week by default; the period cut to whole hours. (The lab's Prometheus is not there:
    # its failure is the answer's error.)
    week = json.loads((await jp_fetch("gpu-monitor", "api", "lab", "ledger")).body)
    assert (week["since_seconds"], week["notebooks"], week["error"]["kind"]) == (
        7 * 86400,
        [],
        "unknown",
    )
    hours = json.loads(
        (await jp_fetch("gpu-monitor", "api", "lab", "ledger", params={"since": "7250"})).body
    )
    assert hours["since_seconds"] == 7200
    for since in ("3599", "2678401", "nan", "week"):
        with pytest.raises(HTTPClientError) as refused:
            await jp_fetch("gpu-monitor", "api", "lab", "ledger", params={"since": since})
        assert refused.value.code == 400
        assert "'since' must be seconds, at least 3600" in refused.value.response.body.decode()


def test_the_lab_command_without_a_lab_prometheus_says_which_option_sets_it(tmp_path):
    result = run("lab", env={**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path)})
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(
        "error (not_installed): --lab-prometheus-url is not set\nhint: Set --lab-prometheus-url"
    )
    assert_in_command_terms(result)


def series(value: float, **labels: str) -> dict:
    """One series of an instant query's answer, as Prometheus gives it, at time 1000."""
    return {"metric": labels, "value": [1000.0, str(value)]}


# The answers of the exporters' idle and last-day queries when no exporter has any.
NO_EXPORTER_HISTORY = {"exporters_known": [], "exporters_busy_at": [], "exporters_seen_from": []}
# node-1's server, scraped every second and newest at 1000.
NODE1_REPORTING = {
    "newest": [series(1000, host="node-1")],
    "scrapes": [series(600, host="node-1")],
    "known": [series(1, host="node-1")],
}


def test_a_gpu_is_free_under_the_held_memory_and_a_machine_reports_within_two_intervals():
    held = constant("HeldMemoryMib")
    gpu = {"host": "node-1", "gpu": "0", "name": "NVIDIA H100 80GB HBM3"}
    answers = {
        "utilization": [],
        "memory_used": [
            series((held - 1) * MIB, uuid="GPU-a", **gpu),
            series(held * MIB, uuid="GPU-b", **{**gpu, "gpu": "1"}),
        ],
        "memory_total": [
            series(81559 * MIB, uuid="GPU-a", **gpu),
            series(81559 * MIB, uuid="GPU-b", **{**gpu, "gpu": "1"}),
        ],
        "holders": [],
        # Scraped every 10 s (60 scrapes in ten minutes): node-1 20 s ago, node-2 21 s ago.
        "newest": [series(980, host="node-1"), series(979, host="node-2")],
        "scrapes": [series(60, host="node-1"), series(60, host="node-2")],
        "known": [series(1, host="node-1"), series(1, host="node-2"), series(1, host="node-3")],
        "busy_at": [],
        "seen_from": [],
        "exporters": [],
        **NO_EXPORTER_HISTORY,
    }
    # A series of our name from another exporter, without a gpu label: shown, not a failure.
    answers["memory_total"].append(series(16 * 1024 * MIB, uuid="GPU-x", host="node-1"))
    node1, node2, node3 = lab_nodes(answers, 1000.0, "ana", "https://hub/spawn/{user}/{node}")
    assert [(gpu.index, gpu.free) for gpu in node1.gpus] == [(-1, False), (0, True), (1, False)]
    assert (node1.reporting, node2.reporting, node3.reporting) == (True, False, False)
    assert (node3.last_seen, node3.gpus) == (None, [])
    assert node3.open_url == "https://hub/spawn/ana/node-3"


def test_a_gpu_idles_since_it_was_last_busy_or_first_seen_and_not_while_busy():
    gpu = {"host": "node-1", "name": "NVIDIA H100 80GB HBM3"}
    uuids = {"GPU-a": "0", "GPU-b": "1", "GPU-c": "2", "GPU-d": "3"}
    answers = {
        "memory_used": [
            series(512 * MIB, uuid="GPU-a", gpu="0", **gpu),
            series(0, uuid="GPU-b", gpu="1", **gpu),
        ],
        "memory_total": [
            series(81559 * MIB, uuid=uuid, gpu=index, **gpu) for uuid, index in uuids.items()
        ],
        # a: idle, busy 40 min ago; b: idle, never busy in the lookback, first seen 10 min
        # ago; c: at the low-utilisation line now; d: utilisation unknown.
        "utilization": [
            series(0.05, uuid="GPU-a", gpu="0", **gpu),
            series(0.0, uuid="GPU-b", gpu="1", **gpu),
            series(constant("LowUtilizationPercent") / 100, uuid="GPU-c", gpu="2", **gpu),
        ],
        "busy_at": [
            series(1000 - 40 * 60, uuid="GPU-a", host="node-1"),
            series(1000, uuid="GPU-c", host="node-1"),
        ],
        "seen_from": [
            series(1000 - 6 * 3600, uuid="GPU-a", host="node-1"),
            series(1000 - 600, uuid="GPU-b", host="node-1"),
            series(1000 - 6 * 3600, uuid="GPU-c", host="node-1"),
        ],
        "holders": [],
        **NODE1_REPORTING,
        "exporters": [],
        **NO_EXPORTER_HISTORY,
    }
    (node,) = lab_nodes(answers, 1000.0, "ana")
    assert [gpu.idle_since for gpu in node.gpus] == [1000 - 40 * 60, 1000 - 600, None, None]
    assert node.open_url is None
    # A terminal says how long a free GPU has idled.
    view = {"nodes": nodes_json([node]), "timestamp": 1000.0, "reporting": 1, "known": 1}
    assert format_lab(view).splitlines()[1:3] == [
        "  GPU 0  NVIDIA H100 80GB HBM3  5 %  0.5 / 79.6 GiB  free, idle 40 min",
        "  GPU 1  NVIDIA H100 80GB HBM3  0 %  0.0 / 79.6 GiB  free, idle 10 min",
    ]


def test_machines_only_an_exporter_reports_are_in_the_lab_with_their_gpus_and_no_notebooks(
    tmp_path: Path,
):
    # A Kubernetes node's DCGM exporter and a workstation's nvidia_gpu_exporter, no server of
    # ours on either.
    view = exporters_lab_view(tmp_path / "prometheus")
    assert (view["error"], view["reporting"], view["known"]) == (None, 2, 2)
    box, node = view["nodes"]
    # The workstation by its scrape target's host; the node by DCGM's Hostname.
    assert (box["host"], box["exporter"], box["reporting"]) == (
        "gpu-box-7",
        "nvidia_gpu_exporter",
        True,
    )
    (h100,) = box["gpus"]
    assert (h100["uuid"], h100["index"], h100["name"]) == (
        "GPU-00000000-0000-0000-0000-000000000000",
        0,
        "NVIDIA H100 80GB HBM3",
    )
    assert (h100["utilization_gpu"], h100["memory_used_mib"], h100["memory_total_mib"]) == (
        100,
        19818,
        81559,
    )
    # Held, by nobody the lab knows, and busy: not idle.
    assert (h100["free"], h100["holders"], h100["idle_since"]) == (False, [], None)
    assert (node["host"], node["exporter"]) == ("ub20-a100-k8s", "DCGM exporter")
    (a100,) = node["gpus"]
    # Under MIG DCGM has no utilisation of the whole GPU; its memory is used plus free.
    assert (a100["uuid"], a100["utilization_gpu"], a100["memory_used_mib"]) == (
        "GPU-34319582-d595-d1c7-d1d2-179bcfa61660",
        None,
        4845,
    )
    assert a100["memory_total_mib"] == 4845 + 35690
    # In a terminal, the same.
    assert (
        format_lab(view).splitlines()[0]
        == "gpu-box-7 (nvidia_gpu_exporter)  reporting  1 GPU, 0 free"
    )


def test_a_gpu_a_server_of_ours_reports_is_not_taken_again_from_an_exporter():
    ours = {"host": "node-1", "gpu": "0", "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-a"}
    smi = {"instance": "node-1:9835", "uuid": "a"}
    answers = {
        "utilization": [series(0.5, **ours)],
        "memory_used": [series(40000 * MIB, **ours)],
        "memory_total": [series(81559 * MIB, **ours)],
        "holders": [],
        **NODE1_REPORTING,
        "busy_at": [],
        "seen_from": [],
        **NO_EXPORTER_HISTORY,
        # The same GPU from the machine's nvidia_gpu_exporter, and a second one ours lacks.
        "exporters": [
            series(1, __name__="nvidia_smi_index", **smi),
            series(0.9, __name__="nvidia_smi_utilization_gpu_ratio", **smi),
            series(1, __name__="nvidia_smi_index", **{**smi, "uuid": "b"}),
            series(0, __name__="nvidia_smi_memory_used_bytes", **{**smi, "uuid": "b"}),
        ],
    }
    (node,) = lab_nodes(answers, 1000.0, "ana")
    assert [(gpu.uuid, gpu.utilization_gpu, gpu.free) for gpu in node.gpus] == [
        ("GPU-a", 50, False),
        ("GPU-b", None, True),
    ]
    # A machine of ours, with a GPU of its exporter's beside.
    assert node.exporter is None


def test_an_exporters_machine_is_its_dcgm_hostname_else_its_scrape_targets_host():
    assert exporter_host({"Hostname": "node-7", "instance": "10.0.0.7:9400"}) == "node-7"
    assert exporter_host({"instance": "gpu-box-7:9835"}) == "gpu-box-7"
    assert exporter_host({"instance": "[fd00::7]:9835"}) == "[fd00::7]"
    assert exporter_host({"instance": "gpu-box-7"}) == "gpu-box-7"


def test_an_exporters_gpu_idles_as_ours_do_and_a_machine_it_stopped_reporting_stays_known():
    dcgm = {"Hostname": "k8s-node-4", "instance": "10.0.0.4:9400", "gpu": "0", "UUID": "GPU-d"}
    smi = {"instance": "gpu-box-7:9835", "uuid": "e"}
    answers = {
        "utilization": [],
        "memory_used": [],
        "memory_total": [series(81559 * MIB, host="node-1", uuid="GPU-a", gpu="0")],
        "holders": [],
        **NODE1_REPORTING,
        "busy_at": [],
        "seen_from": [],
        # The A100 at 5 %, the H100 at 90 %.
        "exporters": [
            series(5, __name__="DCGM_FI_DEV_GPU_UTIL", **dcgm),
            series(512, __name__="DCGM_FI_DEV_FB_USED", **dcgm),
            series(1, __name__="nvidia_smi_index", **smi),
            series(0.9, __name__="nvidia_smi_utilization_gpu_ratio", **smi),
        ],
        # The A100 was last busy 40 min ago; the H100 is busy now.
        "exporters_busy_at": [
            series(1000 - 40 * 60, **{k: dcgm[k] for k in ("Hostname", "instance", "UUID")}),
            series(1000, instance="gpu-box-7:9835", uuid="e"),
        ],
        "exporters_seen_from": [
            series(1000 - 6 * 3600, **{k: dcgm[k] for k in ("Hostname", "instance", "UUID")}),
            series(1000 - 6 * 3600, instance="gpu-box-7:9835", uuid="e"),
        ],
        # Seen in the last day: both, a workstation whose exporter stopped, and node-1's GPU
        # through its BMC's exporter (ours, under another name: not a machine of its own).
        "exporters_known": [
            series(1, **{k: dcgm[k] for k in ("Hostname", "instance", "UUID")}),
            series(1, instance="gpu-box-7:9835", uuid="e"),
            series(1, instance="gpu-box-9:9835", uuid="f"),
            series(1, instance="node-1-bmc:9835", uuid="a"),
        ],
    }
    box7, box9, k8s, node1 = lab_nodes(answers, 1000.0, "ana")
    assert [(gpu.uuid, gpu.idle_since) for gpu in k8s.gpus] == [("GPU-d", 1000 - 40 * 60)]
    assert [(gpu.uuid, gpu.idle_since) for gpu in box7.gpus] == [("GPU-e", None)]
    assert (box9.host, box9.reporting, box9.gpus, box9.exporter) == (
        "gpu-box-9",
        False,
        [],
        "nvidia_gpu_exporter",
    )
    assert (k8s.exporter, box7.reporting, node1.host) == ("DCGM exporter", True, "node-1")


def test_machines_whose_exporters_stop_stay_in_the_lab_as_not_reporting(tmp_path: Path):
    with ExitStack() as exporters:
        jobs = exporters.enter_context(serving_exporter_machines())
        with running_prometheus(tmp_path / "prometheus", jobs) as prometheus:
            lab = service.LabService(
                GpuMonitor(lab_prometheus_url=prometheus), ServerIdentity.of("node-1", "ana")
            )

            def until_view(done) -> dict:
                deadline = time.monotonic() + 60
                while not done(view := asyncio.run(lab.view())):
                    assert time.monotonic() < deadline, json.dumps(view)[:2000]
                    time.sleep(1)
                return view

            until_view(lambda view: view["reporting"] == 2)
            exporters.close()
            view = until_view(lambda view: view["reporting"] == 0)
    assert view["known"] == 2
    assert [
        (node["host"], node["reporting"], node["gpus"], node["exporter"]) for node in view["nodes"]
    ] == [
        ("gpu-box-7", False, [], "nvidia_gpu_exporter"),
        ("ub20-a100-k8s", False, [], "DCGM exporter"),
    ]
