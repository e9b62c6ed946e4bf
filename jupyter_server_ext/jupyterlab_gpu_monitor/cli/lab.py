"""``lab``: every machine of the lab, from the Prometheus that scrapes every server, as a table
or ``GET lab``'s JSON."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterable
from typing import Any

from traitlets import Bool, Unicode

from ..lab.service import LabService
from ..metrics import ServerIdentity
from ..translation import gettext, ngettext
from .command import GpuMonitorCommand
from .lab_report import format_ledger, ledger_csv, since_seconds
from .terms import COMMAND, failure_text


def _gib(mib: float | None) -> str:
    return gettext("n/a") if mib is None else f"{mib / 1024:.1f}"


def idle_text(seconds: float) -> str:
    """How long a GPU has idled: "idle 40 min", "idle 2 h 10 min"."""
    minutes = int(max(seconds, 0) // 60)
    if minutes < 60:
        return gettext("idle {minutes} min").format(minutes=minutes)
    return gettext("idle {hours} h {minutes} min").format(hours=minutes // 60, minutes=minutes % 60)


def _gpu_line(gpu: dict[str, Any], now: float) -> str:
    utilization = gpu["utilization_gpu"]
    busy = gettext("n/a") if utilization is None else f"{utilization:.0f} %"
    memory = f"{_gib(gpu['memory_used_mib'])} / {_gib(gpu['memory_total_mib'])} GiB"
    holders = ", ".join(
        (
            gettext("{user} {notebook} (yours) {memory} GiB")
            if holder["own"]
            else gettext("{user} {notebook} {memory} GiB")
        ).format(
            user=holder["user"],
            notebook=holder["notebook"] or "-",
            memory=_gib(holder["memory_used_mib"]),
        )
        for holder in gpu["holders"]
    )
    state = holders
    if gpu["free"]:
        idle = gpu["idle_since"]
        state = gettext("free") if idle is None else f"{gettext('free')}, {idle_text(now - idle)}"
    name = gpu["name"] or gettext("unknown GPU")
    return f"  GPU {gpu['index']}  {name}  {busy}  {memory}  {state}".rstrip()


def format_lab(view: dict[str, Any]) -> str:
    """The lab as a terminal shows it: each machine, its GPUs under it, then how many report."""
    lines = []
    for node in view["nodes"]:
        gpus = node["gpus"]
        state = gettext("reporting") if node["reporting"] else gettext("not reporting")
        free = sum(1 for gpu in gpus if gpu["free"])
        summary = ngettext("{count} GPU, {free} free", "{count} GPUs, {free} free", len(gpus))
        summary = summary.format(count=len(gpus), free=free)
        host = node["host"]
        if node["exporter"]:
            host = f"{host} ({node['exporter']})"  # no server of ours there: no notebooks
        lines.append(f"{host}  {state}  {summary}" if gpus else f"{host}  {state}")
        lines.extend(_gpu_line(gpu, view["timestamp"]) for gpu in gpus)
    lines.append(
        gettext("{reporting} of {known} machines reporting").format(
            reporting=view["reporting"], known=view["known"]
        )
    )
    return "\n".join(lines)


class LabApp(GpuMonitorCommand):
    """``lab``: every machine of the lab; ``lab report``: each notebook's GPU-hours."""

    name = f"{COMMAND} lab"

    json_output = Bool(False, help="Print GET lab's JSON, its error included.").tag(config=True)
    since = Unicode("7d", help="The report's period: hours, days or weeks, e.g. 12h, 7d, 2w.").tag(
        config=True
    )
    csv_output = Bool(False, help="Print the report as CSV.").tag(config=True)

    def command_description(self) -> str:
        """What the command does, one paragraph in the language in force."""
        return gettext(
            "Ask the lab's Prometheus (GpuMonitor.lab_prometheus_url, which scrapes every "
            "server's /gpu-monitor/metrics) for every machine of the lab and print a table: each "
            "machine, whether it reports, and its GPUs with their utilisation, memory and the "
            "notebooks that hold them, by user (yours marked). With --json, GET lab's JSON. Exit "
            "status: 0; 1 when the lab's Prometheus is not set or could not be read (what "
            "happened and what to do on stderr); 2 for an invalid option or setting. "
            "`lab report` prints instead each notebook's GPU-hours busy and idle-held over the "
            "last --since (from the recording rules of prometheus/lab.yml, which the lab's "
            "Prometheus must load), the most idle-held first, and a digest; --csv for a "
            "spreadsheet, --json for GET lab/ledger's JSON."
        )

    def command_examples(self) -> Iterable[tuple[str, str]]:
        return (
            (f"{COMMAND} lab", gettext("every machine and its GPUs")),
            (f"{COMMAND} lab --json", gettext("GET lab's JSON, for scripts")),
            (
                f"{COMMAND} lab report --since 7d",
                gettext("each notebook's GPU-hours busy and idle-held this week"),
            ),
            (f"{COMMAND} lab report --since 30d --csv", gettext("the month, for a spreadsheet")),
            (
                f"{COMMAND} lab --lab-prometheus-url http://prometheus.lab:9090",
                gettext("another Prometheus than the config files name"),
            ),
        )

    def command_aliases(self) -> dict[str, tuple[str, str]]:
        """Where the lab's Prometheus is, how long it may take, and the report's period."""
        return {
            **self.setting_aliases(
                "lab-prometheus-url", "lab-prometheus-bearer-token-file", "command-timeout"
            ),
            "since": (
                self.own("since"),
                gettext("The report's period: hours, days or weeks, e.g. 12h, 7d, 2w."),
            ),
        }

    def command_flags(self) -> dict[str, tuple[dict, str]]:
        """``--json``, ``--csv``."""
        return {
            "json": (
                {"LabApp": {"json_output": True}},
                gettext("Print GET lab's JSON, its error included."),
            ),
            "csv": ({"LabApp": {"csv_output": True}}, gettext("Print the report as CSV.")),
        }

    def check_arguments(self) -> None:
        """Nothing, or ``report`` with a period the ledger has."""
        report = self.extra_args[:1] == ["report"]
        unexpected = self.extra_args[1:] if report else self.extra_args
        if unexpected:
            self.fail(gettext("unexpected argument {argument}").format(argument=unexpected[0]))
        if self.extra_args and since_seconds(self.since) is None:
            self.fail(
                gettext(
                    "--since must be whole hours, days or weeks (12h, 7d, 2w), from 1h to 31d, "
                    "not {value}"
                ).format(value=repr(self.since))
            )

    def start(self) -> int:
        """0 when the lab was read, 1 when not."""
        settings = self.settings
        identity = ServerIdentity.of(settings.metrics_host, settings.metrics_user)
        lab = LabService(settings, identity)
        if self.extra_args:
            answer = asyncio.run(lab.ledger(since_seconds(self.since) or 0))
            shown = ledger_csv(answer) if self.csv_output else format_ledger(answer)
        else:
            answer = asyncio.run(lab.view())
            shown = format_lab(answer)
        error = answer["error"]
        if self.json_output:
            print(json.dumps(answer, indent=2))
        elif error is None:
            print(shown, end="" if self.csv_output else "\n")
        if error is not None:
            print(failure_text(error["kind"], error["message"], error["hint"]), file=sys.stderr)
            return 1
        return 0
