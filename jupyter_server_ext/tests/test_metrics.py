"""``GET <base_url>/gpu-monitor/metrics`` through a real Jupyter server (pytest-jupyter), with the
fake nvidia-smi replaying the H100 capture: what a Prometheus scrape gets, and who may scrape."""

from __future__ import annotations

import asyncio
import subprocess
from types import SimpleNamespace

import psutil
import pytest
import tornado
from jupyterlab_gpu_monitor._version import __version__
from jupyterlab_gpu_monitor.config import GpuMonitor
from jupyterlab_gpu_monitor.kernel.ledger import NotebookGpuAccount, notebook_label
from jupyterlab_gpu_monitor.kernel.usage import KernelUse
from jupyterlab_gpu_monitor.metrics import in_networks
from jupyterlab_gpu_monitor.routes import KERNELS_SETTING
from prometheus_client.parser import text_string_to_metric_families
from traitlets import TraitError

from .prometheus_lab import PROMTOOL, require
from .replay import SMI_FIXTURES, server_config

MIB = 1024 * 1024
H100_UUID = "GPU-00000000-0000-0000-0000-000000000000"
TRAIN = notebook_label("train.ipynb", "hash")


@pytest.fixture
def networks() -> list[str]:
    """GpuMonitor.metrics_unauthenticated_networks of the server under test."""
    return []


@pytest.fixture
def jp_server_config(networks):
    return server_config(
        interval=0.5,
        command_timeout=1.0,
        idle_seconds=1.0,
        metrics_unauthenticated_networks=networks,
        metrics_host="node-7",
        metrics_user="ana",
    )


async def scrape(jp_fetch, **headers) -> tornado.httpclient.HTTPResponse:
    return await jp_fetch("gpu-monitor", "metrics", headers=headers or None)


def samples(body: bytes) -> dict[tuple[str, frozenset], float]:
    """Every sample of an exposition, by name and label set."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


def kernels(*rows: tuple[str, str | None, float]) -> list[SimpleNamespace]:
    """What kernels.py hands the metrics: per kernel and GPU, the memory it holds."""
    return [
        SimpleNamespace(
            kernel_id=kernel_id, path=path, gpu_index=0, gpu_uuid=H100_UUID, memory_used_mib=mib
        )
        for kernel_id, path, mib in rows
    ]


async def test_scrape_reports_the_snapshot_in_base_units_under_dcgm_like_names(fake_smi, jp_fetch):
    response = await scrape(jp_fetch)
    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    gpu = frozenset(
        {"gpu": "0", "uuid": H100_UUID, "name": "NVIDIA H100 80GB HBM3", "host": "node-7"}.items()
    )
    got = samples(response.body)
    # The H100 capture: 100 %, 19818 of 81559 MiB, 59 °C, 631.95 of 700 W, SM at 1980 MHz.
    assert got[("jupyter_gpu_utilization_ratio", gpu)] == 1.0
    assert got[("jupyter_gpu_memory_used_bytes", gpu)] == 19818 * MIB
    assert got[("jupyter_gpu_memory_total_bytes", gpu)] == 81559 * MIB
    assert got[("jupyter_gpu_temperature_celsius", gpu)] == 59
    assert got[("jupyter_gpu_power_usage_watts", gpu)] == 631.95
    assert got[("jupyter_gpu_power_limit_watts", gpu)] == 700
    assert got[("jupyter_gpu_sm_clock_hertz", gpu)] == 1980e6
    # Memory at 2619 MHz, P0, nothing holding the clocks down, no memory error.
    assert got[("jupyter_gpu_memory_clock_hertz", gpu)] == 2619e6
    assert got[("jupyter_gpu_performance_state", gpu)] == 0
    assert got[("jupyter_gpu_ecc_errors_uncorrected", gpu)] == 0
    reasons = {
        dict(labels)["reason"]: value
        for (name, labels), value in got.items()
        if name == "jupyter_gpu_clock_event_reason"
    }
    assert len(reasons) == 9 and set(reasons.values()) == {0}
    # The capture has no fan reading: no sample, rather than a 0.
    assert not any(name == "jupyter_gpu_fan_speed_ratio" for name, _ in got)
    assert got[("jupyter_gpu_source_up", frozenset({"source": "nvidia-smi"}.items()))] == 1
    assert got[("jupyter_gpu_read_errors_total", frozenset({"kind": "timeout"}.items()))] == 0
    assert got[("jupyter_gpu_reads_total", frozenset())] >= 1
    assert "DCGM_FI_DEV_FB_USED" in response.body.decode()  # each HELP names its DCGM twin


def machine_uses(*rows: tuple[str, str | None, float | None, float]) -> list[SimpleNamespace]:
    """What kernels.py hands the metrics: each kernel's CPU (percent of a core) and memory."""
    return [
        SimpleNamespace(kernel_id=kernel_id, path=path, use=KernelUse(cpu, rss, 1))
        for kernel_id, path, cpu, rss in rows
    ]


async def test_exposition_passes_promtool_check_metrics(fake_smi, jp_fetch, jp_web_app):
    promtool = require(PROMTOOL)
    jp_web_app.settings[KERNELS_SETTING].gpu_memory = lambda: kernels(
        ("5f0c3a52-0c4e-4b1e-9d2a-7c1e2f3a4b5c", "train.ipynb", 15690),
        ("a1b2c3d4-1111-2222-3333-444455556666", None, 2566),
    )
    jp_web_app.settings[KERNELS_SETTING].machine_uses = lambda: machine_uses(
        ("5f0c3a52-0c4e-4b1e-9d2a-7c1e2f3a4b5c", "train.ipynb", 387.5, 9830),
        ("a1b2c3d4-1111-2222-3333-444455556666", None, None, 51),
    )
    body = (await scrape(jp_fetch)).body
    checked = await asyncio.to_thread(
        subprocess.run, [promtool, "check", "metrics"], input=body, capture_output=True, timeout=30
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout + checked.stderr == b""  # no lint remark either
    assert b"jupyter_gpu_kernel_memory_used_bytes{" in body
    assert b"jupyter_machine_memory_used_bytes{" in body
    assert b"jupyter_kernel_memory_resident_bytes{" in body


async def test_the_machine_and_each_kernel_are_scraped_in_base_units(
    fake_smi, jp_fetch, jp_web_app, jp_root_dir
):
    jp_web_app.settings[KERNELS_SETTING].machine_uses = lambda: machine_uses(
        ("k-1", "train.ipynb", 387.5, 9830), ("k-2", None, None, 51)
    )
    await scrape(jp_fetch)
    await asyncio.sleep(1.2)  # a second read: CPU and throughput need two
    got = samples((await scrape(jp_fetch)).body)
    # This machine: no cgroup limits it, so the host's figures, psutil's.
    host = frozenset({"scope": "host"}.items())
    assert got[("jupyter_machine_memory_total_bytes", host)] == psutil.virtual_memory().total
    assert got[("jupyter_machine_cpu_cores", host)] == psutil.cpu_count()
    assert 0 <= got[("jupyter_machine_cpu_utilization_ratio", host)] <= 1
    assert got[("jupyter_machine_network_receive_bytes_per_second", frozenset())] >= 0
    root = frozenset({"path": str(jp_root_dir)}.items())
    assert 0 < got[("jupyter_machine_filesystem_avail_bytes", root)]
    assert (
        got[("jupyter_machine_filesystem_avail_bytes", root)]
        <= got[("jupyter_machine_filesystem_size_bytes", root)]
    )
    # A kernel's CPU in cores (387.5 % of one core), its memory in bytes; no CPU before two
    # reads is no sample, not a 0.
    # The notebook by a hash of its path (the default), the server's machine and user.
    train = frozenset(
        {"kernel_id": "k-1", "notebook": TRAIN, "host": "node-7", "user": "ana"}.items()
    )
    assert got[("jupyter_kernel_cpu_utilization_ratio", train)] == 3.875
    assert got[("jupyter_kernel_memory_resident_bytes", train)] == 9830 * MIB
    fresh = frozenset({"kernel_id": "k-2", "notebook": "", "host": "node-7", "user": "ana"}.items())
    assert ("jupyter_kernel_cpu_utilization_ratio", fresh) not in got
    assert got[("jupyter_kernel_memory_resident_bytes", fresh)] == 51 * MIB


async def test_per_kernel_memory_is_one_series_per_kernel_and_gpu(fake_smi, jp_fetch, jp_web_app):
    # Two rows for one kernel and GPU (say, the kernel and its DataLoader worker) are summed:
    # two samples with one label set would be a broken exposition.
    jp_web_app.settings[KERNELS_SETTING].gpu_memory = lambda: kernels(
        ("k-1", "analysis/train.ipynb", 1542),
        ("k-1", "analysis/train.ipynb", 1024),
        ("k-2", None, 15690),
    )
    got = samples((await scrape(jp_fetch)).body)
    kernel = {
        dict(labels)["kernel_id"]: (dict(labels), value)
        for (name, labels), value in got.items()
        if name == "jupyter_gpu_kernel_memory_used_bytes"
    }
    assert kernel["k-1"] == (
        {
            "kernel_id": "k-1",
            "notebook": notebook_label("analysis/train.ipynb", "hash"),
            "host": "node-7",
            "user": "ana",
            "gpu": "0",
            "uuid": H100_UUID,
        },
        (1542 + 1024) * MIB,
    )
    assert kernel["k-2"][0]["notebook"] == "" and kernel["k-2"][1] == 15690 * MIB


async def test_the_server_says_its_machine_and_user_once(fake_smi, jp_fetch):
    got = samples((await scrape(jp_fetch)).body)
    info = {
        dict(labels)["host"]: dict(labels)
        for (name, labels), _ in got.items()
        if name == "jupyter_server_info"
    }
    assert info == {"node-7": {"host": "node-7", "user": "ana", "version": __version__}}


async def test_each_notebooks_gpu_ledger_is_a_set_of_counters_without_its_path(
    fake_smi, jp_fetch, jp_web_app
):
    jp_web_app.settings[KERNELS_SETTING].gpu_memory = lambda: kernels(
        ("k-1", "thesis/chapter-3.ipynb", 20480)
    )
    jp_web_app.settings[KERNELS_SETTING].ledger.accounts = lambda: [
        NotebookGpuAccount(
            notebook_label("thesis/chapter-3.ipynb", "hash"),
            0,
            H100_UUID,
            busy_seconds=3600.5,
            idle_held_seconds=7200,
            energy_joules=1.5e6,
            energy_estimated=True,
            peak_memory_mib=20480,
        )
    ]
    response = await scrape(jp_fetch)
    got = samples(response.body)
    labels = {
        "notebook": notebook_label("thesis/chapter-3.ipynb", "hash"),
        "host": "node-7",
        "user": "ana",
        "gpu": "0",
        "uuid": H100_UUID,
    }
    ledger = {
        name: (dict(key), value) for (name, key), value in got.items() if "notebook_gpu" in name
    }
    assert ledger == {
        "jupyter_notebook_gpu_busy_seconds_total": (labels, 3600.5),
        "jupyter_notebook_gpu_idle_held_seconds_total": (labels, 7200),
        "jupyter_notebook_gpu_energy_joules_total": ({**labels, "estimated": "true"}, 1.5e6),
        "jupyter_notebook_gpu_memory_peak_bytes": (labels, 20480 * MIB),
    }
    text = response.body.decode()
    for counter in ("busy_seconds", "idle_held_seconds", "energy_joules"):
        assert f"# TYPE jupyter_notebook_gpu_{counter}_total counter" in text
    # The default label names no notebook: a reader of the lab's Prometheus learns no path.
    assert b"chapter-3" not in response.body and b"thesis" not in response.body


async def test_kernel_join_failure_leaves_the_gpu_series(fake_smi, jp_fetch, jp_web_app):
    def broken():
        raise RuntimeError("the kernel manager went away")

    jp_web_app.settings[KERNELS_SETTING].gpu_memory = broken
    body = (await scrape(jp_fetch)).body
    assert b"jupyter_gpu_memory_used_bytes{" in body
    assert b"jupyter_gpu_kernel_memory_used_bytes" not in body


async def test_failed_read_is_source_down_with_its_error_kind_counted(fake_smi, jp_fetch):
    fake_smi.fail(SMI_FIXTURES / "errors/nvml-driver-library-version-mismatch.txt", 18)
    got = samples((await scrape(jp_fetch)).body)
    assert got[("jupyter_gpu_source_up", frozenset({"source": "nvidia-smi"}.items()))] == 0
    mismatch = frozenset({"kind": "version_mismatch"}.items())
    assert got[("jupyter_gpu_read_errors_total", mismatch)] >= 1
    # No numbers from a failed read: an old reading would look current. The machine's stand.
    assert not any(name.startswith("jupyter_gpu_memory") for name, _ in got)
    assert any(name == "jupyter_machine_memory_used_bytes" for name, _ in got)


async def test_scrape_wakes_an_idle_sampler_and_counts_as_watching(fake_smi, jp_fetch, jp_web_app):
    sampler = jp_web_app.settings["gpu_monitor_sampler"]
    await scrape(jp_fetch)
    await asyncio.sleep(2.0)  # idle_seconds is 1
    assert not sampler.sampling
    reads = sampler.reads
    got = samples((await scrape(jp_fetch)).body)
    assert sampler.sampling
    assert reads < got[("jupyter_gpu_reads_total", frozenset())] <= sampler.reads


async def test_prometheus_asking_for_openmetrics_gets_it(fake_smi, jp_fetch):
    # What Prometheus 2.x sends.
    accept = (
        "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
        "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
    )
    response = await scrape(jp_fetch, Accept=accept)
    assert response.headers["Content-Type"].startswith("application/openmetrics-text")
    assert response.body.endswith(b"# EOF\n")


async def test_anonymous_scrape_is_refused_by_default(fake_smi, jp_fetch):
    with pytest.raises(tornado.httpclient.HTTPClientError) as raised:
        await scrape(jp_fetch, Authorization="")
    assert raised.value.code == 403
    assert b"jupyter_gpu" not in raised.value.response.body


@pytest.mark.parametrize("networks", [["127.0.0.0/8"]])
async def test_anonymous_scrape_from_a_configured_network_is_served(fake_smi, jp_fetch):
    response = await scrape(jp_fetch, Authorization="")
    assert response.code == 200 and b"jupyter_gpu_memory_used_bytes{" in response.body
    # The exemption is the metrics' only: the REST API still wants a token.
    with pytest.raises(tornado.httpclient.HTTPClientError) as raised:
        await jp_fetch("gpu-monitor", "api", "gpus", headers={"Authorization": ""})
    assert raised.value.code == 403


@pytest.mark.parametrize("networks", [["10.0.0.0/8", "fd00::/8"]])
async def test_anonymous_scrape_from_another_network_is_refused(fake_smi, jp_fetch):
    with pytest.raises(tornado.httpclient.HTTPClientError) as raised:
        await scrape(jp_fetch, Authorization="")
    assert raised.value.code == 403


def test_networks_match_ipv4_also_when_a_dual_stack_socket_reports_it_as_ipv6():
    assert in_networks("::ffff:10.1.2.3", ["10.0.0.0/8"])
    assert in_networks("fe80::1%eth0", ["fe80::/10"])
    assert not in_networks("192.168.1.5", ["10.0.0.0/8", "fd00::/8"])
    assert not in_networks(None, ["0.0.0.0/0"])


def test_network_setting_rejects_what_is_not_a_network():
    with pytest.raises(TraitError, match="metrics_unauthenticated_networks"):
        GpuMonitor(metrics_unauthenticated_networks=["10.0.0.0/33"])
