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
    """A validator of one payload, its references to its group's definitions put in place
    once, here: jsonschema resolves a ``$ref`` at every value it checks, and each of the 2000
    spans of a request went through one (a third of the body's check)."""
    # Imported on first use: jsonschema costs tens of ms to import where nothing has yet.
    from jsonschema import Draft202012Validator

    definitions = document(_group_of()[name])["$defs"]
    schema = _in_place(definitions[name], definitions, (name,))
    return Draft202012Validator({**schema, "$defs": definitions})


def _in_place(schema: Any, definitions: dict[str, Any], within: tuple[str, ...]) -> Any:
    """``schema`` with each ``#/$defs/<name>`` reference replaced by the definition, but for
    one back to a definition it is inside (a recursive shape keeps its reference)."""
    if isinstance(schema, list):
        return [_in_place(item, definitions, within) for item in schema]
    if not isinstance(schema, dict):
        return schema
    reference = schema.get("$ref", "")
    name = reference.removeprefix("#/$defs/")
    if name == reference or name in within:
        return {key: _in_place(value, definitions, within) for key, value in schema.items()}
    target = _in_place(definitions[name], definitions, (*within, name))
    beside = _in_place(
        {key: value for key, value in schema.items() if key != "$ref"}, definitions, within
    )
    if not beside:
        return target
    # What stands beside a reference applies too (in the schemas, a description).
    return {**beside, "allOf": [*beside.get("allOf", []), target]}


def is_text(value: str) -> bool:
    """Whether a string can be part of an answer: UTF-8 holds it. A name that is not UTF-8 on
    disk reaches Python with surrogates (surrogateescape), and JSON can escape half of a UTF-16
    pair ("\\ud800"): neither is text an answer, a URL or a command can carry."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
