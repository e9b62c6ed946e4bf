"""Every answer of the API checked against the REST contract (api_schema/): the tests' clients
(pytest-jupyter's jp_fetch, and those of test_hostile.py) fail on an answer that is not what the
contract declares, so that every state a test puts the server in checks the contract too."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from jupyterlab_gpu_monitor.contract import validator

# What each route of ``<base_url>/gpu-monitor/api/`` answers with a 2xx status, by method and
# path ("*" a segment). ``envs/*/export`` answers a file (environment.yml, requirements.txt,
# pylock.toml), not JSON. Every answer of 400 or more is an ``ErrorBody``.
ANSWERS = {
    ("GET", "gpus"): "GpuSnapshot",
    ("GET", "gpus/history"): "GpuHistory",
    ("GET", "status"): "ServerStatus",
    ("GET", "kernels"): "KernelList",
    ("GET", "lab"): "LabView",
    ("GET", "lab/ledger"): "LabLedger",
    ("POST", "kernels/*/spans"): "SpansAnswer",
    ("POST", "kernels/*/release-cached-memory"): "CacheReleaseAnswer",
    ("GET", "probe"): "ProbeExpression",
    ("POST", "diagnose"): "Diagnosis",
    ("GET", "envs"): "EnvironmentList",
    ("GET", "envs/*"): "EnvironmentPackages",
}
_API = "/gpu-monitor/api/"


def answer_of(method: str, route: str) -> str | None:
    """The payload a route (the path after ``gpu-monitor/api/``) answers with, if JSON."""
    parts = route.strip("/").split("/")
    for (known_method, pattern), payload in ANSWERS.items():
        known = pattern.split("/")
        if known_method == method and len(known) == len(parts):
            if all(k in ("*", p) for k, p in zip(known, parts)):
                return payload
    return None


def problems(payload: str, value: Any) -> list[str]:
    """Where ``value`` is not what the contract declares for ``payload`` (none: it is)."""
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message[:300]}"
        for error in validator(payload).iter_errors(value)
    ]


def check_answer(method: str, url: str, status: int, body: bytes) -> None:
    """Fail (AssertionError) when an answer of ours is not what the contract declares."""
    path = urlsplit(url).path
    if _API not in path:
        return
    route = path.split(_API, 1)[1]
    payload = "ErrorBody" if status >= 400 else answer_of(method, route)
    if payload is None:
        return
    found = problems(payload, json.loads(body))
    assert not found, f"{method} {path[:120]} ({status}) is no {payload}: {found[:5]}"
