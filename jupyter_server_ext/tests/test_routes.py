"""The REST API through a real Jupyter server (pytest-jupyter), with a fake nvidia-smi on PATH."""

from __future__ import annotations

import asyncio
import json

import pytest
import tornado

from .replay import SMI_FIXTURES, server_config


@pytest.fixture
def jp_server_config():
    return server_config(interval=0.5, command_timeout=1.0)


async def get_json(jp_fetch, *path, **params):
    response = await jp_fetch("gpu-monitor", "api", *path, params=params or None)
    assert response.code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    return json.loads(response.body)


@pytest.mark.parametrize("jp_base_url", ["/", "/user/alice/", "/a%40b/"])
async def test_snapshot_is_served_under_the_servers_base_url(fake_smi, jp_fetch, jp_base_url):
    snapshot = await get_json(jp_fetch, "gpus")
    assert snapshot["error"] is None
    assert snapshot["source"] == "nvidia-smi"
    (gpu,) = snapshot["gpus"]
    assert gpu["name"] == "NVIDIA H100 80GB HBM3"
    assert (gpu["memory_used_mib"], gpu["memory_total_mib"], gpu["fan_speed_pct"]) == (
        19818,
        81559,
        None,
    )
    assert {p["pid"] for p in gpu["processes"]} == {11327, 11328, 11345}


async def test_history_returns_columns_and_only_new_points(fake_smi, jp_fetch):
    await get_json(jp_fetch, "gpus")
    await asyncio.sleep(1.2)
    history = await get_json(jp_fetch, "gpus", "history")
    assert history["interval_seconds"] == 0.5
    timestamps = history["timestamps"]
    assert len(timestamps) >= 2 and timestamps == sorted(timestamps)
    (series,) = history["gpus"]
    assert series["memory_used_mib"] == [19818] * len(timestamps)
    newer = await get_json(jp_fetch, "gpus", "history", since=str(timestamps[-1]))
    assert all(t > timestamps[-1] for t in newer["timestamps"])


@pytest.mark.parametrize("route", [("gpus",), ("kernels",)])
async def test_a_client_that_asks_seldom_gets_a_read_and_no_timer(
    fake_smi, jp_fetch, jp_serverapp, route
):
    response = await jp_fetch("gpu-monitor", "api", *route, params={"every": "5"})
    assert response.code == 200
    sampler = jp_serverapp.web_app.settings["gpu_monitor_sampler"]
    assert sampler.reads == 1 and not sampler.sampling


@pytest.mark.parametrize("every", ["often", "0", "-1", "nan", "inf", "86400"])
async def test_an_every_that_is_not_a_period_is_refused(fake_smi, jp_fetch, every):
    with pytest.raises(tornado.httpclient.HTTPClientError) as raised:
        await jp_fetch("gpu-monitor", "api", "gpus", params={"every": every})
    assert raised.value.code == 400
    assert "'every' must be seconds" in json.loads(raised.value.response.body)["message"]


@pytest.mark.parametrize("since", ["yesterday", "nan", "inf"])
async def test_history_rejects_a_since_that_is_not_a_timestamp(fake_smi, jp_fetch, since):
    with pytest.raises(tornado.httpclient.HTTPClientError) as raised:
        await jp_fetch("gpu-monitor", "api", "gpus", "history", params={"since": since})
    assert raised.value.code == 400
    assert "since" in json.loads(raised.value.response.body)["message"]


async def test_status_names_source_settings_and_versions(fake_smi, jp_fetch):
    status = await get_json(jp_fetch, "status")
    assert status["source"] == "nvidia-smi" and status["source_setting"] == "nvidia-smi"
    assert status["interval_seconds"] == 0.5 and status["history_seconds"] == 3600
    assert status["sampling"] is True and status["reads"] >= 1
    assert status["driver_version"] == "590.48.01" and status["cuda_version"] == "13.1"
    assert status["error"] is None


@pytest.mark.parametrize("path", [("gpus",), ("gpus", "history"), ("status",)])
async def test_anonymous_request_gets_no_data(fake_smi, jp_fetch, path):
    with pytest.raises(tornado.httpclient.HTTPClientError) as raised:
        await jp_fetch("gpu-monitor", "api", *path, headers={"Authorization": ""})
    assert raised.value.code == 403
    assert b"gpus" not in raised.value.response.body


async def test_without_nvidia_smi_the_api_reports_the_error_and_keeps_serving(
    no_nvidia_smi, jp_fetch
):
    snapshot = await get_json(jp_fetch, "gpus")
    assert snapshot["gpus"] == []
    assert snapshot["error"]["kind"] == "not_installed"
    assert "nvidia-smi" in snapshot["error"]["hint"]
    status = await get_json(jp_fetch, "status")
    assert status["error"]["kind"] == "not_installed"
    # The rest of Jupyter is unaffected.
    assert (await jp_fetch("api", "status")).code == 200


async def test_driver_error_capture_reaches_the_client_with_its_hint(fake_smi, jp_fetch):
    fake_smi.fail(SMI_FIXTURES / "errors/nvml-driver-library-version-mismatch.txt", 18)
    snapshot = await get_json(jp_fetch, "gpus")
    assert snapshot["error"]["kind"] == "version_mismatch"
    assert (
        snapshot["error"]["message"] == "Failed to initialize NVML: Driver/library version mismatch"
    )
    assert "reboot" in snapshot["error"]["hint"]


async def test_nvidia_smi_that_crashes_mid_answer_is_said_to_have_crashed(fake_smi, jp_fetch):
    fake_smi.mode("crash")  # half its XML or CSV printed, then SIGSEGV
    snapshot = await get_json(jp_fetch, "gpus")
    assert snapshot["gpus"] == []
    assert snapshot["error"]["kind"] == "unknown"
    assert snapshot["error"]["message"] == "nvidia-smi crashed (SIGSEGV)"


async def test_hung_nvidia_smi_times_out_and_the_api_recovers(fake_smi, jp_fetch):
    fake_smi.mode("hang")
    hung = await get_json(jp_fetch, "gpus")
    assert hung["error"]["kind"] == "timeout"
    fake_smi.mode(None)
    for _ in range(20):
        await asyncio.sleep(0.5)
        snapshot = await get_json(jp_fetch, "gpus")
        if snapshot["error"] is None:
            break
    assert snapshot["error"] is None and snapshot["gpus"][0]["utilization_gpu"] == 100
