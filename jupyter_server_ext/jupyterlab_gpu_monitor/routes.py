"""REST handlers under ``<base_url>/gpu-monitor/api/``, and the Prometheus exposition at
``<base_url>/gpu-monitor/metrics``: parse, call, serialize."""

from __future__ import annotations

import asyncio
import json
import math
import re
import weakref
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import tornado
import tornado.iostream
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from . import blocking
from ._version import __version__
from .bodies import BadBody, read_body
from .config import GpuMonitor
from .gpu.history import History
from .gpu.sampler import Sampler
from .kernel.cache_release import ReleaseRefused, release_cached_memory
from .kernel.cells import KernelHistory, Span, SpansTooCostly, attribute
from .kernel.join import kernels_summary
from .kernel.ready import settle_starting
from .kernel.service import KernelService
from .translation import gettext

# The environments (conda/), the kernel inspection (inspector, diagnose), the probe and the
# Prometheus exposition are imported by the handlers that use them, at their first request: a
# server pays for them when someone opens the Environment panel or scrapes, not at every start.
if TYPE_CHECKING:
    from collections.abc import Callable

    from prometheus_client.registry import CollectorRegistry

    from .conda.catalog import EnvironmentCatalog
    from .conda.errors import CondaCommandError
    from .conda.model import Environment
    from .lab.service import LabService

try:
    from jupyter_server.auth.decorator import allow_unauthenticated
except ImportError:  # jupyter_server < 2.13 has no server-wide check to opt out of

    def allow_unauthenticated(method):
        return method


AUTH_RESOURCE = "gpu-monitor"
# Any segment: the handler answers an id that is no kernel of this server itself (a JSON 404).
KERNEL_ID = r"([^/]+)"
PACKAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
# An environment's name is a folder's (at most 255 bytes on the usual file systems); its id
# adds a short hash.
MAX_NAME_CHARACTERS = 300
# The longest period a client may say it asks at (``every``): an hour, the longest interval.
MAX_EVERY_SECONDS = 3600.0
# The status of each refusal of cache_release: the kernel runs a cell (the request would wait
# behind it), did not answer in time, or the release raised in it.
RELEASE_REFUSAL_STATUS = {"busy": 409, "timeout": 504, "failed": 502}
# The keys of ``web_app.settings`` holding the Sampler, the configuration, the kernel side
# (KernelService) and the RequestsInFlight of our routes: handlers reach each through its
# typed property of GpuMonitorHandler.
SAMPLER_SETTING = "gpu_monitor_sampler"
CONFIG_SETTING = "gpu_monitor_config"
KERNELS_SETTING = "gpu_monitor_kernels"
IN_FLIGHT_SETTING = "gpu_monitor_in_flight"
LAB_SETTING = "gpu_monitor_lab"
# The most of an answer handed to the socket at once (GpuMonitorHandler.finish_in_pieces).
PIECE_BYTES = 256 * 1024
# The exposition of the latest read in each format asked for: (snapshot, {type: body}).
METRICS_SETTING = "gpu_monitor_metrics"
# The ledger's period when a client names none.
WEEK_SECONDS = 7 * 86400


class ApiError(tornado.web.HTTPError):
    """A request refused with a message a person can act on, and details for the answer
    (``ErrorBody``). The message may quote the request (a name with a '%'): tornado's log gets
    it escaped, since it takes the message for a format."""

    def __init__(self, status: int, message: str, **details: Any):
        super().__init__(status, message.replace("%", "%%"))
        self.message = message
        self.details = details


def refusal_of(error: BaseException | None) -> ApiError | None:
    """The answer to a request whose work the server could not do in time, or will not do
    because it stops: 503 when the server stops or is busy with other requests of the kind,
    504 when files it reads did not answer (a network filesystem that hangs); None for any
    other error."""
    if isinstance(error, blocking.Stopping):
        return ApiError(503, gettext("the server is stopping; ask again once it is back"))
    if isinstance(error, blocking.TimedOut):
        if error.pool == blocking.REQUESTS.name:
            message = gettext(
                "the server is busy with other requests like this one and did not get to it "
                "within {seconds} s; ask again in a moment"
            )
            return ApiError(503, message.format(seconds=f"{error.seconds:g}"))
        if error.stuck_seconds is not None:
            message = gettext(
                "files the server reads for this have not answered for {seconds} s: a network "
                "filesystem may hang, or a FIFO stands where a file should be. The GPU readings "
                "are not affected; ask again in a minute."
            ).format(seconds=f"{error.stuck_seconds:.0f}")
        else:
            message = gettext(
                "files the server reads for this did not answer within {seconds} s: a network "
                "filesystem may hang, or a FIFO stands where a file should be. The GPU readings "
                "are not affected; ask again in a minute."
            ).format(seconds=f"{error.seconds:g}")
        return ApiError(504, message)
    return None


class RequestsInFlight:
    """The requests of ours not answered yet. When the server stops, the work they wait for
    is abandoned (blocking.stop_waiting) and they answer 503; the stop gives them a moment to
    send it before the event loop ends, instead of leaving their connections unanswered."""

    def __init__(self) -> None:
        self._handlers: weakref.WeakSet = weakref.WeakSet()
        self._all_answered: asyncio.Future | None = None

    def add(self, handler: GpuMonitorHandler) -> None:
        """A request being answered."""
        self._handlers.add(handler)

    def discard(self, handler: GpuMonitorHandler) -> None:
        """A request answered."""
        self._handlers.discard(handler)
        waiter = self._all_answered
        if not self._handlers and waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def answered(self, timeout_seconds: float) -> None:
        """Return once every request has been answered, or after ``timeout_seconds``."""
        if not self._handlers:
            return
        self._all_answered = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(self._all_answered, timeout_seconds)
        except asyncio.TimeoutError:
            pass  # one waits on something else (a kernel): the server stops all the same


class GpuMonitorHandler(APIHandler):
    """Base: every request is authenticated, then authorized to read ``gpu-monitor``; a refusal
    is an ApiError raised anywhere, answered in the APIHandler's JSON shape. Work that did not
    finish in time, or that the server's stop abandoned, is answered 503 or 504 (see
    ``refusal_of``), never 500 with a traceback."""

    auth_resource = AUTH_RESOURCE

    async def prepare(self) -> None:  # type: ignore[override]
        """Counted in flight until answered (see RequestsInFlight), then jupyter_server's."""
        in_flight = self.settings.get(IN_FLIGHT_SETTING)
        if in_flight is not None:
            in_flight.add(self)
        await super().prepare()

    def on_finish(self) -> None:
        """No longer in flight."""
        in_flight = self.settings.get(IN_FLIGHT_SETTING)
        if in_flight is not None:
            in_flight.discard(self)
        super().on_finish()

    async def finish_in_pieces(self, body: bytes) -> None:
        """``finish(body)`` (JSON), handed to the socket a piece at a time with the event loop
        free between pieces: tornado hands a whole body to one send(), and copying a history of
        megabytes into the socket held the loop ~25 ms per answer (tests/test_starvation.py).
        A client that leaves meanwhile is let go."""
        if len(body) <= PIECE_BYTES:
            self.finish(body)
            return
        self.set_header("Content-Type", "application/json")
        self.set_header("Content-Length", len(body))
        try:
            for start in range(0, len(body), PIECE_BYTES):
                self.write(body[start : start + PIECE_BYTES])
                await self.flush()
        except tornado.iostream.StreamClosedError:
            return
        self.finish()

    def compute_etag(self) -> None:
        """No ETag: tornado hashes every answer's body on the event loop to make one, and ours
        change with every read (a history is megabytes), so the hash only cost the loop."""
        return None

    def refusal(self, error: BaseException | None) -> ApiError | None:
        """The answer to an error that is no bug of ours (``refusal_of``); None otherwise."""
        return refusal_of(error)

    def log_exception(self, typ, value, tb) -> None:  # type: ignore[no-untyped-def]
        """One line for work not done in time or abandoned at the stop: no traceback."""
        if self.refusal(value) is not None:
            self.log.warning("%s %s: %s", self.request.method, self.request.path, value)
            return
        super().log_exception(typ, value, tb)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """``{message, reason, **details}`` of an ApiError; jupyter_server's answer otherwise."""
        error = kwargs.get("exc_info", (None, None, None))[1]
        refusal = self.refusal(error)
        if refusal is not None:
            self.set_status(refusal.status_code)
            error = refusal
        if not isinstance(error, ApiError):
            super().write_error(status_code, **kwargs)
            return
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"message": error.message, "reason": None, **error.details}))

    async def json_body(self, payload: str) -> Any:
        """The request's body, of the shape the contract declares for ``payload``; an ApiError
        (400 or 413) that says what is wrong with it otherwise."""
        try:
            return await read_body(self.request.body, payload)
        except BadBody as error:
            raise ApiError(error.status, error.message) from None

    @property
    def sampler(self) -> Sampler:
        return self.settings[SAMPLER_SETTING]

    @property
    def monitor_config(self) -> GpuMonitor:
        return self.settings[CONFIG_SETTING]

    @property
    def kernels(self) -> KernelService:
        return self.settings[KERNELS_SETTING]

    def query_number(self, name: str) -> tuple[str, float] | None:
        """A query argument as given and as a number (nan when it is none); None when left
        out or empty."""
        raw = self.get_query_argument(name, None)
        if raw is None or raw == "":
            return None
        try:
            return raw, float(raw)
        except ValueError:
            return raw, math.nan

    def asks_every(self) -> float | None:
        """``every``: how many seconds apart this client asks; None when not said."""
        given = self.query_number("every")
        if given is None:
            return None
        raw, every = given
        if not 0 < every <= MAX_EVERY_SECONDS:
            raise ApiError(
                400,
                f"'every' must be seconds, more than 0 and at most "
                f"{MAX_EVERY_SECONDS:g}, not {raw[:40]!r}",
            )
        return every


class GpusHandler(GpuMonitorHandler):
    """``GET gpus?every=<seconds>``: the latest snapshot of every GPU; ``every``, how often
    this client asks, when seldom (see Sampler.snapshot)."""

    @tornado.web.authenticated
    @authorized("read")
    async def get(self) -> None:
        self.finish(await self.sampler.snapshot_json(self.asks_every()))


class HistoryHandler(GpuMonitorHandler):
    """``GET gpus/history?since=<epoch seconds>``: the readings after ``since``, columnar."""

    @tornado.web.authenticated
    @authorized("read")
    async def get(self) -> None:
        await self.finish_in_pieces(await self.sampler.history_json(self._since()))

    def _since(self) -> float | None:
        given = self.query_number("since")
        if given is None:
            return None
        raw, since = given
        if not math.isfinite(since):
            raise ApiError(
                400, f"'since' must be a timestamp in seconds since the epoch, not {raw[:40]!r}"
            )
        return since


class StatusHandler(GpuMonitorHandler):
    """``GET status``: the source in use, the settings, driver and CUDA, the last error."""

    @tornado.web.authenticated
    @authorized("read")
    async def get(self) -> None:
        sampler = self.sampler
        snapshot = await sampler.snapshot()
        good = sampler.last_good
        self.finish(
            json.dumps(
                {
                    "version": __version__,
                    "source": snapshot.source,
                    "source_setting": self.monitor_config.source,
                    "interval_seconds": sampler.interval_seconds,
                    "history_seconds": sampler.history.history_seconds,
                    "idle_seconds": sampler.idle_seconds,
                    "sampling": sampler.sampling,
                    "reads": sampler.reads,
                    "driver_version": good.driver_version if good else None,
                    "cuda_version": good.cuda_version if good else None,
                    "error": asdict(snapshot.error) if snapshot.error else None,
                }
            )
        )


class KernelsHandler(GpuMonitorHandler):
    """``GET kernels?every=<seconds>``: this server's kernels with the GPU memory each holds,
    most first."""

    @tornado.web.authenticated
    @authorized("read")
    async def get(self) -> None:
        snapshot = await self.sampler.snapshot(self.asks_every())
        kernel_join = self.kernels.join
        kernels = await kernel_join.kernels()
        settle_starting(self.kernel_manager, kernels)
        summary = kernels_summary(
            snapshot, kernels, kernel_join.machine_use, self.kernels.idle_held.since()
        )
        self.finish(json.dumps(summary))


class LabHandler(GpuMonitorHandler):
    """``GET lab``: every machine of the lab, from the Prometheus that scrapes them all
    (``GpuMonitor.lab_prometheus_url``); ``configured: false`` without one."""

    @property
    def lab(self) -> LabService:
        """The lab's Prometheus, made at the first request: a server whose users never look
        costs nothing."""
        lab = self.settings.get(LAB_SETTING)
        if lab is None:
            from .lab.service import LabService
            from .metrics import ServerIdentity

            config = self.monitor_config
            identity = ServerIdentity.of(config.metrics_host, config.metrics_user)
            lab = self.settings[LAB_SETTING] = LabService(
                config, identity, self.kernels.ledger.own_names
            )
        return lab

    @tornado.web.authenticated
    @authorized("read")
    async def get(self) -> None:
        self.finish(json.dumps(await self.lab.view()))


class LabLedgerHandler(LabHandler):
    """``GET lab/ledger?since=<seconds>``: each notebook's GPU-hours busy and idle-held over the
    last ``since`` seconds (whole hours, a week by default), from the lab's recording rules."""

    @tornado.web.authenticated
    @authorized("read")
    async def get(self) -> None:
        from .lab.report import MAX_SECONDS, MIN_SECONDS

        raw, since = self.query_number("since") or ("", WEEK_SECONDS)
        if not MIN_SECONDS <= since <= MAX_SECONDS:  # NaN too
            raise ApiError(
                400,
                f"'since' must be seconds, at least {MIN_SECONDS} and at most {MAX_SECONDS}, "
                f"not {raw[:40]!r}",
            )
        # Whole hours: the ledger's points are hours, and the answers are kept by period.
        hours = int(since // 3600)
        self.finish(json.dumps(await self.lab.ledger(hours * 3600)))


class ProbeHandler(GpuMonitorHandler):
    """``GET probe?deep=0|1``: the expression the frontend evaluates in a kernel, silently."""

    @tornado.web.authenticated
    @authorized("read")
    def get(self) -> None:
        from .kernel.probe import DEFAULT_PACKAGES, probe_expression

        deep = self.get_query_argument("deep", "0") == "1"
        extra = [name for name in self.get_query_argument("packages", "").split(",") if name]
        if not all(PACKAGE_NAME.fullmatch(name) for name in extra):
            raise ApiError(400, "packages must be distribution names, comma separated")
        names = tuple(dict.fromkeys((*DEFAULT_PACKAGES, *extra)))
        self.finish(json.dumps({"expression": probe_expression(names, deep), "deep": deep}))


class DiagnoseHandler(GpuMonitorHandler):
    """``POST diagnose`` {kernel_id, probe?, expected_prefix?}: the server's facts about a kernel
    and the findings, with the probe's answer when the frontend has one."""

    @tornado.web.authenticated
    @authorized("read")
    async def post(self) -> None:
        from .kernel.inspector import inspect_kernel

        body = await self.json_body("DiagnoseRequest")
        kernel_id = body["kernel_id"]
        if kernel_id not in self.kernel_manager:
            raise ApiError(404, gettext("no such kernel on this server"))
        report = await inspect_kernel(
            kernel_id,
            kernel_manager=self.kernel_manager,
            sampler=self.sampler,
            kernel_join=self.kernels.join,
            kernel_history=self.kernels.history,
            probe=body.get("probe"),
            expected_prefix=body.get("expected_prefix"),
        )
        self.finish(json.dumps(report))


class KernelSpansHandler(GpuMonitorHandler):
    """``POST kernels/<id>/spans`` {spans: [{start, end}]}: the kernel's GPU figures over each
    span (cell runs), from the server's full-resolution history."""

    @tornado.web.authenticated
    @authorized("read")
    async def post(self, kernel_id: str) -> None:
        kernel_history = self.kernels.history
        if kernel_id not in self.kernel_manager and not kernel_history.knows(kernel_id):
            raise ApiError(404, gettext("no such kernel on this server"))
        body = await self.json_body("SpansRequest")
        spans = [Span(float(span["start"]), float(span["end"])) for span in body["spans"]]
        reversed_span = next((n for n, span in enumerate(spans) if span.start > span.end), None)
        if reversed_span is not None:
            raise ApiError(400, f"spans[{reversed_span}] ends before it starts (start <= end)")
        await self.sampler.snapshot()
        # Copies, read in a thread: an hour-long cell on 8 GPUs is tens of thousands of values.
        history = self.sampler.history.copy()
        memory = kernel_history.copy(kernel_id)
        try:
            answer = await blocking.run(
                blocking.REQUESTS,
                _spans_answer,
                kernel_id,
                spans,
                history,
                memory,
                timeout_seconds=blocking.REQUEST_WORK_SECONDS,
            )
        except SpansTooCostly as error:
            raise ApiError(400, str(error)) from None
        await self.finish_in_pieces(answer)


class KernelCacheReleaseHandler(GpuMonitorHandler):
    """``POST kernels/<id>/release-cached-memory``: ``gc.collect()`` and
    ``torch.cuda.empty_cache()`` run silently in the kernel when it imported torch, and what
    the GPU got back."""

    @tornado.web.authenticated
    @authorized("read")
    # It runs code in the kernel: allowed to whom jupyter_server lets run code in kernels.
    @authorized("execute", resource="kernels")
    async def post(self, kernel_id: str) -> None:
        if kernel_id not in self.kernel_manager:
            raise ApiError(404, gettext("no such kernel on this server"))
        try:
            released = await release_cached_memory(self.kernel_manager, kernel_id)
        except ReleaseRefused as refusal:
            raise ApiError(RELEASE_REFUSAL_STATUS[refusal.kind], refusal.message) from None
        self.finish(json.dumps(released.to_json()))


def _spans_answer(
    kernel_id: str, spans: list[Span], history: History, memory: KernelHistory
) -> bytes:
    figures = attribute(kernel_id, spans, history, memory)
    return json.dumps({"interval_seconds": history.interval_seconds, "spans": figures}).encode()


class MetricsHandler(GpuMonitorHandler):
    """``GET metrics``: the latest read in Prometheus' text format, for a scraper.

    A scrape counts as watching: it wakes an idle Sampler and keeps it reading, since a scraper
    is someone looking. It needs a token (``Authorization: Bearer <token>``) like every other
    endpoint, except from the networks in ``GpuMonitor.metrics_unauthenticated_networks``,
    decided on the connection's own peer address: never on X-Real-IP or X-Forwarded-For, which
    any client can send and a proxy may pass through (``ServerApp.trust_xheaders`` rewrites
    ``request.remote_ip`` from them).
    """

    @allow_unauthenticated  # decided in the method: a trusted network, else a token
    async def get(self) -> None:
        from .metrics import in_networks, peer_address

        networks = self.monitor_config.metrics_unauthenticated_networks
        if in_networks(peer_address(self.request), networks):
            await self._write_metrics()
        else:
            await self._get_authenticated()

    @tornado.web.authenticated
    @authorized("read")
    async def _get_authenticated(self) -> None:
        await self._write_metrics()

    async def _write_metrics(self) -> None:
        from .metrics import exposition_format

        snapshot = await self.sampler.snapshot()
        encoder, content_type = exposition_format(self.request.headers.get("Accept"))
        # Rendered once per read and format, whoever scrapes: everything it shows changes only
        # with a read, and rendering 8 GPUs held the event loop ~20 ms per scrape.
        rendered = self.settings.get(METRICS_SETTING)
        if rendered is None or rendered[0] is not snapshot:
            rendered = self.settings[METRICS_SETTING] = (snapshot, {})
        bodies = rendered[1]
        if content_type not in bodies:
            bodies[content_type] = self._render(encoder)
        self.finish(bodies[content_type], set_content_type=content_type)

    def _render(self, encoder: Callable[[CollectorRegistry], bytes]) -> bytes:
        from .metrics import GpuCollector, ServerIdentity, render

        config = self.monitor_config
        collector = GpuCollector(
            self.sampler,
            self.kernels.gpu_memory,
            self.kernels.machine_uses,
            ServerIdentity.of(
                config.metrics_host, config.metrics_user, config.metrics_notebook_label
            ),
            self.kernels.ledger.accounts,
            self.kernels.idle_held.since,
        )
        return render(collector, encoder)


class EnvironmentsBase(GpuMonitorHandler):
    """Shared by the environment handlers: the catalog and the ``use_conda`` flag."""

    def refusal(self, error: BaseException | None) -> ApiError | None:
        """Also 504 for environment files that did not answer in time."""
        from .conda.errors import EnvironmentFilesTimeout

        if isinstance(error, EnvironmentFilesTimeout):
            return ApiError(504, error.message)
        return super().refusal(error)

    @property
    def catalog(self) -> EnvironmentCatalog:
        """The server's environments (see conda/catalog.py), made at the first request: one
        for the server, whose caches every later request shares."""
        catalog = self.settings.get("gpu_monitor_environments")
        if catalog is None:
            from .conda.catalog import EnvironmentCatalog

            catalog = EnvironmentCatalog(
                self.settings.get("kernel_spec_manager"), self.monitor_config
            )
            self.settings["gpu_monitor_environments"] = catalog
        return catalog

    def use_conda(self) -> bool:
        """The ``use_conda`` query flag (an ApiError when it is not a flag)."""
        raw = self.get_query_argument("use_conda", "0").lower()
        if raw in ("1", "true", "yes"):
            return True
        if raw in ("0", "false", "no", ""):
            return False
        raise ApiError(400, f"use_conda must be 1 or 0, not {raw[:20]!r}")

    @staticmethod
    def conda_failure(error: CondaCommandError) -> ApiError:
        """503 when conda is missing, 504 when it hung, 502 when it failed."""
        status = {"not_installed": 503, "timeout": 504}.get(error.kind, 502)
        return ApiError(status, f"{error.message}. {error.hint}", error=error.to_json())

    async def environment(self, key: str, use_conda: bool) -> Environment:
        """The environment a URL names by id or name, conda's own too with ``use_conda``; an
        ApiError (404, 409, conda's failure) otherwise. A path is never looked up: only names
        the listing gave match."""
        from .conda.errors import AmbiguousEnvironment, CondaCommandError, EnvironmentNotFound

        if len(key) > MAX_NAME_CHARACTERS:
            raise ApiError(404, f"no environment has a name of {len(key)} characters")
        if "/" in key or "\\" in key or key in ("", ".", ".."):
            raise ApiError(
                404, f"{key!r} is a path: name an environment by its name or id from GET envs"
            )
        try:
            return await self.catalog.resolve(key, use_conda)
        except EnvironmentNotFound as error:
            raise ApiError(404, str(error)) from None
        except AmbiguousEnvironment as error:
            raise ApiError(409, str(error), ids=error.ids) from None
        except CondaCommandError as error:
            raise self.conda_failure(error) from None


class EnvironmentsHandler(EnvironmentsBase):
    """``GET envs[?use_conda=1]``: every environment, and the folders whose files did not
    answer in time (``unreadable``, with why); also in the shape of ``conda env list --json``
    (``envs``, ``envs_details``)."""

    @tornado.web.authenticated
    @authorized("read")
    async def get(self) -> None:
        from .conda.errors import CondaCommandError

        use_conda = self.use_conda()
        try:
            found = await self.catalog.listing(use_conda)
        except CondaCommandError as error:
            raise self.conda_failure(error) from None
        self.finish(found.answer)


class EnvironmentHandler(EnvironmentsBase):
    """``GET envs/<name or id>[?use_conda=1]``: the environment and its packages, with the
    pairs of conda and pip packages that install the same Python distribution."""

    @tornado.web.authenticated
    @authorized("read")
    async def get(self, key: str) -> None:
        from .conda.records import conda_and_pip

        environment = await self.environment(key, self.use_conda())
        found = await self.catalog.packages(environment)
        pairs = [{"conda": c.to_json(), "pip": p.to_json()} for c, p in conda_and_pip(found)]
        self.finish(
            json.dumps(
                {
                    "environment": environment.to_json(),
                    "packages": [package.to_json() for package in found],
                    "conda_and_pip": pairs,
                }
            )
        )


class EnvironmentExportHandler(EnvironmentsBase):
    """``GET envs/<name or id>/export?style=no-builds|from-history|with-builds|requirements|
    pylock[&use_conda=1]``: environment.yml, from the records on disk or (``use_conda``) from
    ``conda env export``; requirements.txt or pylock.toml of what pip or uv installed."""

    @tornado.web.authenticated
    @authorized("read")
    async def get(self, key: str) -> None:
        from .conda.errors import CondaCommandError
        from .conda.export import FILE_NAMES, MEDIA_TYPES, PIP_STYLES, UnsupportedExport
        from .conda.export import STYLES as EXPORT_STYLES

        style = self.get_query_argument("style", "no-builds")
        if style not in EXPORT_STYLES:
            raise ApiError(
                400, f"style must be one of {', '.join(EXPORT_STYLES)}, not {style[:40]!r}"
            )
        use_conda = self.use_conda()
        if use_conda and style in PIP_STYLES:
            # Refused before conda is asked which environments it knows.
            raise ApiError(400, f"conda env export writes environment.yml only, not {style}")
        environment = await self.environment(key, use_conda)
        try:
            text = await self.catalog.export(environment, style, use_conda)
        except CondaCommandError as error:
            raise self.conda_failure(error) from None
        except UnsupportedExport as error:
            raise ApiError(400, str(error)) from None
        self.set_header("Content-Disposition", f'attachment; filename="{FILE_NAMES[style]}"')
        self.finish(text, set_content_type=f"{MEDIA_TYPES[style]}; charset=UTF-8")


class FixedAnswerHandler(GpuMonitorHandler):
    """One answer for every request (authenticated all the same): a route of ours that does not
    exist (JSON, not jupyter_server's HTML page), or every route while an invalid setting
    keeps the extension off (so that the panel says what to correct, not "not enabled")."""

    def initialize(self, status: int, message: str) -> None:
        self._status = status
        self._message = message

    @tornado.web.authenticated
    @authorized("read")
    def get(self, *_) -> None:
        raise ApiError(self._status, self._message)

    post = get


def setup_off_handlers(web_app, problem: str) -> None:
    """Answer every route of ours with the setting that keeps the extension off."""
    routes = url_path_join(web_app.settings["base_url"], "gpu-monitor", ".*")
    answer = {"status": 503, "message": f"GPU Monitor is off: {problem}"}
    web_app.add_handlers(".*$", [(routes, FixedAnswerHandler, answer)])


def setup_route_handlers(
    web_app, sampler: Sampler, config: GpuMonitor, kernels: KernelService
) -> None:
    """Register the handlers under the server's base_url (``/user/<name>/`` on JupyterHub)."""
    web_app.settings[SAMPLER_SETTING] = sampler
    web_app.settings[CONFIG_SETTING] = config
    web_app.settings[KERNELS_SETTING] = kernels
    web_app.settings[IN_FLIGHT_SETTING] = RequestsInFlight()
    api = url_path_join(web_app.settings["base_url"], "gpu-monitor", "api")
    web_app.add_handlers(
        ".*$",
        [
            (url_path_join(api, "gpus"), GpusHandler),
            (url_path_join(api, "gpus", "history"), HistoryHandler),
            (url_path_join(api, "status"), StatusHandler),
            (url_path_join(api, "kernels"), KernelsHandler),
            (url_path_join(api, "kernels", KERNEL_ID, "spans"), KernelSpansHandler),
            (
                url_path_join(api, "kernels", KERNEL_ID, "release-cached-memory"),
                KernelCacheReleaseHandler,
            ),
            (url_path_join(api, "lab"), LabHandler),
            (url_path_join(api, "lab", "ledger"), LabLedgerHandler),
            (url_path_join(api, "probe"), ProbeHandler),
            (url_path_join(api, "diagnose"), DiagnoseHandler),
            (url_path_join(api, "envs"), EnvironmentsHandler),
            (url_path_join(api, "envs", "([^/]+)"), EnvironmentHandler),
            (url_path_join(api, "envs", "([^/]+)", "export"), EnvironmentExportHandler),
            (url_path_join(web_app.settings["base_url"], "gpu-monitor", "metrics"), MetricsHandler),
            (
                url_path_join(web_app.settings["base_url"], "gpu-monitor", ".*"),
                FixedAnswerHandler,
                {"status": 404, "message": "no such route of the GPU Monitor API"},
            ),
        ],
    )
