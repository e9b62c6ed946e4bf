"""Sphinx configuration of the documentation site (https://jupyterlab-gpu-monitor.readthedocs.io).

The pages are Markdown (MyST) that read as well on the forge as on the site: links between them
are relative `page.md` links, images come from `screenshots/`. `make docs` builds the site with
warnings as errors and nitpicky references; the build reads nothing from the network.
"""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = json.loads((REPO / "package.json").read_text(encoding="utf-8"))

project = "jupyterlab-gpu-monitor"
author = PACKAGE["author"]["name"]
copyright = f"2026, {author}"  # noqa: A001 (Sphinx's name)
release = PACKAGE["version"]  # package.json is the one place the version lives
version = ".".join(release.split(".")[:2])

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
nitpicky = True

# Anchors on headings down to ####, written as GitHub writes them, so that `page.md#heading`
# links work in both places.
myst_heading_anchors = 4

html_theme = "pydata_sphinx_theme"
html_title = "jupyterlab-gpu-monitor"
html_theme_options = {
    "github_url": "https://github.com/jupyterlab-gpu-monitor/jupyterlab-gpu-monitor",
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
# No "Show source" link: every page reads as well on GitHub, where its source is.
html_show_sourcelink = False
html_context = {"default_mode": "auto"}
# The pages are one flat list, which the top bar shows: no left sidebar of sections.
html_sidebars = {"**": []}
html_static_path = ["_static"]
html_css_files = ["custom.css"]
