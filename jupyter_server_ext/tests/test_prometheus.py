"""Both directions through a real Prometheus on loopback, which scrapes (1) our
``/gpu-monitor/metrics`` on a running jupyter server with the fake nvidia-smi, and (2) the real
exporter scrapes of ``testdata/prometheus``, which the Prometheus source then reads back
through PromQL. One Prometheus serves the whole module: its first scrape takes about 5 s."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import tornado.httpserver
import tornado.netutil
import tornado.web
from jupyterlab_gpu_monitor.config import GpuMonitor
from jupyterlab_gpu_monitor.gpu.errors import ERROR_KINDS, GpuReadError
from jupyterlab_gpu_monitor.gpu.model import Snapshot
from jupyterlab_gpu_monitor.gpu.nvidia_smi import parse_saved_output
from jupyterlab_gpu_monitor.gpu.prometheus import PrometheusSource, snapshot_from_samples
from jupyterlab_gpu_monitor.gpu.sampler import Sampler
from jupyterlab_gpu_monitor.lab.service import LabService
from jupyterlab_gpu_monitor.lab.view import QUERIES
from jupyterlab_gpu_monitor.metrics import GPU_SERIES, GpuCollector, ServerIdentity, series_name
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from tornado.httpclient import AsyncHTTPClient
from traitlets import TraitError

from .prometheus_lab import (
    DASHBOARD,
    H100_REPLAY,
    PROMETHEUS_FIXTURES,
    JupyterServer,
    exporter_scrapes,
    free_port,
    query,
    running_jupyter_server,
    running_prometheus,
    scrape_body,
    scrape_targets,
    serving_bodies,
    serving_scrapes,
    wait_for,
    with_timestamp,
)
from .replay import SMI_FIXTURES

SCRAPES = exporter_scrapes()
DCGM_MIG = "dcgm-exporter-a100-mig-k8s-2.4.0"
DCGM_README = "dcgm-exporter-readme-excerpt-elided"
H100 = "nvidia-gpu-exporter-golden-h100-590.48.01-load"
RTX_2021 = "nvidia-gpu-exporter-live-scrape-2021-rtx2080super"
A100_UUID = "GPU-34319582-d595-d1c7-d1d2-179bcfa61660"
README_UUID = "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"
# The golden file's uuid is masked upstream.
H100_UUID = "GPU-00000000-0000-0000-0000-000000000000"
RTX_2021_UUID = "GPU-df6e7a7c-7314-46f8-abc4-b88b36dcf3aa"
# nvidia_gpu_exporter scrapes made by replaying an nvidia-smi capture that is among our
# fixtures too: what Prometheus gives back must be what the nvidia-smi source reads from it.
SAME_MACHINE = {
    H100: (
        "csv/h100-80gb-hbm3-590.48.01-query-gpu-load.csv",
        "csv/h100-80gb-hbm3-590.48.01-compute-apps-load.csv",
    ),
    "nvidia-gpu-exporter-golden-rtx2080super-linux-595.71.05-idle": (
        "csv/rtx2080super-linux-595.71.05-query-gpu-idle.csv",
        None,
    ),
}
READINGS = (
    "index",
    "uuid",
    "name",
    "pci_bus_id",
    "utilization_gpu",
    "utilization_memory",
    "memory_total_mib",
    "memory_used_mib",
    "memory_free_mib",
    "temperature_c",
    "power_draw_w",
    "power_limit_w",
    "fan_speed_pct",
    "sm_clock_mhz",
    "memory_clock_mhz",
    "performance_state",
    "encoder_utilization",
    "decoder_utilization",
    "clock_throttle_reasons",
    "ecc_errors_corrected",
    "ecc_errors_uncorrected",
    "mig_mode",
)


def node(stem: str) -> str:
    """The selector of one scrape's host (the ``node`` label of its scrape target)."""
    return f'{{node="{stem}"}}'


@dataclass
class Lab:
    prometheus: str
    jupyter: JupyterServer


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    """A Prometheus that has scraped the jupyter server and every exporter scrape."""
    folder = tmp_path_factory.mktemp("prometheus")
    # Told to Prometheus first: the server starts while Prometheus takes in its targets.
    port, token = free_port(), secrets.token_hex(16)
    token_file = folder / "jupyter-token"
    token_file.write_text(token)
    with serving_scrapes(SCRAPES) as scrapes_url:
        jobs = [
            {
                "job_name": "jupyter",
                "metrics_path": "/gpu-monitor/metrics",
                # jupyter_server takes its token as a bearer token too.
                "authorization": {"credentials_file": str(token_file)},
                "static_configs": [{"targets": [f"127.0.0.1:{port}"]}],
            },
            {"job_name": "exporters", "static_configs": scrape_targets(scrapes_url, SCRAPES)},
        ]
        with (
            running_prometheus(folder / "prometheus", jobs) as url,
            running_jupyter_server(
                folder / "jupyter", H100_REPLAY, port=port, token=token
            ) as jupyter,
        ):
            wait_for(url, "up == 1", lambda result: len(result) == len(SCRAPES) + 1)
            yield Lab(url, jupyter)


@pytest.fixture
def prometheus(lab: Lab) -> str:
    return lab.prometheus


def test_prometheus_stores_our_series_as_the_snapshot_reports_them(lab):
    (gpu,) = json.loads(lab.jupyter.get("gpu-monitor/api/gpus"))["gpus"]
    labels = {"gpu": str(gpu["index"]), "uuid": gpu["uuid"], "name": gpu["name"]}
    for reading in GPU_SERIES:
        name = series_name(reading)
        stored = query(lab.prometheus, f'{name}{{job="jupyter"}}')
        if gpu[reading.field] is None:
            assert stored == [], name  # no reading, no sample: never a 0
            continue
        (series,) = stored
        assert float(series["value"][1]) == gpu[reading.field] * reading.metric_factor, name
        assert {key: series["metric"][key] for key in labels} == labels
    (up,) = query(lab.prometheus, 'jupyter_gpu_source_up{job="jupyter"}')
    assert up["metric"]["source"] == "nvidia-smi" and up["value"][1] == "1"
    errors = query(lab.prometheus, 'jupyter_gpu_read_errors_total{job="jupyter"}')
    assert {series["metric"]["kind"]: series["value"][1] for series in errors} == {
        kind: "0" for kind in ERROR_KINDS
    }


async def read(url: str, selector: str, **options) -> Snapshot:
    return await PrometheusSource(url, selector, **options).sample()


def test_dashboard_queries_run_on_the_scraped_series(lab):
    dashboard = json.loads(DASHBOARD.read_text())
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            # Grafana's variables, as Grafana fills them for "All" and a short range.
            expr = target["expr"].replace("$instance", ".*").replace("$__rate_interval", "1m")
            result = query(lab.prometheus, expr)
            # This server has no kernels, no MIG and no read errors; every GPU panel has data.
            if not re.search(r"kernel|mig|read_errors", expr):
                assert result, f"{panel['title']}: {expr} is empty"
    (server,) = [item for item in dashboard["templating"]["list"] if item["name"] == "instance"]
    series = re.fullmatch(r"label_values\((\w+), instance\)", server["definition"]).group(1)
    assert query(lab.prometheus, f"count by (instance) ({series})")


@pytest.mark.parametrize("scrape", SCRAPES, ids=lambda path: path.stem)
async def test_every_exporter_scrape_reads_back_as_its_gpus(prometheus, scrape):
    snapshot = await read(prometheus, node(scrape.stem))
    assert snapshot.source == "prometheus" and snapshot.error is None
    assert snapshot.gpus and all(gpu.uuid and gpu.uuid.startswith("GPU-") for gpu in snapshot.gpus)


@pytest.mark.parametrize("stem", sorted(SAME_MACHINE))
async def test_exporter_scrape_reads_back_as_nvidia_smi_read_the_same_machine(prometheus, stem):
    query_gpu, compute_apps = SAME_MACHINE[stem]
    direct = parse_saved_output((SMI_FIXTURES / query_gpu).read_text())
    through_prometheus = await read(prometheus, node(stem))
    assert through_prometheus.driver_version == direct.driver_version
    (ours,) = through_prometheus.gpus
    (theirs,) = direct.gpus
    assert {f: getattr(ours, f) for f in READINGS} == {f: getattr(theirs, f) for f in READINGS}
    processes = [(p.pid, p.used_memory_mib, p.name) for p in ours.processes]
    if compute_apps is None:
        assert processes == []
    else:
        (apps,) = parse_saved_output((SMI_FIXTURES / compute_apps).read_text()).gpus
        assert processes == [(p.pid, p.used_memory_mib, p.name) for p in apps.processes]


async def test_exporter_scrape_gives_what_holds_the_clocks_and_the_memorys_health(prometheus):
    h100 = (await read(prometheus, node("nvidia-gpu-exporter-golden-h100-590.48.01-load"))).gpus[0]
    assert (h100.performance_state, h100.clock_throttle_reasons) == ("P0", [])
    assert (h100.ecc_errors_uncorrected, h100.remapped_rows, h100.memory_repair_pending) == (
        0,
        0,
        False,
    )
    # Its retired pages are [N/A] in nvidia-smi, so the exporter has no series for them.
    assert h100.retired_pages is None
    # An idle RTX 2080 SUPER held at its power limit, before and after the 2023 rename.
    for stem in (
        "nvidia-gpu-exporter-golden-rtx2080super-linux-595.71.05-idle",
        "nvidia-gpu-exporter-live-scrape-2021-rtx2080super",
    ):
        (gpu,) = (await read(prometheus, node(stem))).gpus
        assert (gpu.performance_state, gpu.clock_throttle_reasons) == ("P8", ["sw_power_cap"])


async def test_dcgm_mig_scrape_gives_each_instance_its_engine_activity(prometheus):
    # The selector a JupyterHub admin writes: the node's host name, as dcgm-exporter labels it.
    snapshot = await read(prometheus, '{Hostname="ub20-a100-k8s"}')
    (gpu,) = snapshot.gpus
    assert (gpu.index, gpu.uuid) == (0, "GPU-34319582-d595-d1c7-d1d2-179bcfa61660")
    assert (gpu.memory_used_mib, gpu.memory_free_mib, gpu.memory_total_mib) == (4845, 35690, 40535)
    assert (gpu.temperature_c, gpu.power_draw_w, gpu.sm_clock_mhz) == (61, 409.692, 1215)
    assert gpu.memory_clock_mhz == 1215
    # DCGM counts the energy since the driver loaded in millijoules: 319 kJ, about 89 Wh.
    assert gpu.energy_consumed_j == 319159.391
    # DCGM's profiling rates; its NVLink counter (a total since boot) is not a rate.
    assert (gpu.pcie_sent_bytes_per_second, gpu.pcie_received_bytes_per_second) == (
        33011804,
        97863601,
    )
    assert gpu.nvlink_received_bytes_per_second is None
    # No DCGM_FI_DEV_GPU_UTIL under MIG: null, with the reason, never 0.
    assert gpu.mig_mode == "enabled" and gpu.utilization_gpu is None
    assert "MIG" in gpu.unavailable["utilization_gpu"]
    (instance,) = gpu.mig_devices
    assert (instance.gpu_instance_id, instance.profile) == (13, "1g.5gb")
    assert instance.utilization_gpu == 99.5687


async def test_dcgms_energy_counter_is_exported_again_as_a_counter_in_joules(prometheus):
    sampler = Sampler(PrometheusSource(prometheus, '{Hostname="ub20-a100-k8s"}'), 0.5, 60)
    await sampler.snapshot()
    await sampler.stop()
    registry = CollectorRegistry()
    registry.register(GpuCollector(sampler))
    families = {
        family.name: family
        for family in text_string_to_metric_families(generate_latest(registry).decode())
    }
    energy = families["jupyter_gpu_energy_joules"]
    assert energy.type == "counter"
    (sample,) = energy.samples
    assert (sample.name, sample.value) == ("jupyter_gpu_energy_joules_total", 319159.391)


async def test_2021_exporter_scrape_reads_back_with_its_numbers(prometheus):
    snapshot = await read(prometheus, node("nvidia-gpu-exporter-live-scrape-2021-rtx2080super"))
    (gpu,) = snapshot.gpus
    assert (gpu.uuid, gpu.name) == (
        "GPU-df6e7a7c-7314-46f8-abc4-b88b36dcf3aa",
        "NVIDIA GeForce RTX 2080 SUPER",
    )
    assert (gpu.memory_used_mib, gpu.memory_free_mib, gpu.memory_total_mib) == (674, 7518, 8192)
    assert (gpu.utilization_gpu, gpu.temperature_c, gpu.fan_speed_pct, gpu.sm_clock_mhz) == (
        0,
        34,
        38,
        6,
    )
    assert (gpu.power_draw_w, gpu.power_limit_w) == (28.07, 250)
    # Exporters of that time had the driver only as a number.
    assert snapshot.driver_version == "471.11"


async def test_dcgm_readme_scrape_reads_back_what_it_has_and_nulls_the_rest(prometheus):
    snapshot = await read(prometheus, node("dcgm-exporter-readme-excerpt-elided"))
    (gpu,) = snapshot.gpus
    assert (gpu.uuid, gpu.sm_clock_mhz) == ("GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52", 139)
    assert gpu.memory_used_mib is None and gpu.utilization_gpu is None
    assert gpu.unavailable["utilization_gpu"] == "DCGM_FI_DEV_GPU_UTIL is not in Prometheus"


def test_dcgm_blank_value_is_null_not_a_number():
    # dcgm-exporter's README shows DCGM's "blank" sentinel leaking out as a reading.
    scrape = (PROMETHEUS_FIXTURES / "dcgm-exporter-readme-excerpt-elided.prom").read_text()
    blank = float(next(line for line in scrape.splitlines() if "MEMORY_TEMP{" in line).split()[-1])
    labels = {"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "0", "UUID": "GPU-604ac76c"}
    (gpu,) = snapshot_from_samples([(labels, blank)], 0.0).gpus
    assert gpu.temperature_c is None


def test_dcgm_xid_79_is_a_lost_gpu_with_its_reset():
    # The real A100 MIG scrape, its GPU's last XID error turned from 0 to 79 (fallen off the
    # bus), as dcgm-exporter reports it when the GPU is lost.
    scrape = (PROMETHEUS_FIXTURES / f"{DCGM_MIG}.prom").read_text()
    samples = [
        ({"__name__": sample.name, **sample.labels}, sample.value)
        for family in text_string_to_metric_families(scrape)
        for sample in family.samples
    ]
    (healthy,) = snapshot_from_samples(samples, 0.0).gpus
    assert healthy.error is None
    lost_samples = [
        (labels, 79.0 if labels["__name__"] == "DCGM_FI_DEV_XID_ERRORS" else value)
        for labels, value in samples
    ]
    (lost,) = snapshot_from_samples(lost_samples, 0.0).gpus
    assert lost.error is not None
    assert (lost.error.kind, lost.error.message) == ("gpu_lost", "GPU 0 is lost")
    assert "nvidia-smi -r" in lost.error.hint


def wait_for_scrapes(prometheus: str, stem: str, count: int = 3) -> None:
    """Wait until Prometheus holds ``count`` scrapes of one exporter scrape."""
    wait_for(
        prometheus,
        f"count_over_time(up{node(stem)}[1m])",
        lambda result: bool(result) and float(result[0]["value"][1]) >= count,
    )


async def test_first_open_fills_the_history_from_prometheus(prometheus):
    wait_for_scrapes(prometheus, H100)
    selector = node(H100)
    source = PrometheusSource(prometheus, selector)
    sampler = Sampler(source, interval_seconds=0.5, history_seconds=60)
    history = json.loads(await sampler.history_json(None))
    await sampler.stop()
    assert sampler.latest is not None
    first_read = sampler.latest.timestamp
    seeded = [timestamp for timestamp in history["timestamps"] if timestamp < first_read]
    assert len(seeded) >= 3
    (gpu,) = history["gpus"]
    assert set(gpu["utilization_gpu"]) == {100} and set(gpu["memory_used_mib"]) == {19818}


async def test_the_past_is_filled_before_a_status_bars_first_read_too(prometheus):
    # The status bar asks first, seldom; the panel opens later: its charts have the past.
    wait_for_scrapes(prometheus, H100)
    sampler = Sampler(PrometheusSource(prometheus, node(H100)), 0.5, history_seconds=60)
    first_read = (await sampler.snapshot(every=5.0)).timestamp
    history = json.loads(await sampler.history_json(None))
    await sampler.stop()
    assert len([timestamp for timestamp in history["timestamps"] if timestamp < first_read]) >= 3


async def test_selector_that_matches_no_gpu_is_no_devices(prometheus):
    with pytest.raises(GpuReadError) as raised:
        await read(prometheus, '{node="node-that-does-not-exist"}')
    assert raised.value.kind == "no_devices"
    assert 'node="node-that-does-not-exist"' in raised.value.message
    assert "prometheus_selector" in raised.value.hint


async def test_selector_prometheus_cannot_parse_is_bad_output_with_its_message(prometheus):
    with pytest.raises(GpuReadError) as raised:
        await read(prometheus, '{Hostname=~"("}')
    assert raised.value.kind == "bad_output"
    assert "bad_data" in raised.value.message and "missing closing )" in raised.value.message


async def test_url_of_an_exporter_instead_of_prometheus_is_bad_output():
    with serving_scrapes(SCRAPES) as exporter:
        with pytest.raises(GpuReadError) as raised:
            await read(exporter, "")
    assert raised.value.kind == "bad_output" and "404" in raised.value.message
    assert "prometheus_url" in raised.value.hint


async def test_prometheus_that_is_down_is_an_error_naming_its_address():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(GpuReadError) as raised:
        await read(url, "")
    assert raised.value.kind == "unknown"
    assert url in raised.value.message and "not reachable" in raised.value.message
    assert "prometheus_url" in raised.value.hint


async def test_prometheus_that_never_answers_times_out():
    # A listening socket nobody serves: the connection is made, no answer comes.
    with socket.socket() as hung:
        hung.bind(("127.0.0.1", 0))
        hung.listen()
        started = time.monotonic()
        with pytest.raises(GpuReadError) as raised:
            await read(f"http://127.0.0.1:{hung.getsockname()[1]}", "", timeout_seconds=0.5)
    assert raised.value.kind == "timeout" and "0.5 s" in raised.value.message
    assert time.monotonic() - started < 3


async def test_without_a_url_the_source_says_to_set_one():
    with pytest.raises(GpuReadError) as raised:
        await read("", "")
    assert raised.value.kind == "not_installed"
    assert "prometheus_url" in raised.value.hint


class BearerProxy(tornado.web.RequestHandler):
    """What stands in front of many a Prometheus (kube-rbac-proxy, oauth2-proxy): a bearer
    token check, then the request passed on."""

    def initialize(self, upstream: str, token: str, client: AsyncHTTPClient) -> None:
        self.upstream, self.token, self.client = upstream, token, client

    async def get(self) -> None:
        if self.request.headers.get("Authorization") != f"Bearer {self.token}":
            raise tornado.web.HTTPError(401)
        answer = await self.client.fetch(self.upstream + self.request.uri, raise_error=False)
        self.set_status(answer.code)
        self.finish(answer.body)


@contextmanager
def bearer_proxy(upstream: str, token: str) -> Iterator[str]:
    """A ``BearerProxy`` in front of ``upstream``, on loopback and the running event loop;
    yields its URL."""
    # Its own client: the loop's shared one (10 requests at a time) is the one the requests
    # the proxy passes on wait in.
    client = AsyncHTTPClient(force_instance=True, max_clients=64)
    try:
        with serving_handler(
            BearerProxy, {"upstream": upstream, "token": token, "client": client}
        ) as url:
            yield url
    finally:
        client.close()


@contextmanager
def serving_handler(handler: type[tornado.web.RequestHandler], arguments: dict) -> Iterator[str]:
    """``handler`` answering every path on loopback, on the running event loop; yields its
    URL."""
    server = tornado.httpserver.HTTPServer(tornado.web.Application([(r"/.*", handler, arguments)]))
    sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
    server.add_sockets(sockets)
    try:
        yield f"http://127.0.0.1:{sockets[0].getsockname()[1]}"
    finally:
        server.stop()


async def test_bearer_token_file_is_sent_and_re_read_when_it_changes(prometheus, tmp_path):
    token_file = tmp_path / "token"
    with bearer_proxy(prometheus, "s3cret") as url:
        source = PrometheusSource(url, node(H100), bearer_token_file=str(token_file))
        with pytest.raises(GpuReadError) as missing:
            await source.sample()
        token_file.write_text("expired\n")
        with pytest.raises(GpuReadError) as refused:
            await source.sample()
        token_file.write_text("s3cret\n")  # rotated in place, as Kubernetes does
        snapshot = await source.sample()
    assert missing.value.kind == "permission" and "token file" in missing.value.message
    assert refused.value.kind == "permission" and "401" in refused.value.message
    assert snapshot.gpus[0].memory_used_mib == 19818


async def test_the_labs_token_file_is_sent_and_without_it_the_lab_view_says_which_setting(
    prometheus, tmp_path
):
    token_file = tmp_path / "lab-token"
    ana = ServerIdentity.of("node-1", "ana")
    with bearer_proxy(prometheus, "s3cret") as url:
        settings = GpuMonitor(
            lab_prometheus_url=url, lab_prometheus_bearer_token_file=str(token_file)
        )
        token_file.write_text("expired\n")
        refused = await LabService(settings, ana).view()
        token_file.write_text("s3cret\n")
        view = await LabService(settings, ana).view()
    assert (refused["error"]["kind"], refused["nodes"]) == ("permission", [])
    assert "GpuMonitor.lab_prometheus_bearer_token_file" in refused["error"]["hint"]
    # Through the proxy, the lab: the exporters' machines this Prometheus scrapes.
    assert view["error"] is None
    assert "ub20-a100-k8s" in {node["host"] for node in view["nodes"]}


class HeldRequests(tornado.web.RequestHandler):
    """A Prometheus that takes requests in and answers none until ``released``; ``all_taken``
    is set once it holds ``expected`` of them."""

    def initialize(
        self, taken: list[str], expected: int, all_taken: asyncio.Event, released: asyncio.Event
    ) -> None:
        self.taken, self.expected = taken, expected
        self.all_taken, self.released = all_taken, released

    async def get(self) -> None:
        self.taken.append(self.request.uri)
        if len(self.taken) >= self.expected:
            self.all_taken.set()
        await self.released.wait()
        raise tornado.web.HTTPError(503)


async def test_a_lab_prometheus_that_hangs_does_not_hold_up_this_servers_gpu_reads(prometheus):
    all_taken, released = asyncio.Event(), asyncio.Event()
    state = {"taken": [], "expected": len(QUERIES), "all_taken": all_taken, "released": released}
    with serving_handler(HeldRequests, state) as hanging:
        settings = GpuMonitor(lab_prometheus_url=hanging, command_timeout=60)
        ana = ServerIdentity.of("node-1", "ana")
        view = asyncio.ensure_future(LabService(settings, ana).view())
        try:
            # Every query of the view in flight at once, held; meanwhile this server's GPUs
            # are read from their own Prometheus as ever.
            await asyncio.wait_for(all_taken.wait(), 30)
            snapshot = await PrometheusSource(prometheus, node(H100)).sample()
        finally:
            released.set()
            await view
    assert snapshot.error is None and snapshot.gpus[0].memory_used_mib == 19818


def test_selector_setting_must_be_written_in_braces():
    with pytest.raises(TraitError, match="braces"):
        GpuMonitor(prometheus_selector='Hostname="node-7"')
    assert GpuMonitor(prometheus_selector='{Hostname="node-7"}').prometheus_selector


def test_cli_reads_a_node_through_prometheus(prometheus):
    script = Path(sys.executable).with_name("jupyter-gpu-monitor")
    result = subprocess.run(
        [
            str(script),
            "snapshot",
            "--source=prometheus",
            f"--prometheus-url={prometheus}",
            f"--prometheus-selector={node(H100)}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "GPU 0  NVIDIA H100 80GB HBM3" in result.stdout
    assert "19818 / 81559 MiB" in result.stdout and "source prometheus" in result.stdout


@pytest.fixture
def jp_server_config(prometheus):
    return {
        "ServerApp": {"jpserver_extensions": {"jupyterlab_gpu_monitor": True}},
        "GpuMonitor": {
            "source": "prometheus",
            "prometheus_url": prometheus,
            "prometheus_selector": node(DCGM_MIG),
            "interval": 0.5,
            "history_seconds": 60,
        },
    }


async def test_panel_api_serves_prometheus_readings_and_their_past(prometheus, jp_fetch):
    wait_for_scrapes(prometheus, DCGM_MIG)
    snapshot = json.loads((await jp_fetch("gpu-monitor", "api", "gpus")).body)
    assert snapshot["source"] == "prometheus" and snapshot["error"] is None
    (gpu,) = snapshot["gpus"]
    assert gpu["memory_used_mib"] == 4845 and gpu["utilization_gpu"] is None
    assert gpu["mig_devices"][0]["utilization_gpu"] == 99.5687
    # On first open the charts already show what Prometheus remembers.
    history = json.loads((await jp_fetch("gpu-monitor", "api", "gpus", "history")).body)
    assert len(history["timestamps"]) >= 3
    assert set(history["gpus"][0]["memory_used_mib"]) == {4845}


# Sources of two GPUs each, every GPU a real exporter scrape served as its own target, which a
# test changes between reads: {scene: the scrapes, all selected by {scene="<scene>"}}.
SCENES = {
    "dcgm-vanishes": (DCGM_MIG, DCGM_README),
    "dcgm-goes-old": (DCGM_MIG, DCGM_README),
    "smi-vanishes": (H100, RTX_2021),
    "all-vanish": (DCGM_MIG, DCGM_README),
    "all-old": (DCGM_MIG, DCGM_README),
}
# How old the samples a scene starts with stamped are: past the 30 s within which a GPU is
# never stale, and well within the 5 min in which Prometheus still answers with them.
OLD_SECONDS = 120


@dataclass
class Scenes:
    prometheus: str
    bodies: dict[str, bytes]

    def serve(self, scene: str, stem: str, body: bytes | None = None) -> None:
        """Serve the scrape ``stem`` of ``scene`` as ``body`` from its next scrape on (as its
        exporter served it when ``body`` is None)."""
        self.bodies[f"/{scene}/{stem}"] = (
            scrape_body(PROMETHEUS_FIXTURES / f"{stem}.prom") if body is None else body
        )

    def source(self, scene: str) -> PrometheusSource:
        return PrometheusSource(self.prometheus, f'{{scene="{scene}"}}')


@pytest.fixture(scope="module")
def scenes(tmp_path_factory) -> Iterator[Scenes]:
    """A Prometheus of its own that scrapes the scenes' targets (another one than ``lab``'s,
    whose samples must stay as the exporters served them)."""
    bodies = {
        f"/{scene}/{stem}": scrape_body(PROMETHEUS_FIXTURES / f"{stem}.prom")
        for scene, stems in SCENES.items()
        for stem in stems
    }
    old = time.time() - OLD_SECONDS
    for stem, age in ((DCGM_README, 0), (DCGM_MIG, 30)):
        bodies[f"/all-old/{stem}"] = with_timestamp(bodies[f"/all-old/{stem}"], old - age)
    bodies[f"/dcgm-goes-old/{DCGM_README}"] = with_timestamp(
        bodies[f"/dcgm-goes-old/{DCGM_README}"], old
    )
    with serving_bodies(bodies) as url:
        host = url.removeprefix("http://")
        # Labelled apart, as a lab's targets are: the same address serves them all.
        targets = [
            {"targets": [host], "labels": {"__metrics_path__": path, "scene": scene, "node": stem}}
            for path in bodies
            for _, scene, stem in [path.split("/")]
        ]
        folder = tmp_path_factory.mktemp("scenes")
        job = {"job_name": "scenes", "static_configs": targets}
        with running_prometheus(folder, [job]) as prometheus:
            wait_for(prometheus, "up == 1", lambda result: len(result) == len(bodies))
            yield Scenes(prometheus, bodies)


async def read_until(
    source: PrometheusSource, done: Callable[[Snapshot], bool], timeout_seconds: float = 30
) -> Snapshot:
    """Read until ``done`` says the snapshot shows what a changed scrape makes of it (scrapes
    land when they land)."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        snapshot = await source.sample()
        if done(snapshot):
            return snapshot
        if time.monotonic() > deadline:
            raise AssertionError(f"not there after {timeout_seconds} s: {snapshot}")
        await asyncio.sleep(0.2)


def gpu_of(snapshot: Snapshot, uuid: str):
    (gpu,) = [gpu for gpu in snapshot.gpus if gpu.uuid == uuid]
    return gpu


def is_lost(uuid: str) -> Callable[[Snapshot], bool]:
    def lost(snapshot: Snapshot) -> bool:
        error = gpu_of(snapshot, uuid).error
        return error is not None and error.kind == "gpu_lost"

    return lost


def is_back(uuid: str) -> Callable[[Snapshot], bool]:
    return lambda snapshot: gpu_of(snapshot, uuid).error is None


async def test_dcgm_gpu_whose_series_vanish_is_lost_until_they_come_back(scenes):
    source = scenes.source("dcgm-vanishes")
    first = await source.sample()
    assert {gpu.uuid: gpu.error for gpu in first.gpus} == {A100_UUID: None, README_UUID: None}
    # The A100 falls off the bus: dcgm-exporter no longer exports it, the other GPU goes on.
    scenes.serve("dcgm-vanishes", DCGM_MIG, b"")
    lost_snapshot = await read_until(source, is_lost(A100_UUID))
    lost = gpu_of(lost_snapshot, A100_UUID)
    assert (lost.index, lost.uuid, lost.name, lost.pci_bus_id) == (0, A100_UUID, None, None)
    assert lost.error.message.startswith("GPU 0 is lost: DCGM has not reported it for ")
    assert "nvidia-smi -r" in lost.error.hint
    assert (lost.memory_used_mib, lost.temperature_c, lost.mig_devices) == (None, None, [])
    other = gpu_of(lost_snapshot, README_UUID)
    assert (other.error, other.sm_clock_mhz, other.memory_clock_mhz) == (None, 139, 405)
    # It comes back: read as before, no longer lost.
    scenes.serve("dcgm-vanishes", DCGM_MIG)
    back = gpu_of(await read_until(source, is_back(A100_UUID)), A100_UUID)
    assert (back.memory_used_mib, back.mig_devices[0].utilization_gpu) == (4845, 99.5687)


async def test_dcgm_gpu_whose_newest_sample_is_old_is_lost_until_it_is_fresh(scenes):
    # The README's GPU was last sampled two minutes ago (its samples carry their time, as a
    # federated Prometheus serves them); the A100 is scraped every second.
    source = scenes.source("dcgm-goes-old")
    # Which age is stale is learnt from how often the fresh GPU's samples come.
    lost_snapshot = await read_until(source, is_lost(README_UUID))
    lost = gpu_of(lost_snapshot, README_UUID)
    assert (lost.index, lost.uuid, lost.sm_clock_mhz) == (0, README_UUID, None)
    assert re.fullmatch(
        r"GPU 0 is lost: DCGM has not reported it for [234] min", lost.error.message
    )
    fresh = gpu_of(lost_snapshot, A100_UUID)
    assert (fresh.error, fresh.memory_used_mib, fresh.temperature_c) == (None, 4845, 61)
    scenes.serve("dcgm-goes-old", DCGM_README)  # sampled at each scrape again
    back = gpu_of(await read_until(source, is_back(README_UUID)), README_UUID)
    assert back.sm_clock_mhz == 139


async def test_nvidia_gpu_exporter_gpu_whose_series_vanish_is_lost_with_its_bus_id(scenes):
    source = scenes.source("smi-vanishes")
    first = await source.sample()
    assert {gpu.uuid: gpu.error for gpu in first.gpus} == {H100_UUID: None, RTX_2021_UUID: None}
    scenes.serve("smi-vanishes", H100, b"")
    lost_snapshot = await read_until(source, is_lost(H100_UUID))
    lost = gpu_of(lost_snapshot, H100_UUID)
    assert (lost.index, lost.name, lost.pci_bus_id) == (
        0,
        "NVIDIA H100 80GB HBM3",
        "00000000:00:09.0",
    )
    assert lost.error.message.startswith("GPU 0 is lost: nvidia_gpu_exporter has not reported it")
    assert (lost.memory_used_mib, lost.processes) == (None, [])
    other = gpu_of(lost_snapshot, RTX_2021_UUID)
    assert (other.error, other.memory_used_mib, other.power_draw_w) == (None, 674, 28.07)
    scenes.serve("smi-vanishes", H100)
    back = gpu_of(await read_until(source, is_back(H100_UUID)), H100_UUID)
    assert back.memory_used_mib == 19818


async def test_every_gpu_vanishing_is_no_gpu_series_not_lost_gpus(scenes):
    # The exporter (or its scrape) is what stopped: Prometheus has no GPU left to answer with.
    source = scenes.source("all-vanish")
    assert len((await source.sample()).gpus) == 2
    for stem in SCENES["all-vanish"]:
        scenes.serve("all-vanish", stem, b"")
    deadline = time.monotonic() + 30
    while True:
        try:
            await source.sample()
        except GpuReadError as error:
            assert error.kind == "no_devices"
            break
        assert time.monotonic() < deadline, "the GPUs' series are still there after 30 s"
        await asyncio.sleep(0.2)


async def test_every_gpu_sampled_long_ago_is_read_as_prometheus_answers(scenes):
    # Both GPUs' newest samples are minutes old (the exporter stopped): none is fresher than
    # the other, so none is called lost, however many reads see them.
    source = scenes.source("all-old")
    for _ in range(5):
        snapshot = await source.sample()
        assert {gpu.uuid: gpu.error for gpu in snapshot.gpus} == {
            A100_UUID: None,
            README_UUID: None,
        }
        assert gpu_of(snapshot, A100_UUID).memory_used_mib == 4845
        await asyncio.sleep(0.5)
