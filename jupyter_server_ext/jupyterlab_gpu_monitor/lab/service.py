"""``GET lab``'s answer: the lab's view, read from its Prometheus only when someone asks, at most
once per ``REFRESH_SECONDS`` however many clients ask, one read shared by all who wait for it.
A failure of the lab's Prometheus is the view's ``error``, never an error of this server's own
GPU readings."""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from .. import blocking
from ..gpu.errors import GpuReadError
from ..gpu.prometheus_api import PrometheusApi
from ..translation import N_, gettext
from .view import QUERIES, lab_nodes, nodes_json

if TYPE_CHECKING:
    from ..config import GpuMonitor
    from ..metrics import ServerIdentity

REFRESH_SECONDS = 5.0

UNSET = N_("GpuMonitor.lab_prometheus_url is not set")

# Translated when an error is made (see PrometheusApi).
HINTS = {
    "not_installed": N_(
        "Set c.GpuMonitor.lab_prometheus_url to the Prometheus that scrapes every server's "
        "/gpu-monitor/metrics."
    ),
    "unreachable": N_(
        "Check GpuMonitor.lab_prometheus_url and that the lab's Prometheus is up and reachable "
        "from this server (`curl <url>/-/ready`)."
    ),
    "timeout": N_(
        "The lab's Prometheus did not answer in time: it may be overloaded or far away. "
        "GpuMonitor.command_timeout sets the limit."
    ),
    "permission": N_(
        "The lab's Prometheus, or the proxy in front of it, wants credentials: put a bearer "
        "token in the file that GpuMonitor.lab_prometheus_bearer_token_file names."
    ),
    "bad_output": N_(
        "Check that GpuMonitor.lab_prometheus_url is the address Prometheus (or Thanos, "
        "Mimir...) serves /api/v1/query under."
    ),
}


class LabService:
    """The lab's Prometheus, asked for the view of every machine, as ``identity``'s user sees
    it."""

    def __init__(self, settings: GpuMonitor, identity: ServerIdentity):
        self.configured = bool(settings.lab_prometheus_url)
        self._identity = identity
        self._open_template = settings.lab_open_url
        self._timeout_seconds = settings.command_timeout
        self._prometheus = PrometheusApi(
            settings.lab_prometheus_url,
            gettext(UNSET),
            HINTS,
            settings.command_timeout,
            settings.lab_prometheus_bearer_token_file,
            settings.lab_prometheus_verify_tls,
        )
        self._answer: dict[str, Any] | None = None
        self._answered_at = -REFRESH_SECONDS
        self._reading: asyncio.Future | None = None

    async def view(self) -> dict[str, Any]:
        """The view, read again when the last is older than ``REFRESH_SECONDS``."""
        if not self.configured:
            unset = self._prometheus.failure("not_installed", gettext(UNSET))
            return self._json([], unset, time.time())
        if self._answer is not None and time.monotonic() - self._answered_at < REFRESH_SECONDS:
            return self._answer
        if self._reading is None:
            self._reading = asyncio.ensure_future(self._read())
            self._reading.add_done_callback(lambda _: setattr(self, "_reading", None))
        # Shielded: a client that gives up does not cancel the read the others wait for.
        return await asyncio.shield(self._reading)

    async def _read(self) -> dict[str, Any]:
        answers = await asyncio.gather(
            *(self._prometheus.query(query) for query in QUERIES.values()),
            return_exceptions=True,
        )
        failed = next((answer for answer in answers if isinstance(answer, BaseException)), None)
        if isinstance(failed, GpuReadError):
            answer = self._json([], failed, time.time())
        elif failed is not None:
            raise failed
        else:
            by_name = dict(zip(QUERIES, answers))
            now = next((float(result[0]["value"][0]) for result in answers if result), time.time())
            # A lab of hundreds of machines is thousands of series: built on a thread.
            nodes = await blocking.run(
                blocking.GPU,
                lab_nodes,
                by_name,
                now,
                self._identity.user,
                self._open_template,
                timeout_seconds=self._timeout_seconds,
            )
            answer = self._json(nodes_json(nodes), None, now)
        self._answer, self._answered_at = answer, time.monotonic()
        return answer

    def _json(
        self, nodes: list[dict[str, Any]], error: GpuReadError | None, now: float
    ) -> dict[str, Any]:
        return {
            "configured": self.configured,
            "timestamp": now,
            "user": self._identity.user,
            "host": self._identity.host,
            "error": asdict(error.to_error()) if error is not None else None,
            "nodes": nodes,
            "reporting": sum(1 for node in nodes if node["reporting"]),
            "known": len(nodes),
        }
