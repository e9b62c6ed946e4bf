"""Reading single nvidia-smi values: numbers with or without units, and the words for "none"."""

from __future__ import annotations

import re
from typing import Union

_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")
# nvidia-smi's ways of saying a value does not exist, bracketed in CSV, bare in XML.
_MISSING = {
    "",
    "n/a",
    "not supported",
    "unknown error",
    "insufficient permissions",
    "requested functionality has been deprecated",
    "gpu is lost",
}

Number = Union[int, float]


def text_value(raw: str | None) -> str | None:
    """A string field, or None when nvidia-smi says it has none ('[N/A]', 'N/A', '')."""
    if raw is None:
        return None
    value = raw.strip()
    if value.lower().strip("[]") in _MISSING:
        return None
    return value


def number_value(raw: str | None) -> Number | None:
    """The number at the start of a field ('45.30 W' -> 45.3, '8192' -> 8192), else None."""
    if raw is None:
        return None
    match = _NUMBER.match(raw)
    if match is None:
        return None
    digits = match.group(1)
    return float(digits) if "." in digits else int(digits)


def says_gpu_lost(raw: str | None) -> bool:
    """Whether a field carries nvidia-smi's marker for a GPU that fell off the bus."""
    return raw is not None and "gpu is lost" in raw.lower()


def mig_mode_value(raw: str | None) -> str | None:
    """'Enabled'/'Disabled' as 'enabled'/'disabled'; None where MIG does not exist."""
    value = text_value(raw)
    if value is None:
        return None
    lowered = value.lower()
    return lowered if lowered in ("enabled", "disabled") else None
