"""The Python distributions a PyPI installer (pip, uv) put into an environment, as their
``*.dist-info`` records say: name and version, where each came from (PEP 610's
``direct_url.json``) and the Python it asks for, for requirements.txt and pylock.toml."""

from __future__ import annotations

import email.parser
import json
import logging
import os
from dataclasses import dataclass
from typing import Any

from .prefix import site_packages
from .records import normalize, packages

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Distribution:
    """One installed distribution. ``name`` as its METADATA spells it; ``direct_url`` the
    content of ``direct_url.json`` (a URL, a VCS checkout, a folder, editable or not), None for
    one that came from an index; ``requires_python`` its ``Requires-Python``."""

    name: str
    version: str
    direct_url: dict[str, Any] | None = None
    requires_python: str | None = None


def _metadata_headers(dist_info: str) -> dict[str, str]:
    try:
        with open(os.path.join(dist_info, "METADATA"), encoding="utf-8") as handle:
            headers = email.parser.Parser().parse(handle, headersonly=True)
    except (OSError, UnicodeDecodeError):
        return {}
    keys = ("Name", "Version", "Requires-Python")
    return {key: str(headers[key]).strip() for key in keys if headers.get(key)}


def _direct_url(dist_info: str) -> dict[str, Any] | None:
    path = os.path.join(dist_info, "direct_url.json")
    try:
        with open(path, encoding="utf-8") as handle:
            content = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        log.warning("ignored %s: %s", path, error)
        return None
    if not isinstance(content, dict) or not isinstance(content.get("url"), str):
        log.warning("ignored %s: no url", path)
        return None
    return content


def python_distributions(prefix: str) -> list[Distribution]:
    """The distributions of a prefix that conda did not install (those ``packages`` calls
    pip packages), sorted by name, each with what its dist-info records say."""
    wanted = {(p.name, p.version) for p in packages(prefix) if p.installer == "pip"}
    found: dict[tuple[str, str], Distribution] = {}
    for folder in site_packages(prefix):
        try:
            entries = sorted(entry for entry in os.listdir(folder) if entry.endswith(".dist-info"))
        except OSError:
            continue
        for entry in entries:
            distribution, _, version = entry[: -len(".dist-info")].partition("-")
            key = (normalize(distribution), version)
            if key not in wanted or key in found:
                continue
            dist_info = os.path.join(folder, entry)
            headers = _metadata_headers(dist_info)
            found[key] = Distribution(
                name=headers.get("Name", distribution),
                version=headers.get("Version", version),
                direct_url=_direct_url(dist_info),
                requires_python=headers.get("Requires-Python"),
            )
    return sorted(found.values(), key=lambda d: normalize(d.name))
