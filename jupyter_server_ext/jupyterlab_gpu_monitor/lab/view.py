"""The lab's view, built from the answers of a fixed set of instant queries (one per measure,
whatever the number of machines) to the Prometheus that scrapes every server's ``/metrics``.

A machine is its ``host`` label; a GPU that several servers of one machine report (JupyterHub
runs a server per user) is one GPU, by ``uuid``. A machine whose newest sample is older than two
of its scrape intervals is not reporting; one Prometheus saw in the last day but not now (its
scrapes fail, which marks its series stale at once, or it stopped more than the lookback of 5
minutes ago) is listed without GPUs.

How long a GPU has idled comes from two subqueries over ``IDLE_LOOKBACK_SECONDS`` at one step a
minute: when it was last at the low-utilisation line or over, else when it was first seen.

A machine with no server of ours whose DCGM exporter or nvidia_gpu_exporter the lab scrapes is
in the view too, its GPUs as the exporter reports them (read as the Prometheus source reads
them) and no notebooks: its host is DCGM's ``Hostname`` label, else the scrape target's host.
A GPU that a server of ours reports is taken from that server, whatever exporter also reports it.
Its GPUs' idle time is asked as for ours, of the exporters' own series; whether it was seen
in the last day, of each GPU's memory series at a step of 5 minutes (a sample a lookback, not
every scrape of a day), and at every scrape of the last 10 minutes: a machine that reported for
less than 5 minutes longer ago than that may be left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from ..contract import constant
from ..gpu.model import MIB
from ..gpu.prometheus import SMI_INDEX, SMI_INFO, Sample, has_dcgm, snapshot_from_samples
from ..gpu.readings import DCGM_RESERVED, READING

HELD_MEMORY_MIB = constant("HeldMemoryMib")
LOW_UTILIZATION_PERCENT = constant("LowUtilizationPercent")
# How far back a GPU's idle time is looked for: "idle over 6 h" says enough to choose a GPU.
IDLE_LOOKBACK_SECONDS = 6 * 3600
# The window over which a machine's scrapes are counted to learn its scrape interval.
SCRAPE_WINDOW_SECONDS = 600

# Each measure, a GPU once per machine however many servers report it.
QUERIES = {
    "utilization": "max by (host, uuid, gpu, name) (jupyter_gpu_utilization_ratio)",
    "memory_used": "max by (host, uuid, gpu, name) (jupyter_gpu_memory_used_bytes)",
    "memory_total": "max by (host, uuid, gpu, name) (jupyter_gpu_memory_total_bytes)",
    "holders": "sum by (host, uuid, user, notebook) (jupyter_gpu_kernel_memory_used_bytes)",
    "newest": "max by (host) (timestamp(jupyter_server_info))",
    "scrapes": f"max by (host) (count_over_time(jupyter_server_info[{SCRAPE_WINDOW_SECONDS}s]))",
    "known": "max by (host) (present_over_time(jupyter_server_info[1d]))",
    "busy_at": "max by (host, uuid) (max_over_time(timestamp(jupyter_gpu_utilization_ratio >= "
    f"{LOW_UTILIZATION_PERCENT / 100})[{IDLE_LOOKBACK_SECONDS}s:1m]))",
    "seen_from": "min by (host, uuid) (min_over_time(timestamp(jupyter_gpu_utilization_ratio)"
    f"[{IDLE_LOOKBACK_SECONDS}s:1m]))",
}


def _any_of(names: tuple[str, ...]) -> str:
    """A PromQL selector of the series of any of ``names``."""
    return f'{{__name__=~"{"|".join(names)}"}}'


def _exporters(reading: str) -> tuple[str, ...]:
    """The exporters' series of a reading: DCGM's, then nvidia_gpu_exporter's."""
    return (*READING[reading].dcgm, *READING[reading].exporter)


_UTILIZATION = READING["utilization_gpu"]
# Each exporter's GPU by the labels that tell it: its machine (DCGM's Hostname, else the scrape
# target) and its uuid (DCGM's UUID, nvidia_gpu_exporter's uuid).
_EXPORTER_GPU = "Hostname, instance, UUID, uuid"
# At the low-utilisation line or over, in each exporter's unit.
_EXPORTER_BUSY = " or ".join(
    f"{name} >= {LOW_UTILIZATION_PERCENT / factor:g}"
    for names, factor in (
        (_UTILIZATION.dcgm, _UTILIZATION.dcgm_factor),
        (_UTILIZATION.exporter, _UTILIZATION.exporter_factor),
    )
    for name in names
)
_EXPORTER_MEMORY = _any_of(_exporters("memory_used_mib"))  # one series a GPU, each exporter
QUERIES |= {
    "exporters_known": f"max by ({_EXPORTER_GPU}) ("
    f"present_over_time({_EXPORTER_MEMORY}[1d:5m]) or present_over_time({_EXPORTER_MEMORY}[10m]))",
    "exporters_busy_at": f"max by ({_EXPORTER_GPU}) "
    f"(max_over_time(timestamp({_EXPORTER_BUSY})[{IDLE_LOOKBACK_SECONDS}s:1m]))",
    "exporters_seen_from": f"min by ({_EXPORTER_GPU}) (min_over_time("
    f"timestamp({_any_of(_exporters('utilization_gpu'))})[{IDLE_LOOKBACK_SECONDS}s:1m]))",
}

# What the view reads of the exporters: each GPU's utilisation and memory, and what names it.
EXPORTER_SERIES = (
    *(
        series
        for reading in ("utilization_gpu", "memory_used_mib", "memory_free_mib", "memory_total_mib")
        for series in _exporters(reading)
    ),
    DCGM_RESERVED,
    SMI_INFO,
    SMI_INDEX,
)
QUERIES["exporters"] = _any_of(EXPORTER_SERIES)

Result = list[dict[str, Any]]


@dataclass
class LabHolder:
    """A user's notebook that holds memory on a GPU of the lab."""

    user: str
    notebook: str
    memory_used_mib: float
    own: bool  # the user of the server that asks


@dataclass
class LabGpu:
    uuid: str
    index: int
    name: str | None
    utilization_gpu: float | None
    memory_used_mib: float | None
    memory_total_mib: float | None
    free: bool  # nobody holds the held-memory rule's MiB on it
    # Since when it has been under the low-utilisation line (at most IDLE_LOOKBACK_SECONDS
    # back); None while it is over it, or its utilisation is not known.
    idle_since: float | None
    holders: list[LabHolder] = field(default_factory=list)


@dataclass
class LabNode:
    host: str
    reporting: bool
    last_seen: float | None
    # Where a user starts working on the machine (the admin's lab_open_url), or None.
    open_url: str | None = None
    gpus: list[LabGpu] = field(default_factory=list)
    # The exporter its GPUs come from where no server of ours reports it, else None.
    exporter: str | None = None


def _value(series: Mapping[str, Any]) -> float:
    return float(series["value"][1])


def _index(label: str | None) -> int:
    """A GPU's index from its ``gpu`` label; -1 where a series of the same name from
    another exporter has none, or not a number."""
    try:
        return int(label or "")
    except ValueError:
        return -1


def _by_gpu(result: Result) -> dict[tuple[str, str], float]:
    return {(s["metric"].get("host", ""), s["metric"].get("uuid", "")): _value(s) for s in result}


def open_url(template: str, host: str, user: str) -> str | None:
    """The admin's ``lab_open_url`` for a machine, its ``{node}`` and ``{user}`` filled in
    (quoted for a URL); None without a template."""
    if not template:
        return None
    return template.format(node=quote(host, safe=""), user=quote(user, safe=""))


def lab_nodes(
    answers: Mapping[str, Result],
    now: float,
    user: str,
    open_template: str = "",
    own_names: Mapping[str, str] | None = None,
) -> list[LabNode]:
    """The machines, by host, each with its GPUs by index, from the answers to ``QUERIES``
    asked at ``now`` (Prometheus' clock); ``user`` is the asking server's, whose notebooks are
    marked as its own, named by their paths where ``own_names`` knows their labels, and for
    whom ``open_template`` (the admin's ``lab_open_url``) is filled in."""
    newest = {s["metric"].get("host", ""): _value(s) for s in answers["newest"]}
    scrapes = {s["metric"].get("host", ""): _value(s) for s in answers["scrapes"]}
    hosts = {s["metric"].get("host", "") for s in answers["known"]} | newest.keys()
    nodes = {
        host: LabNode(
            host,
            _reporting(host, newest, scrapes, now),
            newest.get(host),
            open_url(open_template, host, user),
        )
        for host in hosts
    }
    used, total = _by_gpu(answers["memory_used"]), _by_gpu(answers["memory_total"])
    utilization = _by_gpu(answers["utilization"])
    busy_at, seen_from = _by_gpu(answers["busy_at"]), _by_gpu(answers["seen_from"])
    gpus: dict[tuple[str, str], LabGpu] = {}
    for series in answers["memory_total"]:
        labels = series["metric"]
        key = (labels.get("host", ""), labels.get("uuid", ""))
        mib_used = used[key] / MIB if key in used else None
        percent = utilization[key] * 100 if key in utilization else None
        gpu = gpus[key] = LabGpu(
            uuid=key[1],
            index=_index(labels.get("gpu")),
            name=labels.get("name"),
            utilization_gpu=percent,
            memory_used_mib=mib_used,
            memory_total_mib=total[key] / MIB,
            free=mib_used is not None and mib_used < HELD_MEMORY_MIB,
            idle_since=_idle_since(percent, busy_at.get(key), seen_from.get(key), now),
        )
        node = nodes.get(key[0])
        if node is None:
            node = nodes[key[0]] = LabNode(
                key[0], False, None, open_url(open_template, key[0], user)
            )
        node.gpus.append(gpu)
    _add_exporters(nodes, gpus, answers, now, user, open_template)
    for series in answers["holders"]:
        labels = series["metric"]
        gpu = gpus.get((labels.get("host", ""), labels.get("uuid", "")))
        if gpu is not None:
            holder_user = labels.get("user", "")
            own = holder_user == user
            notebook = own_name(labels.get("notebook", ""), own, own_names)
            gpu.holders.append(LabHolder(holder_user, notebook, _value(series) / MIB, own))
    for node in nodes.values():
        node.gpus.sort(key=lambda gpu: gpu.index)
        for gpu in node.gpus:
            gpu.holders.sort(key=lambda holder: -holder.memory_used_mib)
    return sorted(nodes.values(), key=lambda node: node.host)


def _idle_since(
    percent: float | None, busy_at: float | None, seen_from: float | None, now: float
) -> float | None:
    """Since when a GPU under the low-utilisation line has been: its last time at the line or
    over, else when it was first seen in the lookback; None while it is over the line, or its
    utilisation is not known."""
    if percent is None or percent >= LOW_UTILIZATION_PERCENT:
        return None
    return max(busy_at or 0.0, now if seen_from is None else seen_from)


def _by_exporter_gpu(result: Result) -> dict[tuple[str, str], float]:
    return {_exporter_gpu(s["metric"]): _value(s) for s in result}


def _exporter_name(dcgm: bool) -> str:
    """The ``exporter`` of a machine: a DCGM exporter's, else nvidia_gpu_exporter's."""
    return "DCGM exporter" if dcgm else "nvidia_gpu_exporter"


def _exporter_gpu(labels: Mapping[str, str]) -> tuple[str, str]:
    """An exporter's GPU: its machine, and its uuid as the Prometheus source writes it."""
    uuid = labels.get("UUID") or (f"GPU-{labels['uuid']}" if labels.get("uuid") else "")
    return exporter_host(labels), uuid


def _add_exporters(
    nodes: dict[str, LabNode],
    gpus: Mapping[tuple[str, str], LabGpu],
    answers: Mapping[str, Result],
    now: float,
    user: str,
    open_template: str,
) -> None:
    """Add the GPUs the exporters report that no server of ours does, by machine; and the
    machines an exporter reported in the last day but not now, as not reporting."""
    ours = {uuid for _, uuid in gpus}
    busy_at = _by_exporter_gpu(answers["exporters_busy_at"])
    seen_from = _by_exporter_gpu(answers["exporters_seen_from"])
    by_host: dict[str, list[Sample]] = {}
    for series in answers["exporters"]:
        labels = series["metric"]
        by_host.setdefault(exporter_host(labels), []).append((labels, _value(series)))
    for host, samples in by_host.items():
        snapshot = snapshot_from_samples(samples, now)
        new = [gpu for gpu in snapshot.gpus if gpu.uuid and gpu.uuid not in ours]
        if not new:
            continue
        node = nodes.get(host)
        if node is None:
            exporter = _exporter_name(has_dcgm(samples))
            # Its series are there: its last scrape worked (a failed one makes them stale).
            node = nodes[host] = LabNode(
                host, True, now, open_url(open_template, host, user), exporter=exporter
            )
        for gpu in new:
            used = gpu.memory_used_mib
            key = (host, str(gpu.uuid))
            node.gpus.append(
                LabGpu(
                    uuid=key[1],
                    index=gpu.index,
                    name=gpu.name,
                    utilization_gpu=gpu.utilization_gpu,
                    memory_used_mib=used,
                    memory_total_mib=gpu.memory_total_mib,
                    free=used is not None and used < HELD_MEMORY_MIB,
                    idle_since=_idle_since(
                        gpu.utilization_gpu, busy_at.get(key), seen_from.get(key), now
                    ),
                )
            )
    for series in answers["exporters_known"]:
        host, uuid = _exporter_gpu(series["metric"])
        if host not in nodes and uuid not in ours:
            exporter = _exporter_name("UUID" in series["metric"])  # DCGM's label
            nodes[host] = LabNode(
                host, False, None, open_url(open_template, host, user), exporter=exporter
            )


def exporter_host(labels: Mapping[str, str]) -> str:
    """The machine an exporter's series are of: DCGM's ``Hostname`` (on Kubernetes, the node),
    else the host of the scrape target (``instance`` without its port)."""
    if labels.get("Hostname"):
        return labels["Hostname"]
    instance = labels.get("instance", "")
    host, colon, port = instance.rpartition(":")
    return host if colon and port.isdigit() else instance


def own_name(label: str, own: bool, own_names: Mapping[str, str] | None) -> str:
    """A notebook's label as the lab shows it: the path of the asking user's own notebook
    where its server knows the hash (``NotebookLedger.own_names``), else the label."""
    return (own_names or {}).get(label, label) if own else label


def _reporting(
    host: str, newest: Mapping[str, float], scrapes: Mapping[str, float], now: float
) -> bool:
    """Whether the machine's newest sample is within two of its scrape intervals, learnt from
    how many scrapes the last window holds (a machine that stopped counts fewer: its interval
    comes out longer, which only delays calling it stale)."""
    if host not in newest:
        return False
    interval = SCRAPE_WINDOW_SECONDS / max(scrapes.get(host, 1.0), 1.0)
    return now - newest[host] <= 2 * interval


def nodes_json(nodes: list[LabNode]) -> list[dict[str, Any]]:
    """The machines as ``GET lab`` sends them (``vars`` one level at a time: ``asdict``'s deep
    copy cost a quarter of a 200-machine refresh)."""
    return [
        {
            **vars(node),
            "gpus": [
                {**vars(gpu), "holders": [vars(holder) for holder in gpu.holders]}
                for gpu in node.gpus
            ],
        }
        for node in nodes
    ]
