"""What ships for a lab's Prometheus and Grafana: ``prometheus/alerts.yml`` and ``lab.yml``
(checked and unit tested with promtool) and ``grafana/gpu-monitor.json`` (valid, and naming only
our series)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml
from jupyterlab_gpu_monitor.metrics import GPU_SERIES, SERIES_NAMES, series_name

from .prometheus_lab import (
    ALERT_TESTS,
    ALERTS,
    DASHBOARD,
    LAB_DASHBOARD,
    LAB_RULES,
    LAB_TESTS,
    PROMTOOL,
    REPO,
    require,
)

# Series names of any exporter, as they appear in PromQL (not the names recording rules make,
# which hold a colon).
SERIES_NAME = re.compile(
    r"(?<![:\w])(?:jupyter_(?:gpu|notebook|server)|DCGM_FI|nvidia_smi)_[A-Za-z0-9_]+(?![:\w])"
)
# Each rule file with its unit tests.
RULE_FILES = [(ALERTS, ALERT_TESTS), (LAB_RULES, LAB_TESTS)]


def promtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [require(PROMTOOL), *args], capture_output=True, text=True, timeout=60, cwd=ALERTS.parent
    )


def rules(path=ALERTS) -> list[dict]:
    return [rule for group in yaml.safe_load(path.read_text())["groups"] for rule in group["rules"]]


def alert_rules() -> list[dict]:
    return [rule for path, _ in RULE_FILES for rule in rules(path) if "alert" in rule]


def dashboard_queries(path=DASHBOARD) -> list[str]:
    dashboard = json.loads(path.read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]


@pytest.mark.parametrize("path, tests", RULE_FILES, ids=lambda path: path.name)
def test_rules_pass_promtool_check_and_their_unit_tests(path, tests):
    checked = promtool("check", "rules", path.name)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(rules(path))} rules found" in checked.stdout
    tested = promtool("test", "rules", tests.name)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_every_recording_rule_of_the_lab_is_tested():
    tested = {
        case["expr"]
        for test in yaml.safe_load(LAB_TESTS.read_text())["tests"]
        for case in test.get("promql_expr_test", [])
    }
    assert {rule["record"] for rule in rules(LAB_RULES) if "record" in rule} <= tested


def test_every_alert_is_shown_firing_and_staying_quiet():
    cases = [
        case
        for _, tests in RULE_FILES
        for test in yaml.safe_load(tests.read_text())["tests"]
        for case in test.get("alert_rule_test", [])
    ]
    for rule in alert_rules():
        mine = [case for case in cases if case["alertname"] == rule["alert"]]
        assert any(case["exp_alerts"] for case in mine), f"{rule['alert']} never fires"
        assert any(not case["exp_alerts"] for case in mine), f"{rule['alert']} never stays quiet"


def test_alerts_cover_each_situation_on_our_series_and_on_dcgm_series():
    expressions = " ".join(rule["expr"] for rule in alert_rules())
    # Idle while memory held, memory above 90 %, above 80 °C, read errors: on both sides.
    for ours, dcgm in [
        ("jupyter_gpu_utilization_ratio", "DCGM_FI_DEV_GPU_UTIL"),
        ("jupyter_gpu_memory_total_bytes", "DCGM_FI_DEV_FB_FREE"),
        ("jupyter_gpu_temperature_celsius", "DCGM_FI_DEV_GPU_TEMP"),
        ("jupyter_gpu_read_errors_total", "DCGM_FI_DEV_XID_ERRORS"),
    ]:
        assert ours in expressions and dcgm in expressions


def test_rules_on_our_series_name_only_series_we_export():
    named = {
        name
        for path, _ in RULE_FILES
        for rule in rules(path)
        for name in SERIES_NAME.findall(rule["expr"])
        if name.startswith("jupyter_")
    }
    assert {
        "jupyter_notebook_gpu_idle_held_seconds_total",
        "jupyter_gpu_memory_used_bytes",
    } <= named
    assert named <= set(SERIES_NAMES), named - set(SERIES_NAMES)


@pytest.mark.parametrize("path", [DASHBOARD, LAB_DASHBOARD], ids=lambda path: path.name)
def test_each_dashboard_is_valid_json_and_queries_only_our_series_in_valid_promql(path, tmp_path):
    dashboard = json.loads(path.read_text())
    panels = dashboard["panels"]
    assert len({panel["id"] for panel in panels}) == len(panels)
    assert all(panel["datasource"]["uid"] == "${datasource}" for panel in panels)
    queries = dashboard_queries(path)
    named = {name for expr in queries for name in SERIES_NAME.findall(expr)}
    assert named <= set(SERIES_NAMES), named - set(SERIES_NAMES)
    assert all(SERIES_NAME.search(expr) for expr in queries)
    # Each query parses as PromQL once Grafana has put in its variables.
    grafana = {
        "$__rate_interval": "1m",
        "$__range": "7d",
        "$instance": ".*",
        "$host": ".*",
        "$user": ".*",
    }
    exprs = []
    for query in queries:
        for variable, value in grafana.items():
            query = query.replace(variable, value)
        exprs.append(query)
    checked = tmp_path / "queries.yml"
    records = [{"record": f"query:{number}", "expr": expr} for number, expr in enumerate(exprs)]
    checked.write_text(json.dumps({"groups": [{"name": path.stem, "rules": records}]}))
    result = promtool("check", "rules", str(checked))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_lab_dashboard_shows_machines_free_gpus_and_hours_per_user():
    named = {
        name for expr in dashboard_queries(LAB_DASHBOARD) for name in SERIES_NAME.findall(expr)
    }
    assert {
        "jupyter_server_info",
        "jupyter_gpu_memory_used_bytes",
        "jupyter_notebook_gpu_idle_held_seconds_total",
        "jupyter_notebook_gpu_busy_seconds_total",
    } <= named


def test_dashboard_shows_gpus_and_the_notebooks_memory():
    dashboard = json.loads(DASHBOARD.read_text())
    queries = dashboard_queries()
    named = {name for expr in queries for name in SERIES_NAME.findall(expr)}
    # Per-GPU utilisation and memory, and per-notebook memory.
    assert {
        "jupyter_gpu_utilization_ratio",
        "jupyter_gpu_memory_used_bytes",
        "jupyter_gpu_kernel_memory_used_bytes",
    } <= named
    (server,) = [item for item in dashboard["templating"]["list"] if item["name"] == "instance"]
    assert set(SERIES_NAME.findall(server["definition"])) <= set(SERIES_NAMES)


def test_admin_guide_maps_every_series_to_its_dcgm_field_or_node_exporters():
    guide = (REPO / "docs" / "admin-guide.md").read_text()
    documented = set(
        re.findall(r"`(jupyter_(?:gpu|machine|kernel|notebook|server)_\w+)[`{]", guide)
    )
    assert documented == set(SERIES_NAMES)
    for reading in GPU_SERIES:
        name = series_name(reading)
        assert f"| `{name}` | `{reading.dcgm[0]}` |" in guide, name
    for name in SERIES_NAMES:
        if name.startswith(("jupyter_machine_", "jupyter_kernel_")):
            row = re.search(rf"^\| `{name}[{{`].*$", guide, re.M)
            assert row is not None and ("node_" in row[0] or "process_" in row[0]), name
