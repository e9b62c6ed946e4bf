"""The server and the command in Simplified Chinese: the server follows the language the
frontend asked for, the command the terminal's locale; API values stay untranslated."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from jupyterlab_gpu_monitor.diagnose import Facts, diagnose
from jupyterlab_gpu_monitor.gpu.model import Gpu, Snapshot
from jupyterlab_gpu_monitor.translation import columns
from jupyterlab_server.translation_utils import translator

from .replay import SMI_FIXTURES, server_config
from .test_cli import run

SCHEMAS = Path(__file__).parents[2] / "schema"
LOCALE_SETTING = ("lab", "api", "settings", "@jupyterlab/translation-extension:plugin")


@pytest.fixture
def jp_server_config():
    config = server_config(interval=0.5)
    # JupyterLab's own handlers: the translations the frontend loads, the settings it reads.
    config["ServerApp"]["jpserver_extensions"]["jupyterlab"] = True
    return config


async def choose_language(jp_fetch, locale: str) -> None:
    """What the language menu does: save the setting, then load the language's catalogues."""
    await jp_fetch(
        *LOCALE_SETTING, method="PUT", body=json.dumps({"raw": json.dumps({"locale": locale})})
    )
    # Reading settings puts the server's translator in the chosen locale, as the reload does.
    await jp_fetch(*LOCALE_SETTING)
    await jp_fetch("lab", "api", "translations", locale)


async def read_error(jp_fetch, hint_start: str) -> dict:
    """The snapshot's error once its hint starts so: a read made before the language changed
    keeps the language it was made in, and the next read (every half second) follows."""
    for _ in range(20):
        response = await jp_fetch("gpu-monitor", "api", "gpus")
        error = json.loads(response.body)["error"]
        if error["hint"].startswith(hint_start):
            return error
        await asyncio.sleep(0.25)
    raise AssertionError(f"the hint stays {error['hint']!r}")


def cpu_only_torch_on_a_gpu_machine() -> Facts:
    snapshot = Snapshot(
        source="nvidia-smi",
        timestamp=0.0,
        driver_version="550.54.15",
        cuda_version="12.4",
        gpus=[Gpu(index=0, name="NVIDIA A100-SXM4-80GB")],
    )
    return Facts(snapshot=snapshot, probe={"packages": {"torch": "2.13.0+cpu"}})


async def test_messages_findings_and_settings_follow_the_language_of_the_frontend(
    no_nvidia_smi, jp_fetch
):
    try:
        await choose_language(jp_fetch, "zh_CN")
        error = await read_error(jp_fetch, "请安装 NVIDIA 驱动")
        assert error["kind"] == "not_installed"
        assert error["message"].startswith("找不到 nvidia-smi")

        (finding,) = diagnose(cpu_only_torch_on_a_gpu_machine())
        assert finding.id == "cpu-only-torch" and finding.severity == "error"
        assert finding.title == "PyTorch 是仅 CPU 版本，但这台机器有 GPU"
        assert "1 块 GPU（NVIDIA A100-SXM4-80GB），驱动 550.54.15" in finding.evidence

        # What the settings handler does to the schemas it serves.
        schema = translator.translate_schema(json.loads((SCHEMAS / "panel.json").read_text()))
        assert schema["title"] == "GPU 监控：面板"
        assert schema["properties"]["historyWindow"]["title"] == "历史时间范围"
        assert schema["properties"]["historyWindow"]["oneOf"][3]["title"] == "1 小时"
    finally:
        await choose_language(jp_fetch, "en")

    error = await read_error(jp_fetch, "Install the NVIDIA driver")
    assert error["message"].startswith("nvidia-smi was not found")
    schema = translator.translate_schema(json.loads((SCHEMAS / "panel.json").read_text()))
    assert schema["title"] == "GPU Monitor: panel"
    (finding,) = diagnose(cpu_only_torch_on_a_gpu_machine())
    assert finding.title == "PyTorch is a CPU-only build, but this machine has GPUs"


async def test_frontend_gets_the_bundled_catalogue_with_the_language_pack(jp_fetch):
    try:
        response = await jp_fetch("lab", "api", "translations", "zh_CN")
        catalogue = json.loads(response.body)["data"]["jupyterlab_gpu_monitor"]
        assert catalogue[""]["language"] == "zh-CN"
        assert catalogue["GPU Monitor"] == ["GPU 监控"]
        assert catalogue["Memory"] == ["显存"]
    finally:
        await choose_language(jp_fetch, "en")


def terminal(language: str) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LC_")}
    env.pop("LANGUAGE", None)
    return {**env, "LANG": language}


def test_command_speaks_the_terminals_language():
    capture = str(SMI_FIXTURES / "xml/tesla-t4-linux-driver-515.105-v11-2procs.xml")
    chinese = run("snapshot", "--from", capture, env=terminal("zh_CN.UTF-8"))
    assert chinese.returncode == 0, chinese.stderr
    assert "利用率 0 %   显存 1032 / 15360 MiB   温度 40 °C" in chinese.stdout
    assert "驱动 515.105.01 · CUDA 11.7 · 数据源 nvidia-smi · 1 块 GPU" in chinese.stdout
    english = run("snapshot", "--from", capture, env=terminal("C.UTF-8"))
    assert "utilisation 0 %   memory 1032 / 15360 MiB" in english.stdout


def test_environment_table_headers_are_chinese_and_aligned_under_a_chinese_locale():
    table = run("envs", env=terminal("zh_CN.UTF-8")).stdout.splitlines()
    header, first = table[0], table[1]
    assert header.split() == ["名称", "类型", "管理工具", "PYTHON", "包数量", "内核规格", "路径"]
    # A Chinese character takes two columns of the terminal: the paths start under their header.
    assert columns(header[: header.index("路径")]) == first.index(first.split()[-1])
    assert run("envs", env=terminal("C.UTF-8")).stdout.startswith("NAME  ")
