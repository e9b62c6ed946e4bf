"""``conda-meta/history``: the revisions of an environment and the specs its user asked for.

Every format conda (and mamba, micromamba) has written is read: bare dist names and ``+``/``-``
diff lines (conda 3), ``# install specs: [...]`` and ``# update specs: [...]`` as Python list
literals, specs separated by commas with no brackets (conda < 4.5), and the ``channel/subdir::``
dist names of conda >= 4.4. The specs come back the way ``conda env export --from-history``
writes them, which is conda's MatchSpec string form.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Collection
from dataclasses import dataclass, field

_HEADER = re.compile(r"==>\s*(.+?)\s*<==")
_COMMAND = re.compile(r"#\s*cmd:\s*(.+)")
_SPECS = re.compile(r"#\s*(\w+)\s*specs:\s*(.+)?")
# A piece of an old comma-separated specs string that continues the previous spec:
# "numpy >=1.5,<2.0" is one spec (conda.models.version.version_relation_re).
_VERSION_RELATION = re.compile(r"^(=|==|!=|<=|>=|<|>)(?![=<>!])(\S+)$")
_NAME = re.compile(r"([^ =<>!~]+)?([><!=~ ].+)?")
_VERSION_PLUS_BUILD = re.compile(r"((?:.+?)[^><!,|]?)(?:(?<![=!|,<>~])(?:[ =])([^-=,|<>~]+?))?$")


@dataclass
class Revision:
    """One ``==> date <==`` block: the command that made it and the specs it was asked for."""

    date: str
    command: list[str] | None = None
    update_specs: list[str] = field(default_factory=list)
    remove_specs: list[str] = field(default_factory=list)
    neutered_specs: list[str] = field(default_factory=list)


def _split_old_format(specs: str) -> list[str]:
    """``python>=3.5.1,jupyter >=1.0.0,<2.0`` -> ``["python>=3.5.1", "jupyter >=1.0.0,<2.0"]``,
    commas inside ``[...]`` kept."""
    pieces, depth, current = [], 0, ""
    for char in specs:
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            pieces.append(current)
            current = ""
        else:
            current += char
    pieces.append(current)
    joined: list[str] = []
    for piece in pieces:
        if joined and _VERSION_RELATION.match(piece):
            joined[-1] = f"{joined[-1]},{piece}"
        else:
            joined.append(piece)
    return joined


def _specs(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("["):
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return []
        if not isinstance(parsed, list):
            return []
        specs = [spec for spec in parsed if isinstance(spec, str)]
    else:
        specs = _split_old_format(text)
    # conda drops the "name@" specs of features.
    return [spec.strip() for spec in specs if spec.strip() and not spec.strip().endswith("@")]


def parse_history(text: str) -> list[Revision]:
    """The revisions of a history file, oldest first; lines before the first header are
    ignored, as conda ignores them."""
    revisions: list[Revision] = []
    for raw in text.splitlines():
        line = raw.strip()
        header = _HEADER.match(line)
        if header:
            revisions.append(Revision(header.group(1)))
            continue
        if not revisions or not line.startswith("#"):
            continue
        revision = revisions[-1]
        command = _COMMAND.match(line)
        if command:
            revision.command = command.group(1).split()
        specs = _SPECS.match(line)
        if specs:
            action, listed = specs.group(1), _specs(specs.group(2) or "")
            if action in ("update", "install", "create"):
                revision.update_specs = listed
            elif action in ("remove", "uninstall"):
                revision.remove_specs = listed
            elif action == "neutered":
                revision.neutered_specs = listed
    return revisions


def creator(revisions: list[Revision]) -> str | None:
    """The program of the first recorded command (``conda``, ``mamba``, ``micromamba``,
    ``constructor``...), or None when the history records none."""
    for revision in revisions:
        if revision.command:
            program = os.path.basename(revision.command[0].replace("\\", "/")).lower()
            return re.sub(r"(-script\.py|\.exe|\.bat)$", "", program)
    return None


def _brackets(text: str) -> dict[str, str]:
    """``build=*_cp313t,version='>=1,<2'`` -> ``{"build": "*_cp313t", "version": ">=1,<2"}``."""
    fields = {}
    for match in re.finditer(r"(\w+)\s*=\s*('[^']*'|\"[^\"]*\"|[^,]*)", text):
        fields[match.group(1)] = match.group(2).strip().strip("'\"")
    return fields


def format_spec(spec: str) -> tuple[str, str]:
    """A spec's package name and its canonical form, as conda's ``str(MatchSpec(spec))``:
    ``python 2.7*`` -> ``python=2.7``, ``numpy 1.7`` -> ``numpy==1.7``, ``numpy>=1.20`` ->
    ``numpy[version='>=1.20']``, ``conda-forge::numpy=1.2=py36_0`` ->
    ``conda-forge::numpy==1.2=py36_0``."""
    text = spec.strip()
    channel = None
    if "::" in text:
        channel, text = text.rsplit("::", 1)
    fields: dict[str, str] = {}
    bracketed = re.match(r"^(.*?)\[(.*)\]$", text)
    if bracketed:
        text, fields = bracketed.group(1), _brackets(bracketed.group(2))
    named = _NAME.match(text)
    name = (named.group(1) if named else None) or "*"
    rest = ((named.group(2) if named else None) or "").strip()
    version = build = None
    if rest:
        parts = _VERSION_PLUS_BUILD.search(rest)
        version, build = parts.groups() if parts else (rest, None)
        version = version.replace(" ", "") if version else version
        build = build.strip() if build else build
        if version and version[0] == "=":
            bare = version[1:]
            if version[:2] == "==" and build is None:
                version = version[2:]
            elif not any(c in bare for c in "=,|"):
                version = bare + "*" if build is None and not bare.endswith("*") else bare
    version = version or fields.pop("version", None)
    build = build or fields.pop("build", None)
    fields.pop("version", None)
    fields.pop("build", None)
    return name, _spec_string(channel, name, version, build, fields)


def _spec_string(
    channel: str | None, name: str, version: str | None, build: str | None, fields: dict
) -> str:
    """conda's ``MatchSpec.__str__`` for these components."""
    builder = [f"{channel}::{name}" if channel else name]
    brackets = []
    exact = False
    if version:
        if any(c in version for c in "><$^|,"):
            brackets.append(f"version='{version}'")
        elif version[:2] in ("!=", "~="):
            if build:
                brackets.append(f"version='{version}'")
            else:
                builder.append(version)
        elif version.endswith(".*"):
            builder.append("=" + version[:-2])
        elif version == "*":
            pass
        elif version.endswith("*"):
            builder.append("=" + version[:-1])
        elif version.startswith("=="):
            builder.append(version)
            exact = True
        else:
            builder.append("==" + version)
            exact = True
    if build:
        if any(c in build for c in "><$^|,"):
            brackets.append(f"build='{build}'")
        elif "*" in build or not exact:
            brackets.append(f"build={build}")
        else:
            builder.append("=" + build)
    for key, value in fields.items():
        brackets.append(f"{key}='{value}'" if any(c in value for c in ", =") else f"{key}={value}")
    if brackets:
        builder.append(f"[{','.join(brackets)}]")
    return "".join(builder)


def requested_specs(revisions: list[Revision], installed: Collection[str]) -> list[str]:
    """The specs the user asked for, as ``conda env export --from-history`` lists them: each
    request's removals, then updates, then neutered specs applied in order (the latest spec
    for a name wins, in the place the name first took), keeping only the names still
    installed, since conda has not always recorded removals."""
    by_name: dict[str, str] = {}
    for revision in revisions:
        if revision.command is None:
            continue
        for spec in revision.remove_specs:
            by_name.pop(format_spec(spec)[0], None)
        for spec in (*revision.update_specs, *revision.neutered_specs):
            name, text = format_spec(spec)
            by_name[name] = text
    return [text for name, text in by_name.items() if name in installed]
