"""The CI check of the catalogues (`scripts/translations.py check`, run by `make lint`): a string
added to the code without its translation fails it, by name, whichever side of the project the
string is on; the project as committed passes it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = Path("jupyter_server_ext/jupyterlab_gpu_monitor/locale/zh_CN/LC_MESSAGES")
CATALOGUE_PO = CATALOGUE / "jupyterlab_gpu_monitor.po"


@pytest.fixture(scope="module")
def committed(tmp_path_factory) -> Path:
    """What the check reads, copied: the TypeScript, the schemas, the package, the script."""
    tree = tmp_path_factory.mktemp("project")
    for folder in ("scripts", "src", "schema"):
        shutil.copytree(ROOT / folder, tree / folder)
    shutil.copytree(
        ROOT / "jupyter_server_ext" / "jupyterlab_gpu_monitor",
        tree / "jupyter_server_ext" / "jupyterlab_gpu_monitor",
        ignore=shutil.ignore_patterns("labextension", "__pycache__", "*.mo", "*.json"),
    )
    shutil.copy(ROOT / "package.json", tree)
    return tree


@pytest.fixture
def project(committed, tmp_path) -> Path:
    """A copy of the project that a test may change."""
    tree = tmp_path / "project"
    shutil.copytree(committed, tree)
    return tree


def check(project: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "scripts/translations.py", "check"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def test_the_committed_catalogue_passes(project):
    result = check(project)
    assert result.returncode == 0, result.stderr
    assert "every one translated in 1 locale(s)" in result.stdout


NEW_STRINGS = {
    "panel": (
        "src/format/units.ts",
        "\nexport function hint(trans: TranslationBundle): string {\n"
        "  return trans.__('Lower the batch size');\n}\n",
    ),
    "server message": (
        "jupyter_server_ext/jupyterlab_gpu_monitor/diagnose.py",
        '\n\ndef hint() -> str:\n    return gettext("Lower the batch size")\n',
    ),
}


@pytest.mark.parametrize("side", NEW_STRINGS)
def test_a_new_string_without_translation_fails(project, side):
    path, code = NEW_STRINGS[side]
    append(project / path, code)
    result = check(project)
    assert result.returncode == 1
    assert "missing 'Lower the batch size'" in result.stderr
    assert "jupyterlab_gpu_monitor.pot is out of date" in result.stderr


def test_a_new_setting_without_translation_fails(project):
    schema = project / "schema/panel.json"
    schema.write_text(schema.read_text().replace('"History window"', '"Time window"'))
    result = check(project)
    assert result.returncode == 1
    assert "missing 'Time window'" in result.stderr
    assert "stale 'History window'" in result.stderr


def test_a_string_the_extractor_cannot_see_fails(project):
    append(
        project / "src/format/units.ts",
        "\nexport function hint(t: TranslationBundle, name: string): string {\n"
        "  return t.__('Lower the batch size') + trans.__(name);\n}\n",
    )
    result = check(project)
    assert result.returncode == 1
    assert "src/format/units.ts" in result.stderr
    assert "t.__() is not extracted" in result.stderr
    assert "trans.__() takes a string literal" in result.stderr


def test_an_emptied_or_broken_translation_fails(project):
    po = project / CATALOGUE_PO
    text = po.read_text()
    # Both strings are in the catalogue as committed: what follows changes them.
    assert 'msgid "Pause"\nmsgstr "暂停"' in text
    assert 'msgid "GPU %1 has only %2 free."\nmsgstr "GPU %1 只剩 %2 可用。"' in text
    text = text.replace('msgid "Pause"\nmsgstr "暂停"', 'msgid "Pause"\nmsgstr ""')
    text = text.replace(
        'msgid "GPU %1 has only %2 free."\nmsgstr "GPU %1 只剩 %2 可用。"',
        'msgid "GPU %1 has only %2 free."\nmsgstr "GPU %1 只剩可用。"',
    )
    po.write_text(text)
    result = check(project)
    assert result.returncode == 1
    assert "untranslated 'Pause'" in result.stderr
    assert "placeholders differ in 'GPU %1 只剩可用。'" in result.stderr
