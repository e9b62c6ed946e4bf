"""requirements.txt and pylock.toml (PEP 751) of an environment's Python distributions, from
their dist-info records: what pip and uv need to install the same versions again.

A local version names the PyTorch build it is (``2.13.0+cpu``, ``+cu130``): those wheels are
on PyTorch's own index, one per build, never on PyPI, so each such tag gets the index line that
finds it. A distribution installed from a URL, a VCS checkout or a folder (PEP 610's
``direct_url.json``) is written as that source instead of a pin, which no index could serve.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from .distributions import Distribution
from .records import normalize

PYTORCH_INDEX = "https://download.pytorch.org/whl"
# The local version tags of PyTorch's builds, each the name of its index under PYTORCH_INDEX.
_PYTORCH_BUILD = re.compile(r"cpu|cu\d+|rocm\d+(?:\.\d+)*|xpu")
CREATED_BY = "jupyterlab-gpu-monitor"


def local_tag(version: str) -> str | None:
    """The local version label of a version (``2.13.0+cpu`` -> ``cpu``), lowercased."""
    _, plus, label = version.partition("+")
    return label.lower() if plus else None


def build_index(version: str, index_base: str = PYTORCH_INDEX) -> str | None:
    """The index that serves a PyTorch build's wheels, from its local version tag; None for a
    version without one, or with a tag that names no PyTorch build."""
    label = local_tag(version)
    if label is None or not _PYTORCH_BUILD.fullmatch(label):
        return None
    return f"{index_base.rstrip('/')}/{label}"


def index_lines(found: Iterable[Distribution], index_base: str = PYTORCH_INDEX) -> list[str]:
    """``--extra-index-url`` lines, one per PyTorch build among the distributions that came
    from an index, in order of first mention."""
    indexes = (build_index(d.version, index_base) for d in found if d.direct_url is None)
    return [f"--extra-index-url {index}" for index in dict.fromkeys(i for i in indexes if i)]


def _archive_sha256(direct_url: dict[str, Any]) -> str | None:
    archive = direct_url.get("archive_info")
    if not isinstance(archive, dict):
        return None
    hashes = archive.get("hashes")
    if isinstance(hashes, dict) and isinstance(hashes.get("sha256"), str):
        return hashes["sha256"]
    legacy = archive.get("hash")
    if isinstance(legacy, str) and legacy.startswith("sha256="):
        return legacy[len("sha256=") :]
    return None


def _fragment(direct_url: dict[str, Any], sha256: str | None = None) -> str:
    parts = [f"sha256={sha256}"] if sha256 else []
    if isinstance(direct_url.get("subdirectory"), str):
        parts.append(f"subdirectory={direct_url['subdirectory']}")
    return f"#{'&'.join(parts)}" if parts else ""


def requirement_line(distribution: Distribution) -> str:
    """One line of requirements.txt, as ``pip freeze`` writes it: ``name==version``, or the
    source ``direct_url.json`` names: ``name @ git+URL@commit``, ``name @ URL#sha256=...``,
    ``-e file:///folder`` for an editable install."""
    direct_url = distribution.direct_url
    if direct_url is None:
        return f"{distribution.name}=={distribution.version}"
    url = direct_url["url"]
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        revision = vcs.get("commit_id") or vcs.get("requested_revision")
        at = f"@{revision}" if isinstance(revision, str) else ""
        return f"{distribution.name} @ {vcs['vcs']}+{url}{at}{_fragment(direct_url)}"
    folder = direct_url.get("dir_info")
    if isinstance(folder, dict) and folder.get("editable"):
        return f"-e {url}{_fragment(direct_url)}"
    return f"{distribution.name} @ {url}{_fragment(direct_url, _archive_sha256(direct_url))}"


def pip_requirements(found: Sequence[Distribution], index_base: str = PYTORCH_INDEX) -> list[str]:
    """The index lines, then one requirement per distribution: the lines of requirements.txt,
    and of the ``pip:`` section of an environment.yml."""
    return [*index_lines(found, index_base), *(requirement_line(d) for d in found)]


def requirements_text(
    found: Sequence[Distribution], notes: Sequence[str] = (), index_base: str = PYTORCH_INDEX
) -> str:
    """requirements.txt: ``notes`` as comments, the index lines, one line per distribution."""
    lines = [f"# {note}" for note in notes] + pip_requirements(found, index_base)
    return "".join(f"{line}\n" for line in lines)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        items = ", ".join(f"{key} = {_toml_value(item)}" for key, item in value.items())
        return f"{{ {items} }}"
    # A JSON string is a TOML basic string: the same quotes and escapes.
    return json.dumps(str(value), ensure_ascii=False)


def _local_path(url: str) -> str:
    address = urlsplit(url)
    return url2pathname(address.path) if address.scheme == "file" else url


def lock_package(distribution: Distribution, index_base: str = PYTORCH_INDEX) -> dict[str, Any]:
    """One ``[[packages]]`` entry of pylock.toml: name, version, and the source the records
    know: ``vcs``, ``directory`` or ``archive`` from ``direct_url.json``, else the index of a
    PyTorch build. An archive's hashes only where ``direct_url.json`` has them: RECORD hashes
    the installed files, not the wheel they came from."""
    entry: dict[str, Any] = {"name": normalize(distribution.name), "version": distribution.version}
    if distribution.requires_python:
        entry["requires-python"] = distribution.requires_python
    direct_url = distribution.direct_url
    if direct_url is None:
        index = build_index(distribution.version, index_base)
        if index:
            entry["index"] = index
        return entry
    source: dict[str, Any]
    vcs = direct_url.get("vcs_info")
    folder = direct_url.get("dir_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        source = {"type": vcs["vcs"], "url": direct_url["url"]}
        if isinstance(vcs.get("requested_revision"), str):
            source["requested-revision"] = vcs["requested_revision"]
        if isinstance(vcs.get("commit_id"), str):
            source["commit-id"] = vcs["commit_id"]
        kind = "vcs"
    elif isinstance(folder, dict):
        source = {"path": _local_path(direct_url["url"])}
        if folder.get("editable"):
            source["editable"] = True
        kind = "directory"
    else:
        source = {"url": direct_url["url"]}
        sha256 = _archive_sha256(direct_url)
        if sha256:
            source["hashes"] = {"sha256": sha256}
        kind = "archive"
    if isinstance(direct_url.get("subdirectory"), str):
        source["subdirectory"] = direct_url["subdirectory"]
    entry[kind] = source
    return entry


def pylock_text(
    found: Sequence[Distribution],
    python_version: str | None,
    notes: Sequence[str] = (),
    index_base: str = PYTORCH_INDEX,
) -> str:
    """pylock.toml (lock-version 1.0): ``notes`` as comments, ``requires-python`` from the
    environment's Python (``==3.11.*``) where known, one ``[[packages]]`` per distribution."""
    lines = [f"# {note}" for note in notes]
    lines += ['lock-version = "1.0"']
    if python_version:
        major_minor = ".".join(python_version.split(".")[:2])
        lines.append(f"requires-python = {_toml_value(f'=={major_minor}.*')}")
    lines.append(f"created-by = {_toml_value(CREATED_BY)}")
    for distribution in found:
        lines += ["", "[[packages]]"]
        entry = lock_package(distribution, index_base)
        lines += [f"{key} = {_toml_value(value)}" for key, value in entry.items()]
    return "".join(f"{line}\n" for line in lines)
