"""Hatch build hook: compile the translation catalogues when the wheel (or an editable install)
is built.

Each ``locale/<lang>/LC_MESSAGES/jupyterlab_gpu_monitor.po`` of the package is compiled, next
to itself, into the ``.mo`` the server's gettext reads and the ``.json`` JupyterLab's frontend
loads, by jupyterlab-translate (the tool JupyterLab's language packs are built with; its own
hatch hook expects a language pack's layout). The compiled files are not in git: the wheel
takes them as artifacts, and an editable install reads them where they are written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

LOCALE_DIR = Path("jupyter_server_ext", "jupyterlab_gpu_monitor", "locale")


class TranslationsBuildHook(BuildHookInterface):
    """Compiles the catalogues before a wheel is built; the sdist ships their sources."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Write the .mo and .json of every .po, for a wheel or an editable install."""
        if self.target_name != "wheel":
            return
        from jupyterlab_translate.api import compile_po_file

        for catalogue in sorted((Path(self.root) / LOCALE_DIR).glob("*/LC_MESSAGES/*.po")):
            compile_po_file(catalogue)
            self.app.display_info(f"compiled {catalogue.relative_to(self.root)}")
