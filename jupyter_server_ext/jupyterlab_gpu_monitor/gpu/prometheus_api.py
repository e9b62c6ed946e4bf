"""Prometheus' HTTP API (``/api/v1/query``, ``/api/v1/query_range``) without blocking the event
loop, for the Prometheus source of a node's GPUs and for the lab's view of every node.

Every failure is a GpuReadError with the hint its caller gives for its kind: ``timeout``;
``unknown`` when Prometheus cannot be reached or fails (5xx, hint ``unreachable``);
``permission`` for 401/403 or an unreadable token file; ``bad_output`` when the answer is not
Prometheus' (a wrong URL, a bad query); ``not_installed`` when no URL is configured.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPResponse
from tornado.simple_httpclient import HTTPTimeoutError

from .. import blocking
from ..translation import gettext
from .errors import GpuReadError

# Requests in flight to one Prometheus at most; the lab's view asks a dozen at once.
MAX_REQUESTS = 16


class PrometheusApi:
    """One Prometheus, asked through an HTTP client of its own: the event loop's shared one runs
    10 requests at a time for everyone, so the lab's dozen queries to a slow Prometheus would
    hold up the GPU reads from another (and time them out in its queue)."""

    def __init__(
        self,
        url: str,
        unset: str,
        hints: Mapping[str, str],
        timeout_seconds: float = 5.0,
        bearer_token_file: str = "",
        verify_tls: bool = True,
    ):
        """``unset`` says which setting lacks the URL when there is none; ``hints`` holds the
        untranslated hint of each failure kind (and ``unreachable``), in the caller's
        settings' words."""
        self._url = url.rstrip("/")
        self._unset = unset
        self._hints = hints
        self._timeout_seconds = timeout_seconds
        self._bearer_token_file = bearer_token_file
        self._verify_tls = verify_tls
        self._client: AsyncHTTPClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    async def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant query's result."""
        return await self.api("query", {"query": promql})

    async def api(self, endpoint: str, params: dict[str, str]) -> list[dict[str, Any]]:
        """The result of ``/api/v1/<endpoint>`` asked with ``params``."""
        if not self._url:
            raise self.failure("not_installed", self._unset)
        headers = {"Accept": "application/json"}
        if self._bearer_token_file:
            headers["Authorization"] = f"Bearer {await self._bearer_token()}"
        # Prometheus stops the evaluation too, instead of finishing work nobody waits for.
        query = urlencode({**params, "timeout": f"{self._timeout_seconds:g}s"})
        try:
            response = await self._http().fetch(
                f"{self._url}/api/v1/{endpoint}?{query}",
                headers=headers,
                connect_timeout=self._timeout_seconds,
                request_timeout=self._timeout_seconds,
                validate_cert=self._verify_tls,
                raise_error=False,
            )
        except HTTPTimeoutError:
            message = gettext("Prometheus at {url} did not answer within {seconds} s")
            seconds = f"{self._timeout_seconds:g}"
            raise self.failure("timeout", message.format(url=self._url, seconds=seconds)) from None
        except (HTTPClientError, OSError) as error:
            message = gettext("Prometheus at {url} is not reachable: {error}")
            raise self.failure(
                "unknown", message.format(url=self._url, error=error), "unreachable"
            ) from None
        return self._result(response)

    def _http(self) -> AsyncHTTPClient:
        """This Prometheus' client on the running event loop (a command line may run several
        loops in turn, and a client works on the loop it was made on)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = AsyncHTTPClient(force_instance=True, max_clients=MAX_REQUESTS)
            self._client_loop = loop
        return self._client

    def failure(self, kind: str, message: str, hint: str | None = None) -> GpuReadError:
        return GpuReadError(kind, message, gettext(self._hints[hint or kind]))

    async def _bearer_token(self) -> str:
        # Read at every request: Kubernetes rotates service account tokens in place.
        try:
            token = await blocking.run(
                blocking.GPU,
                Path(self._bearer_token_file).read_text,
                timeout_seconds=self._timeout_seconds,
                key=("token", self._bearer_token_file),
            )
        except blocking.TimedOut:
            message = gettext("the bearer token file {path} did not answer within {seconds} s")
            path, seconds = self._bearer_token_file, f"{self._timeout_seconds:g}"
            raise self.failure("timeout", message.format(path=path, seconds=seconds)) from None
        except OSError as error:
            message = gettext("the bearer token file cannot be read: {error}").format(error=error)
            raise self.failure("permission", message) from None
        return token.strip()

    def _result(self, response: HTTPResponse) -> list[dict[str, Any]]:
        status = f"{response.code} {response.reason}"
        if response.code in (401, 403):
            message = gettext("Prometheus at {url} refused the request: {status}")
            raise self.failure("permission", message.format(url=self._url, status=status))
        try:
            answer = json.loads(response.body or b"")
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            problem = gettext("{status}, not with Prometheus' API").format(status=status)
            answer = {}
        elif answer.get("status") == "success":
            result = (answer.get("data") or {}).get("result")
            if isinstance(result, list):
                return result
            problem = gettext("success, without a result")
        else:
            problem = f"{answer.get('errorType', status)}: {answer.get('error')}"
        if answer.get("errorType") == "timeout" or response.code == 504:
            message = gettext("Prometheus at {url} gave up on the query: {problem}")
            raise self.failure("timeout", message.format(url=self._url, problem=problem))
        if response.code >= 500:
            message = gettext("Prometheus at {url} failed: {problem}")
            raise self.failure(
                "unknown", message.format(url=self._url, problem=problem), "unreachable"
            )
        message = gettext("Prometheus at {url} answered {problem}")
        raise self.failure("bad_output", message.format(url=self._url, problem=problem))
