"""The lab under a real JupyterHub: two users' single-user servers on one host, each with this
extension and the same capture (the fake nvidia-smi replaying the two RTX A5000 workstation),
started by the hub (the ``jupyterhub`` package, its proxy npm's ``configurable-http-proxy``) and
scraped through the hub's proxy by a real Prometheus with each user's hub token. Nothing in
the servers' settings names the host or the user: the host is this machine's name, the user
the one JupyterHub starts the server for."""

from __future__ import annotations

import json
import secrets
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
from jupyterlab_gpu_monitor.kernel.ledger import notebook_label

from .prometheus_lab import REPO, free_port, require, running_process, running_prometheus
from .replay import install_fake_nvidia_smi
from .test_lab_ledger import A5000_XML, CAPTURE_PID

USERS = ("ana", "ben")
NOTEBOOKS = {"ana": "train.ipynb", "ben": "eval.ipynb"}
PROXY = REPO / "node_modules" / ".bin" / "configurable-http-proxy"


@dataclass
class Hub:
    """A running JupyterHub: its public URL (the proxy's) and a service token with the admin
    role."""

    url: str
    token: str
    process: psutil.Process

    def request(self, path: str, token: str, body: dict | None = None) -> bytes:
        """An authenticated request of ``path`` under the public URL (a POST with a body)."""
        request = urllib.request.Request(
            f"{self.url}/{path}",
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"token {token}"},
            method="POST" if body is not None else "GET",
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.read()

    def api(self, path: str, body: dict | None = None) -> dict:
        """The hub's REST API, as the admin service."""
        return json.loads(self.request(f"hub/api/{path}", self.token, body) or b"{}")

    def start_server(self, user: str, timeout_seconds: float = 90) -> None:
        """Have the hub spawn ``user``'s server, and wait until the hub says it is ready."""
        self.api(f"users/{user}/server", {})
        deadline = time.monotonic() + timeout_seconds
        while not self.api(f"users/{user}").get("servers", {}).get("", {}).get("ready"):
            assert time.monotonic() < deadline, f"{user}'s server did not start"
            time.sleep(0.5)

    def kernel_pid(self, kernel_id: str) -> int:
        """The pid of a kernel some user's server started (the servers are the hub's
        children)."""
        (kernel,) = [
            child
            for child in self.process.children(recursive=True)
            if any(kernel_id in part for part in child.cmdline())
        ]
        return kernel.pid


def hub_config(folder: Path, ports: dict[str, int], prometheus_url: str, token: str) -> Path:
    """A jupyterhub_config.py: dummy logins, each user's server a local process of this user
    (``SimpleLocalProcessSpawner``) in a home of its own, reading the GPUs through the fake
    nvidia-smi with that user's control file; ``token`` a service's, with the admin role."""
    fake = install_fake_nvidia_smi(folder / "bin")
    settings = {
        "JupyterHub.ip": "127.0.0.1",
        "JupyterHub.port": ports["public"],
        "JupyterHub.hub_ip": "127.0.0.1",
        "JupyterHub.hub_port": ports["hub"],
        "JupyterHub.db_url": f"sqlite:///{folder / 'jupyterhub.sqlite'}",
        "JupyterHub.cookie_secret_file": str(folder / "cookie_secret"),
        "JupyterHub.pid_file": str(folder / "jupyterhub.pid"),
        "JupyterHub.authenticator_class": "dummy",
        "JupyterHub.spawner_class": "simple",
        "Authenticator.allowed_users": set(USERS),
        "ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{ports['proxy_api']}",
        "ConfigurableHTTPProxy.command": [str(PROXY)],
        "SimpleLocalProcessSpawner.home_dir_template": str(folder / "home" / "{username}"),
        "Spawner.cmd": [sys.executable, "-m", "jupyterhub.singleuser"],
        "Spawner.args": [
            "--ServerApp.allow_root=True",
            "--GpuMonitor.source=nvidia-smi",
            f"--GpuMonitor.nvidia_smi_path={fake}",
            f"--GpuMonitor.lab_prometheus_url={prometheus_url}",
        ],
        "Spawner.start_timeout": 90,
        "Spawner.http_timeout": 90,
    }
    lines = [f"c.{name} = {value!r}" for name, value in settings.items()]
    lines += [
        f"c.JupyterHub.services = [{{'name': 'lab-test', 'api_token': {token!r}}}]",
        "c.JupyterHub.load_roles = [{'name': 'admin', 'services': ['lab-test']}]",
        # Each server its own fake nvidia-smi control, config and runtime folders.
        "c.Spawner.environment = {",
        f"    'FAKE_SMI_XML': {str(A5000_XML)!r},",
        f"    'FAKE_SMI_CONTROL': lambda spawner: f'{folder}/{{spawner.user.name}}-smi.json',",
        f"    'JUPYTER_CONFIG_DIR': {str(folder / 'config')!r},",
        f"    'JUPYTER_RUNTIME_DIR': lambda spawner: f'{folder}/{{spawner.user.name}}-runtime',",
        "}",
    ]
    config = folder / "jupyterhub_config.py"
    config.write_text("\n".join(lines) + "\n")
    return config


@contextmanager
def running_hub(folder: Path, prometheus_url: str) -> Iterator[Hub]:
    require(str(PROXY) if PROXY.exists() else None, "npm configurable-http-proxy (jlpm install)")
    folder.mkdir(parents=True, exist_ok=True)
    for user in USERS:
        (folder / f"{user}-smi.json").write_text("{}")
    ports = {name: free_port() for name in ("public", "hub", "proxy_api")}
    token = secrets.token_hex(16)
    config = hub_config(folder, ports, prometheus_url, token)
    url = f"http://127.0.0.1:{ports['public']}"
    command = [sys.executable, "-m", "jupyterhub", "-f", str(config)]
    with running_process(command, folder / "jupyterhub.log", f"{url}/hub/api/", "jupyterhub") as (
        process
    ):
        hub = Hub(url, token, psutil.Process(process.pid))
        try:
            yield hub
        finally:
            # The hub stops its users' servers on the way out; one left by a failure is not.
            servers = hub.process.children(recursive=True)
            process.terminate()
            psutil.wait_procs(servers, timeout=15)
            for server in servers:
                if server.is_running():
                    server.kill()


def lab_of(hub: Hub, user: str, token: str) -> dict:
    return json.loads(hub.request(f"user/{user}/gpu-monitor/api/lab", token))


def test_a_hub_hosts_gpus_appear_once_with_each_users_notebooks_named_only_for_their_user(
    tmp_path: Path,
):
    prometheus_port = free_port()
    prometheus_url = f"http://127.0.0.1:{prometheus_port}"
    with ExitStack() as running:
        hub = running.enter_context(running_hub(tmp_path / "hub", prometheus_url))
        tokens = {}
        jobs = []
        for user in USERS:
            hub.start_server(user)
            tokens[user] = hub.api(f"users/{user}/tokens", {"note": "lab Prometheus"})["token"]
            token_file = tmp_path / f"{user}-token"
            token_file.write_text(tokens[user])
            jobs.append(
                {
                    "job_name": user,
                    "metrics_path": f"/user/{user}/gpu-monitor/metrics",
                    "authorization": {"credentials_file": str(token_file)},
                    "static_configs": [{"targets": [hub.url.split("://", 1)[1]]}],
                }
            )
        running.enter_context(
            running_prometheus(tmp_path / "prometheus", jobs, port=prometheus_port)
        )
        # Each user's notebook holds the workstation's GPUs in their own server's replay.
        for user in USERS:
            session = json.loads(
                hub.request(
                    f"user/{user}/api/sessions",
                    tokens[user],
                    {"path": NOTEBOOKS[user], "type": "notebook", "kernel": {"name": "python3"}},
                )
            )
            pid = hub.kernel_pid(session["kernel"]["id"])
            control = tmp_path / "hub" / f"{user}-smi.json"
            control.write_text(json.dumps({"FAKE_SMI_PIDS": f"{CAPTURE_PID}:{pid}"}))

        def both_holders(user: str) -> dict:
            deadline = time.monotonic() + 90
            while True:
                view = lab_of(hub, user, tokens[user])
                gpus = [gpu for node in view["nodes"] for gpu in node["gpus"]]
                if gpus and all(len(gpu["holders"]) == 2 for gpu in gpus):
                    return view
                assert time.monotonic() < deadline, json.dumps(view)[:2000]
                time.sleep(0.5)

        ana = both_holders("ana")
        # The user JupyterHub started the server for; this machine, once, with its two GPUs.
        assert (ana["user"], ana["error"], ana["known"], ana["reporting"]) == ("ana", None, 1, 1)
        (node,) = ana["nodes"]
        assert node["host"] == socket.gethostname()
        assert [(gpu["index"], gpu["name"]) for gpu in node["gpus"]] == [
            (0, "NVIDIA RTX A5000"),
            (1, "NVIDIA RTX A5000"),
        ]
        holders = sorted(node["gpus"][0]["holders"], key=lambda holder: holder["user"])
        # Her own notebook by its path; ben's by its hash only.
        assert [(h["user"], h["notebook"], h["own"]) for h in holders] == [
            ("ana", "train.ipynb", True),
            ("ben", notebook_label("eval.ipynb", "hash"), False),
        ]
        ben = both_holders("ben")
        assert ben["user"] == "ben"
        holders = sorted(ben["nodes"][0]["gpus"][0]["holders"], key=lambda h: h["user"])
        assert [(h["user"], h["notebook"], h["own"]) for h in holders] == [
            ("ana", notebook_label("train.ipynb", "hash"), False),
            ("ben", "eval.ipynb", True),
        ]
        # Neither notebook's path is in what the lab scrapes: only hashes.
        metrics = hub.request("user/ana/gpu-monitor/metrics", tokens["ana"]).decode()
        assert "train.ipynb" not in metrics
        assert f'notebook="{notebook_label("train.ipynb", "hash")}"' in metrics
        # Ben's token opens ben's server only, and no token none.
        for token in (tokens["ben"], ""):
            try:
                refused = hub.request("user/ana/gpu-monitor/metrics", token)
            except urllib.error.HTTPError as error:
                refused = error.read()
            assert b"jupyter_gpu_memory_used_bytes" not in refused
