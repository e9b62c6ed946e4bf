"""The inspector's REST API on a real Jupyter server with real kernels: the probe expression,
POST diagnose, and a kernel's GPU figures over cell spans."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from types import SimpleNamespace

import pytest
import tornado
from jupyter_client.kernelspec import KernelSpec
from jupyterlab_gpu_monitor.kernel.inspector import kernelspec_launch

from .test_kernels import XML, kernel_holding_the_capture, kernel_pid, start_session


async def post(jp_fetch, *path, body) -> dict:
    response = await jp_fetch("gpu-monitor", "api", *path, method="POST", body=json.dumps(body))
    return json.loads(response.body)


async def status_of(request) -> tuple[int, str]:
    with pytest.raises(tornado.httpclient.HTTPClientError) as raised:
        await request
    return raised.value.code, json.loads(raised.value.response.body)["message"]


async def test_probe_expression_runs_and_reports_the_asked_packages(jp_fetch):
    response = await jp_fetch(
        "gpu-monitor", "api", "probe", params={"packages": "scikit-learn,tornado"}
    )
    served = json.loads(response.body)
    assert served["deep"] is False
    answer = json.loads(repr(eval(served["expression"], {})))  # what a kernel evaluates
    assert answer["executable"] == sys.executable
    assert answer["packages"]["tornado"] == tornado.version and "torch" in answer["packages"]


async def test_probe_refuses_package_names_that_are_not_names(jp_fetch):
    code, message = await status_of(
        jp_fetch("gpu-monitor", "api", "probe", params={"packages": "numpy,__import__('os')"})
    )
    assert code == 400 and "distribution names" in message


async def test_diagnose_from_server_facts_alone_sees_the_kernels_environment(
    fake_smi, jp_fetch, jp_serverapp, monkeypatch
):
    fake_smi.replay(XML)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # the kernel starts with every GPU hidden
    session = await start_session(jp_fetch, "hidden.ipynb")
    report = await post(
        jp_fetch, "diagnose", body={"kernel_id": session["kernel"]["id"], "probe": None}
    )
    assert report["sources"] == {"server": True, "probe": False}
    process = report["process"]
    assert process["pid"] == kernel_pid(jp_serverapp, session["kernel"]["id"])
    assert process["prefix"] == sys.prefix and process["env_kind"] == "venv"
    assert process["variables"]["CUDA_VISIBLE_DEVICES"] == ""
    assert [f["id"] for f in report["findings"]] == ["cuda-visible-devices-hides-all"]


async def test_diagnose_prefers_the_probes_live_answer(fake_smi, jp_fetch, monkeypatch):
    fake_smi.replay(XML)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    session = await start_session(jp_fetch, "fixed.ipynb")
    # The notebook set CUDA_VISIBLE_DEVICES after the kernel started: only the probe knows.
    probe = json.loads(
        repr(
            eval(json.loads((await jp_fetch("gpu-monitor", "api", "probe")).body)["expression"], {})
        )
    )
    probe["cuda_visible_devices"] = "1"
    report = await post(
        jp_fetch, "diagnose", body={"kernel_id": session["kernel"]["id"], "probe": probe}
    )
    assert report["sources"] == {"server": True, "probe": True}
    assert report["findings"] == []


async def test_diagnose_of_an_unknown_kernel_is_404_and_a_bad_body_400(jp_fetch):
    code, message = await status_of(
        post(jp_fetch, "diagnose", body={"kernel_id": "nope", "probe": None})
    )
    assert code == 404 and "no such kernel" in message
    code, _ = await status_of(post(jp_fetch, "diagnose", body={"kernel_id": 3, "probe": "x"}))
    assert code == 400


async def test_spans_give_the_kernels_peak_memory_while_the_cell_ran(
    fake_smi, jp_fetch, jp_serverapp
):
    kernel_id = await kernel_holding_the_capture(fake_smi, jp_fetch, jp_serverapp, "train.ipynb")
    await jp_fetch("gpu-monitor", "api", "gpus")
    start = time.time()
    await asyncio.sleep(2.5)
    answer = await post(
        jp_fetch,
        "kernels",
        kernel_id,
        "spans",
        body={"spans": [{"start": start, "end": time.time()}]},
    )
    assert answer["interval_seconds"] == 0.5
    (span,) = answer["spans"]
    assert span["samples"] >= 3 and not span["too_short"]
    assert span["peak_memory_mib"] == 2566  # the capture's process, now this kernel
    assert span["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3" and span["mean_utilization"] == 100


async def test_spans_of_an_unknown_kernel_or_malformed_spans_are_refused(fake_smi, jp_fetch):
    unknown = "00000000-0000-0000-0000-000000000000"
    code, _ = await status_of(post(jp_fetch, "kernels", unknown, "spans", body={"spans": []}))
    assert code == 404
    session = await start_session(jp_fetch, "x.ipynb")
    code, message = await status_of(
        post(
            jp_fetch,
            "kernels",
            session["kernel"]["id"],
            "spans",
            body={"spans": [{"start": 2, "end": 1}]},
        )
    )
    assert code == 400 and "start <= end" in message


@pytest.mark.parametrize(
    "argv,metadata,interpreter,prefix",
    [
        # ipykernel's own kernelspec: jupyter_client runs it with the server's Python.
        (["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"], {}, sys.executable, sys.prefix),
        ([sys.executable, "-m", "ipykernel_launcher"], {}, sys.executable, sys.prefix),
        # A `conda run` wrapper names its environment, not conda's.
        (["conda", "run", "-p", "/opt/envs/train", "python", "-m", "ipykernel_launcher"], {}, "conda", "/opt/envs/train"),
        # nb_conda_kernels says where in its metadata.
        (["/opt/conda/bin/python", "-m", "ipykernel_launcher"], {"conda_env_path": "/opt/envs/train"}, "/opt/conda/bin/python", "/opt/envs/train"),
    ],
)  # fmt: skip
def test_the_kernelspec_is_read_as_jupyter_client_launches_it(argv, metadata, interpreter, prefix):
    spec = KernelSpec(argv=argv, display_name="k", language="python", metadata=metadata)
    manager = SimpleNamespace(kernel_name="k", kernel_spec=spec)
    assert kernelspec_launch(manager)[:2] == (interpreter, prefix)


def test_a_kernelspec_whose_environment_was_deleted_is_told_missing(tmp_path):
    python = tmp_path / "envs" / "gone" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    spec = KernelSpec(argv=[str(python), "-m", "ipykernel_launcher"], language="python")
    manager = SimpleNamespace(kernel_name="gone", kernel_spec=spec)
    assert kernelspec_launch(manager).missing is False
    python.unlink()  # the environment deleted while its kernelspec stays
    launch = kernelspec_launch(manager)
    assert (launch.interpreter, launch.missing, launch.language) == (str(python), True, "python")


def test_a_bash_kernelspec_says_its_language():
    spec = KernelSpec(argv=["bash", "-c", "exec bash_kernel -f {connection_file}"], language="bash")
    launch = kernelspec_launch(SimpleNamespace(kernel_name="bash", kernel_spec=spec))
    assert (launch.language, launch.missing) == ("bash", False)  # bash is on PATH
