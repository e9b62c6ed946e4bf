"""``GET lab``'s and ``GET lab/ledger``'s answers: the lab's view and its ledger, read from its
Prometheus only when someone asks, at most once per ``REFRESH_SECONDS`` (the ledger: per
``LEDGER_REFRESH_SECONDS``) however many clients ask, one read shared by all who wait for it.
A failure of the lab's Prometheus is the view's ``error``, never an error of this server's own
GPU readings."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from .. import blocking
from ..gpu.errors import GpuReadError
from ..gpu.prometheus_api import PrometheusApi
from ..translation import N_, gettext
from . import report
from .view import QUERIES, lab_nodes, nodes_json

if TYPE_CHECKING:
    from ..config import GpuMonitor
    from ..metrics import ServerIdentity

REFRESH_SECONDS = 5.0
# The ledger moves by the hour: read again at most once a minute.
LEDGER_REFRESH_SECONDS = 60.0
# The answers kept: the view and a few periods of the ledger.
MAX_KEPT = 8

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
    it: their own notebooks by the paths ``own_names`` gives for their labels (a server's
    ``NotebookLedger.own_names``; none from a terminal)."""

    def __init__(
        self,
        settings: GpuMonitor,
        identity: ServerIdentity,
        own_names: Callable[[], Mapping[str, str]] = dict,
    ):
        self.configured = bool(settings.lab_prometheus_url)
        self._identity = identity
        self._own_names = own_names
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
        # Each answer kept (the view, a ledger by its period), with when it was read; and the
        # reads under way, one per answer, shared by every client that waits for it.
        self._answers: OrderedDict[Hashable, tuple[float, dict[str, Any]]] = OrderedDict()
        self._reading: dict[Hashable, asyncio.Future] = {}

    async def view(self) -> dict[str, Any]:
        """The view, read again when the last is older than ``REFRESH_SECONDS``."""
        if not self.configured:
            return self._json([], self._unset(), time.time())
        return await self._shared("view", REFRESH_SECONDS, self._read)

    async def ledger(self, since_seconds: int) -> dict[str, Any]:
        """Each notebook's GPU-hours busy and idle-held over the last ``since_seconds`` (whole
        hours, see ``report``), read again when the last is older than
        ``LEDGER_REFRESH_SECONDS``."""
        if not self.configured:
            return self._ledger_json(since_seconds, [], self._unset(), time.time())
        return await self._shared(
            ("ledger", since_seconds),
            LEDGER_REFRESH_SECONDS,
            lambda: self._read_ledger(since_seconds),
        )

    def _unset(self) -> GpuReadError:
        return self._prometheus.failure("not_installed", gettext(UNSET))

    async def _shared(
        self,
        key: Hashable,
        refresh_seconds: float,
        read: Callable[[], Awaitable[dict[str, Any]]],
    ) -> dict[str, Any]:
        """The answer kept under ``key`` while younger than ``refresh_seconds``, else the one
        read under way, else a new read."""
        kept = self._answers.get(key)
        if kept is not None and time.monotonic() - kept[0] < refresh_seconds:
            return kept[1]
        reading = self._reading.get(key)
        if reading is None:
            reading = self._reading[key] = asyncio.ensure_future(self._keep(key, read))
            reading.add_done_callback(lambda _: self._reading.pop(key, None))
        # Shielded: a client that gives up does not cancel the read the others wait for.
        return await asyncio.shield(reading)

    async def _keep(
        self, key: Hashable, read: Callable[[], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        answer = await read()
        self._answers[key] = (time.monotonic(), answer)
        self._answers.move_to_end(key)
        while len(self._answers) > MAX_KEPT:
            self._answers.popitem(last=False)
        return answer

    async def _read(self) -> dict[str, Any]:
        answers = await asyncio.gather(
            *(self._prometheus.query(query) for query in QUERIES.values()),
            return_exceptions=True,
        )
        failed = _failure(answers)
        if failed is not None:
            return self._json([], failed, time.time())
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
            self._own_names(),
            timeout_seconds=self._timeout_seconds,
        )
        return self._json(nodes_json(nodes), None, now)

    async def _read_ledger(self, since_seconds: int) -> dict[str, Any]:
        now = time.time()
        params = report.range_params(since_seconds, now)
        answers = await asyncio.gather(
            *(
                self._prometheus.api("query_range", {"query": query, **params})
                for query in report.QUERIES.values()
            ),
            return_exceptions=True,
        )
        failed = _failure(answers)
        if failed is not None:
            return self._ledger_json(since_seconds, [], failed, now)
        # A month of a large lab is a million points to add up: on a thread, as the view.
        rows = await blocking.run(
            blocking.GPU,
            report.ledger_rows,
            dict(zip(report.QUERIES, answers)),
            self._identity.user,
            self._own_names(),
            timeout_seconds=self._timeout_seconds,
        )
        return self._ledger_json(since_seconds, [vars(row) for row in rows], None, now)

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

    def _ledger_json(
        self,
        since_seconds: int,
        rows: list[dict[str, Any]],
        error: GpuReadError | None,
        now: float,
    ) -> dict[str, Any]:
        return {
            "configured": self.configured,
            "timestamp": now,
            "since_seconds": since_seconds,
            "user": self._identity.user,
            "error": asdict(error.to_error()) if error is not None else None,
            "notebooks": rows,
        }


def _failure(answers: list[Any]) -> GpuReadError | None:
    """The lab's Prometheus' failure among the answers, if any; any other exception raised."""
    failed = next((answer for answer in answers if isinstance(answer, BaseException)), None)
    if failed is not None and not isinstance(failed, GpuReadError):
        raise failed
    return failed
