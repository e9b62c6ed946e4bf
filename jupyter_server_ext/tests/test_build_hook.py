"""The build hook (hatch_build.py) a ``pip install .`` from a checkout runs: it refuses a
Node.js too old to build the frontend before minutes of ``jlpm install``, and it decides that the
frontend must be built again from what changed in its sources. The whole second-install path,
with pip and a real build, is ``scripts/check_reinstall.py`` (``make check-install``)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from .replay import REPO


def build_hook():
    spec = importlib.util.spec_from_file_location("hatch_build", REPO / "hatch_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def node_printing(folder: Path, version: str) -> str:
    """An executable that answers ``--version`` as a Node.js of that version does."""
    node = folder / "node"
    node.write_text(f"#!/bin/sh\necho {version}\n")
    node.chmod(0o755)
    return str(node)


def test_node_18_as_debian_12_ships_it_is_refused_with_what_to_install(tmp_path):
    problem = build_hook().node_problem(node_printing(tmp_path, "v18.19.0"))
    assert "Node.js 20 or newer" in problem
    assert "v18.19.0" in problem
    assert "pip install jupyterlab-gpu-monitor" in problem  # the wheel needs no Node.js


def test_node_missing_from_path_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "none is on PATH" in build_hook().node_problem()


def test_node_of_this_machine_builds():
    node = shutil.which("node")
    if node is None:
        pytest.fail("the frontend's tests need Node.js on PATH")
    assert build_hook().node_problem(node) is None


@pytest.fixture
def frontend_checkout(tmp_path):
    """The files the frontend's build reads, and one it does not, copied from this checkout."""
    for name in ("package.json", "yarn.lock", "tsconfig.json", "README.md"):
        shutil.copy2(REPO / name, tmp_path / name)
    for folder in ("src", "style", "schema"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    return tmp_path


def test_a_change_in_the_typescript_changes_the_sources_hash(frontend_checkout):
    hook = build_hook()
    before = hook.frontend_sources_hash(frontend_checkout)
    index = frontend_checkout / "src" / "index.ts"
    index.write_text(index.read_text() + "\n// changed\n")
    assert hook.frontend_sources_hash(frontend_checkout) != before


def test_a_new_style_file_changes_the_sources_hash(frontend_checkout):
    hook = build_hook()
    before = hook.frontend_sources_hash(frontend_checkout)
    (frontend_checkout / "style" / "extra.css").write_text("a { color: red; }\n")
    assert hook.frontend_sources_hash(frontend_checkout) != before


def test_a_file_the_build_does_not_read_leaves_the_hash_alone(frontend_checkout):
    hook = build_hook()
    before = hook.frontend_sources_hash(frontend_checkout)
    (frontend_checkout / "README.md").write_text("changed\n")
    assert hook.frontend_sources_hash(frontend_checkout) == before
