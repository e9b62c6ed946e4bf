"""The REST contract: every payload of the API, declared once as JSON Schema in
``api_schema/<group>.json`` (``$defs``, one per payload, named as the TypeScript types that
``jlpm build:schemas`` generates from them into ``src/restapi/``).

Handlers check request bodies against it (bodies.py); the tests check every answer against it
(tests/contract_check.py).
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

# The files of api_schema/, one per group of endpoints.
GROUPS = ("gpus", "kernels", "inspector", "envs", "errors", "rules")


@functools.cache
def document(group: str) -> dict[str, Any]:
    """The JSON Schema document of one group."""
    text = resources.files(__package__).joinpath("api_schema", f"{group}.json").read_text()
    return json.loads(text)


@functools.cache
def _group_of() -> dict[str, str]:
    return {name: group for group in GROUPS for name in document(group)["$defs"]}


def constant(name: str) -> Any:
    """The ``const`` of a shared rule of ``rules.json``, e.g. ``"HeldMemoryMib"``."""
    return document("rules")["$defs"][name]["const"]


@functools.cache
def validator(name: str):
    """A validator of one payload, its references resolved within its group's document."""
    # Imported on first use: jsonschema costs tens of ms to import where nothing has yet.
    from jsonschema import Draft202012Validator

    definitions = document(_group_of()[name])["$defs"]
    return Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": definitions})


def is_text(value: str) -> bool:
    """Whether a string can be part of an answer: UTF-8 holds it. A name that is not UTF-8 on
    disk reaches Python with surrogates (surrogateescape), and JSON can escape half of a UTF-16
    pair ("\\ud800"): neither is text an answer, a URL or a command can carry."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
