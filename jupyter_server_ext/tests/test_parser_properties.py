"""Mutated real captures: every parser returns a snapshot or a typed error, never anything else."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jupyterlab_gpu_monitor.gpu.errors import ERROR_KINDS, GpuReadError
from jupyterlab_gpu_monitor.gpu.nvidia_smi import parse_saved_output
from jupyterlab_gpu_monitor.gpu.smi_csv import parse_compute_apps, parse_query_gpu
from jupyterlab_gpu_monitor.gpu.smi_list import parse_list
from jupyterlab_gpu_monitor.gpu.smi_xml import parse_xml

from .replay import captures

ALL_CAPTURES = [path for kind in ("xml", "csv", "errors") for path in captures(kind)]
PARSERS = (
    parse_saved_output,
    lambda text: parse_xml(text, 0.0),
    parse_query_gpu,
    parse_compute_apps,
    parse_list,
)
NASTY = st.sampled_from(
    [
        "",
        "[N/A]",
        "N/A",
        "[Not Supported]",
        "[Unknown Error]",
        "[GPU is lost]",
        ",",
        ", ,",
        "\n",
        "<",
        ">",
        "</gpu>",
        '<gpu id="x">',
        "&amp;",
        "&bogus;",
        "-1",
        "1e309",
        "99999999999999999999",
        "\x00",
        "\ufffd",
        "MiB",
        " %",
        '"',
        "No devices were found",
    ]
)
# A list of edits: (where, how much to cut, what to put there).
EDITS = st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 120), st.one_of(NASTY, st.text(max_size=16))),
    min_size=1,
    max_size=4,
)


def apply(text: str, edits) -> str:
    for where, cut, insert in edits:
        start = int(where * len(text))
        text = text[:start] + insert + text[start + cut :]
    return text


def parses_or_fails_typed(text: str) -> None:
    for parse in PARSERS:
        try:
            parse(text)
        except GpuReadError as error:
            assert error.kind in ERROR_KINDS
            assert error.message


@pytest.mark.parametrize("capture", ALL_CAPTURES, ids=lambda p: p.name)
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=EDITS)
def test_mutated_capture_parses_or_fails_with_a_typed_error(capture: Path, edits):
    parses_or_fails_typed(apply(capture.read_text(), edits))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600))
def test_random_bytes_parse_or_fail_with_a_typed_error(raw: bytes):
    parses_or_fails_typed(raw.decode("utf-8", errors="replace"))
