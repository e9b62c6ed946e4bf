"""The documentation's references (scripts/references.py) against what they are written from: the
REST API's JSON Schemas and routes, the GpuMonitor settings, the settings schemas and the
server's hints."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

from jupyterlab_gpu_monitor.routes import GpuMonitorHandler, setup_route_handlers

from .contract_check import ANSWERS
from .replay import REPO

SCRIPT = REPO / "scripts" / "references.py"
_API = "/gpu-monitor/api/"


def references_module():
    """scripts/references.py, imported (its dataclasses need it in sys.modules)."""
    spec = importlib.util.spec_from_file_location("gpu_monitor_references", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def served_routes() -> set[tuple[str, str]]:
    """(method, path under gpu-monitor/api/ with "*" for a segment) of every route the server
    registers."""

    class WebApp:
        def __init__(self):
            self.settings = {"base_url": "/"}
            self.handlers = []

        def add_handlers(self, _host, handlers):
            self.handlers.extend(handlers)

    web_app = WebApp()
    setup_route_handlers(web_app, None, None, None)
    routes = set()
    for pattern, handler, *_ in web_app.handlers:
        if _API not in pattern:
            continue  # the metrics, and the catch-all 404
        path = re.sub(r"\([^)]*\)", "*", pattern.split(_API, 1)[1])
        for method in ("get", "post", "put", "patch", "delete"):
            defined = any(
                method in vars(cls)
                for cls in handler.__mro__
                if issubclass(cls, GpuMonitorHandler) and cls is not GpuMonitorHandler
            )
            if defined:
                routes.add((method.upper(), path))
    return routes


def test_the_committed_references_are_what_the_schemas_and_settings_give():
    checked = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_rest_reference_documents_every_route_the_server_serves_and_no_other():
    documented = {
        (route.method, re.sub(r"<[^>]*>", "*", route.path)) for route in references_module().ROUTES
    }
    assert documented == served_routes()


def test_each_route_of_the_rest_reference_answers_the_payload_the_tests_check_it_against():
    for route in references_module().ROUTES:
        pattern = re.sub(r"<[^>]*>", "*", route.path)
        assert ANSWERS.get((route.method, pattern)) == route.answer, route.title
