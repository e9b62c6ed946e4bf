"""What a server start pays for: loading the extension imports none of what only some requests
need (bench/startup.py measures the time it saves)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Imported at a route's first request, never at load.
ON_FIRST_USE = (
    "jupyterlab_gpu_monitor.conda",
    "jupyterlab_gpu_monitor.diagnose",
    "jupyterlab_gpu_monitor.kernel.inspector",
    "jupyterlab_gpu_monitor.kernel.probe",
    "jupyterlab_gpu_monitor.gpu.prometheus",
    "jupyterlab_gpu_monitor.metrics",
    "jupyterlab_server.translation_utils",
)


def _modules_after(program: str, config_dir: Path) -> set[str]:
    listing = f"{program}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    # Without this environment's configuration: no other extension (JupyterLab) is loaded.
    environment = {**os.environ, "JUPYTER_CONFIG_DIR": str(config_dir), "JUPYTER_NO_CONFIG": "1"}
    answer = subprocess.run(
        [sys.executable, "-c", listing],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    return set(json.loads(answer.stdout.splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m.startswith(name) for name in ON_FIRST_USE))


def test_loading_the_extension_imports_only_what_every_start_needs(tmp_path):
    loaded = _modules_after(
        "from jupyter_server.serverapp import ServerApp\n"
        "app = ServerApp()\n"
        "app.initialize(['--ServerApp.jpserver_extensions=jupyterlab_gpu_monitor=True',"
        " '--ServerApp.allow_root=True', '--ServerApp.open_browser=False'])\n"
        "assert 'jupyterlab_gpu_monitor' in app.extension_manager.extensions",
        tmp_path,
    )
    assert "jupyterlab_gpu_monitor.routes" in loaded
    assert heavy(loaded) == []


def test_the_check_sees_an_import_on_first_use(tmp_path):
    # The same listing after an environments request's imports: the check above can fail.
    loaded = _modules_after("import jupyterlab_gpu_monitor.conda.catalog", tmp_path)
    assert "jupyterlab_gpu_monitor.conda.catalog" in heavy(loaded)
