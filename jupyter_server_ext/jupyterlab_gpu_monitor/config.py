"""Server settings, as traitlets: ``c.GpuMonitor.<name>`` in jupyter_server_config.py."""

from __future__ import annotations

import ipaddress
import re
from string import Formatter
from urllib.parse import urlsplit

from traitlets import Bool, Enum, Float, List, TraitError, Unicode, validate
from traitlets.config import Configurable

from .gpu.source import SOURCE_NAMES

MIN_INTERVAL_SECONDS = 0.5
# The most each setting in seconds may be. Beyond, a value is a typo or a joke (1e308, inf) that
# would hold a read for good, never read again, or size the history beyond any memory: a day of
# history (about 220 MB for 8 GPUs at 1 s); a read an hour; a command that takes ten minutes.
MAX_SECONDS = {
    "interval": 3600.0,
    "history_seconds": 86400.0,
    "command_timeout": 600.0,
    "idle_seconds": 86400.0,
    "conda_timeout": 3600.0,
}


class GpuMonitor(Configurable):
    """Settings of the GPU monitor's server extension."""

    source = Enum(
        list(SOURCE_NAMES),
        default_value="auto",
        help="Where GPU readings come from: 'nvml' (nvidia-ml-py), 'nvidia-smi', 'auto' "
        "(NVML when it starts, else nvidia-smi), or 'prometheus' (the series of a DCGM "
        "exporter or nvidia_gpu_exporter, see prometheus_url).",
    ).tag(config=True)

    nvidia_smi_path = Unicode(
        "nvidia-smi",
        help="The nvidia-smi executable: a name looked up on PATH, or a full path.",
    ).tag(config=True)

    interval = Float(
        1.0,
        help=f"Seconds between two reads of the GPUs (at least {MIN_INTERVAL_SECONDS}, at most "
        f"{MAX_SECONDS['interval']:g}).",
    ).tag(config=True)

    history_seconds = Float(
        3600.0,
        help="How many seconds of readings the server keeps for the charts (at most "
        f"{MAX_SECONDS['history_seconds']:g}, a day).",
    ).tag(config=True)

    command_timeout = Float(
        5.0,
        help="Seconds a single nvidia-smi, NVML or Prometheus read may take before it counts as "
        f"hung (at most {MAX_SECONDS['command_timeout']:g}).",
    ).tag(config=True)

    idle_seconds = Float(
        30.0,
        help="Reading stops when no client has asked for GPU data for this many seconds (at "
        f"most {MAX_SECONDS['idle_seconds']:g}).",
    ).tag(config=True)

    show_other_users_commands = Bool(
        False,
        help="Send the command lines of other users' GPU processes to the browser. Off by "
        "default: on a shared server they can hold paths, host names or tokens.",
    ).tag(config=True)

    prometheus_url = Unicode(
        "",
        help="With source='prometheus': the Prometheus (or Thanos, Mimir...) that scrapes this "
        "node's GPU exporter, the address under which it serves /api/v1/query, e.g. "
        "'http://prometheus-server.monitoring'.",
    ).tag(config=True)

    prometheus_selector = Unicode(
        "",
        help="With source='prometheus': label matchers that pick this node's or this pod's "
        'GPUs out of all in Prometheus, e.g. {Hostname="node-7"} or {pod="jupyter-alice"}. '
        "Empty: every GPU Prometheus has.",
    ).tag(config=True)

    prometheus_bearer_token_file = Unicode(
        "",
        help="With source='prometheus': a file holding a bearer token sent to Prometheus (re-read "
        "at each request, so rotated Kubernetes tokens work). Empty: no Authorization header.",
    ).tag(config=True)

    metrics_unauthenticated_networks = List(
        Unicode(),
        default_value=[],
        help="Networks (CIDR, e.g. '10.0.0.0/8') from which GET /gpu-monitor/metrics may be "
        "scraped without a token. Empty (the default): every scrape needs a token, like every "
        "other endpoint. Decided on the address of the connection's peer, never on "
        "X-Forwarded-For or X-Real-IP (even with ServerApp.trust_xheaders): behind a proxy "
        "(JupyterHub's included), that is the proxy's address, and listing it lets every "
        "client of the proxy scrape without a token.",
    ).tag(config=True)

    lab_prometheus_url = Unicode(
        "",
        help="The lab's Prometheus, which scrapes every GPU server's /gpu-monitor/metrics (the "
        "address under which it serves /api/v1/query, e.g. 'http://prometheus.lab:9090'): "
        "GET lab, the Lab view and `jupyter-gpu-monitor lab` show every machine from it. "
        "Empty: no lab view.",
    ).tag(config=True)

    lab_prometheus_bearer_token_file = Unicode(
        "",
        help="A file holding a bearer token sent to the lab's Prometheus (re-read at each "
        "request). Empty: no Authorization header.",
    ).tag(config=True)

    lab_prometheus_verify_tls = Bool(
        True,
        help="Whether to check the TLS certificate of an https:// lab_prometheus_url. Turn it "
        "off only for a lab's own self-signed certificate on a network you trust.",
    ).tag(config=True)

    lab_open_url = Unicode(
        "",
        help="Where a user of the Lab view goes to work on another machine: a URL with {node} "
        "(the machine's host label) and {user} (the user's name), e.g. JupyterHub's named "
        "server spawn URL 'https://hub.lab/hub/spawn/{user}/{node}'. Empty: the Lab view names "
        "the machine without a link.",
    ).tag(config=True)

    metrics_notebook_label = Enum(
        ["hash", "path", "none"],
        default_value="hash",
        help="How /metrics names a kernel's notebook (its `notebook` label, in the per-kernel "
        "series and the notebooks' GPU ledger): 'hash', the first 12 hex digits of the SHA-256 "
        "of its path (the same notebook has the same label on every server, and a reader of "
        "the lab's Prometheus learns no other user's notebook names); 'path', the path under "
        "the server's root; 'none', no name (the ledger then counts per user only).",
    ).tag(config=True)

    metrics_host = Unicode(
        "",
        help="The `host` label of /metrics' GPU, kernel and ledger series, by which a lab's "
        "Prometheus finds a GPU that several servers of one machine report (JupyterHub: a "
        "server per user). Empty: this machine's host name.",
    ).tag(config=True)

    metrics_user = Unicode(
        "",
        help="The `user` label of /metrics' kernel and ledger series. Empty: the JupyterHub "
        "user the server runs for (JUPYTERHUB_USER), else the user the server runs as.",
    ).tag(config=True)

    extra_envs_dirs = List(
        Unicode(),
        default_value=[],
        help="Folders whose subfolders are environments, searched besides those conda itself "
        "uses (~/.conda/environments.txt, envs_dirs of the .condarc files, CONDA_ENVS_PATH, "
        "<root>/envs of each conda installation): e.g. a team's '/data/envs', or a project's "
        "'.pixi/envs'.",
    ).tag(config=True)

    conda_path = Unicode(
        "conda",
        help="The conda (or mamba) executable run when a client asks to go through conda "
        "(use_conda=1: `conda info --json`, `conda env export`): a name looked up on PATH, or "
        "a full path. Environments are otherwise read from disk, without conda.",
    ).tag(config=True)

    conda_timeout = Float(
        60.0,
        help="Seconds a conda command may take before it is killed (at most "
        f"{MAX_SECONDS['conda_timeout']:g}).",
    ).tag(config=True)

    # Each message names the setting, what it takes and the value given: it is the one line an
    # administrator reads in the server log.
    @validate("prometheus_selector")
    def _valid_selector(self, proposal):
        from .gpu.prometheus import selector_matchers  # only where a selector is set

        try:
            selector_matchers(proposal.value)
        except ValueError:
            raise TraitError(
                "GpuMonitor.prometheus_selector must be label matchers in braces, like "
                f'{{Hostname="node-7"}}, not {proposal.value!r}'
            ) from None
        return proposal.value

    @validate("metrics_unauthenticated_networks")
    def _valid_networks(self, proposal):
        for network in proposal.value:
            try:
                ipaddress.ip_network(network, strict=False)
            except ValueError:
                raise TraitError(
                    "GpuMonitor.metrics_unauthenticated_networks must list networks in CIDR "
                    f"form, like '10.0.0.0/8' or 'fd00::/8', not {network!r}"
                ) from None
        return proposal.value

    @validate("prometheus_url", "lab_prometheus_url")
    def _valid_prometheus_url(self, proposal):
        address = urlsplit(proposal.value)
        if proposal.value and (address.scheme not in ("http", "https") or not address.netloc):
            raise TraitError(
                f"GpuMonitor.{proposal.trait.name} must be the http:// or https:// address of a "
                f"Prometheus, like 'http://prometheus:9090', not {proposal.value!r}"
            )
        return proposal.value

    @validate("lab_open_url")
    def _valid_open_url(self, proposal):
        try:
            fields = {field for _, field, _, _ in Formatter().parse(proposal.value)}
        except ValueError:  # a lone brace
            fields = {"{"}
        if urlsplit(proposal.value).scheme not in ("http", "https", "") or not fields <= {
            "node",
            "user",
            None,
        }:
            raise TraitError(
                "GpuMonitor.lab_open_url must be an http(s):// URL or a path in which only "
                "{node} and {user} are filled in, like "
                f"'https://hub.lab/hub/spawn/{{user}}/{{node}}', not {proposal.value!r}"
            )
        return proposal.value

    @validate("interval")
    def _valid_interval(self, proposal):
        most = MAX_SECONDS["interval"]
        if not MIN_INTERVAL_SECONDS <= proposal.value <= most:  # NaN too
            raise TraitError(
                f"GpuMonitor.interval must be at least {MIN_INTERVAL_SECONDS} and at most "
                f"{most:g} (seconds), not {proposal.value!r}"
            )
        return proposal.value

    @validate("history_seconds", "command_timeout", "idle_seconds", "conda_timeout")
    def _positive(self, proposal):
        most = MAX_SECONDS[proposal.trait.name]
        if not 0 < proposal.value <= most:  # NaN and inf too
            raise TraitError(
                f"GpuMonitor.{proposal.trait.name} must be a number of seconds above 0 and at "
                f"most {most:g}, not {proposal.value!r}"
            )
        return proposal.value


# traitlets' own words for a value of the wrong type or outside an Enum.
_TRAITLETS_REFUSAL = re.compile(
    r"The '(?P<name>\w+)' trait of an? (?P<owner>\w+) instance expected (?P<expected>.+?), "
    r"not (?P<given>.+?)\.?$",
    re.S,
)


def setting_problem(error: TraitError) -> str:
    """An invalid setting as one line: the setting, what it takes, the value given."""
    refusal = _TRAITLETS_REFUSAL.match(str(error))
    if refusal is None:
        return str(error)
    return (
        f"{refusal['owner']}.{refusal['name']} must be {refusal['expected']}, "
        f"not {refusal['given']}"
    )
