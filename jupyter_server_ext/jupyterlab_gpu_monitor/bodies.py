"""Request bodies: their size first, then strict JSON, then the payload's JSON Schema (see
contract.py), so that a handler only ever sees a body of the declared shape.

Parsing and validating run on the REQUESTS threads (see blocking.py): a megabyte of JSON, or
two thousand spans through the schema, costs tens of milliseconds that no other request should
wait for, and a burst of such bodies waits in its own queue, not in the GPU reads'.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from . import blocking
from .contract import is_text, validator

# A diagnose body is a few kB, 2000 spans about 100 kB: more is no client of ours.
MAX_BODY_BYTES = 1024 * 1024
# No field of ours holds a number this long; Python < 3.11 converts longer ones in quadratic
# time.
_MAX_NUMBER_DIGITS = 32
_SHOWN_CHARACTERS = 40


class BadBody(Exception):
    """A body the endpoint does not take: the status to answer with, and why."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


async def read_body(raw: bytes, payload: str) -> Any:
    """The body as JSON of the shape the contract declares for ``payload`` (e.g.
    ``"SpansRequest"``). Raises BadBody: 413 for a body over ``MAX_BODY_BYTES``, 400 naming the
    field otherwise; blocking.TimedOut when the server is too busy with others to read it."""
    if len(raw) > MAX_BODY_BYTES:
        raise BadBody(413, f"the body is {len(raw)} bytes; at most {MAX_BODY_BYTES} are taken")
    return await blocking.run(
        blocking.REQUESTS,
        _parse_and_check,
        raw,
        payload,
        timeout_seconds=blocking.REQUEST_WORK_SECONDS,
    )


def _parse_and_check(raw: bytes, payload: str) -> Any:
    body = parse_json(raw)
    error = _first_error(validator(payload).iter_errors(body))
    if error is not None:
        raise BadBody(400, error)
    not_text = _first_lone_surrogate(body)
    if not_text is not None:
        # JSON may escape half of a UTF-16 pair ("\ud800"); no UTF-8 answer, path or command
        # can hold it, and a handler that echoes it would fail as it writes.
        raise BadBody(400, f"{_field(not_text)} holds a lone surrogate, which is not text")
    return body


def _first_lone_surrogate(value: Any) -> list | None:
    """The path of the first key or string of ``value`` that UTF-8 cannot encode; None when
    every one can. (The nesting is bounded by the parser.)"""
    pending: list[tuple[list, Any]] = [([], value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, str) and not is_text(item):
            return path
        if isinstance(item, dict):
            for key, child in item.items():
                if not is_text(key):
                    return [*path, key.encode("utf-8", "replace").decode()]
                pending.append(([*path, key], child))
        elif isinstance(item, list):
            pending.extend(([*path, index], child) for index, child in enumerate(item))
    return None


def parse_json(raw: bytes) -> Any:
    """Strict JSON: UTF-8, finite numbers of a sane length, bounded nesting. Raises BadBody."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadBody(400, "the body is not UTF-8 text") from None
    if not text.strip():
        raise BadBody(400, "the body is empty; a JSON object is expected")
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_float, parse_int=_int)
    except RecursionError:
        raise BadBody(400, "the body nests too deeply to be one of ours") from None
    except ValueError as error:  # json.JSONDecodeError, and the refusals below
        raise BadBody(400, f"the body is not valid JSON: {error}") from None


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON has")


def _float(text: str) -> float:
    value = float(_short(text))
    if not math.isfinite(value):
        raise ValueError(f"{_shown(text)} is out of range")
    return value


def _int(text: str) -> int:
    return int(_short(text))


def _short(number: str) -> str:
    if len(number) > _MAX_NUMBER_DIGITS:
        raise ValueError(f"a number of {len(number)} digits is longer than any field takes")
    return number


def _first_error(errors: Iterable) -> str | None:
    # The first error found, not the best of all: a body of 100,000 wrong entries would make
    # as many errors. The schemas have no anyOf/oneOf, so the first one names its field.
    error = next(iter(errors), None)
    return None if error is None else describe(error)


def describe(error) -> str:
    """A validation error as a person reads it: the field, and what it must be (never the
    whole value, which can be megabytes)."""
    field = _field(error.absolute_path)
    schema = error.schema
    kind = error.validator
    if kind == "type":
        expected = " or ".join(_TYPE_NAMES[name] for name in _listed(error.validator_value))
        return f"{field} must be {expected}, not {_json_type(error.instance)}"
    if kind == "anyOf":  # a nullable object: say what is wrong inside it, else its types
        deeper = [e for e in error.context if len(e.absolute_path) > len(error.absolute_path)]
        if deeper:
            return describe(deeper[0])
        types = [
            name
            for e in error.context
            if e.validator == "type"
            for name in _listed(e.validator_value)
        ]
        expected = " or ".join(dict.fromkeys(_TYPE_NAMES[name] for name in types))
        return f"{field} must be {expected or 'something else'}, not {_json_type(error.instance)}"
    if kind == "required":
        missing = next((name for name in error.validator_value if name not in error.instance), "")
        return f"{_field([*error.absolute_path, missing])} is required"
    if kind == "additionalProperties":
        extra = sorted(set(error.instance) - set(schema.get("properties", {})))
        return f"{_field([*error.absolute_path, extra[0]])} is not a field of this request"
    if kind in _BOUNDS:
        return f"{field} {_BOUNDS[kind].format(error.validator_value)}"
    if kind == "pattern":
        return f"{field} must match {error.validator_value}, not {_shown(repr(error.instance))}"
    return f"{field}: {error.message[:200]}"


# What a bound of the schemas says of its field, with the schema's number.
_BOUNDS = {
    "maxLength": "must be at most {} characters",
    "maxItems": "may hold at most {} items",
    "maxProperties": "may hold at most {} entries",
    "minimum": "must be at least {}",
    "maximum": "must be at most {}",
}


def _field(path: Iterable) -> str:
    name = "the body"
    for part in path:
        if isinstance(part, int):
            name += f"[{part}]"
        else:
            part = _shown(str(part))
            name = part if name == "the body" else f"{name}.{part}"
    return name


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARACTERS else f"{text[:_SHOWN_CHARACTERS]}…"


_TYPE_NAMES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true or false",
    "null": "null",
}


def _listed(types: str | list[str]) -> list[str]:
    return types if isinstance(types, list) else [types]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
