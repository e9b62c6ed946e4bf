"""The REST contract (api_schema/) against what the server says in every state the real
captures put it in, against the Python tables that must agree with it, and against the examples
of the REST reference (docs/rest-api.md). (Every answer the other tests get is checked too: see
contract_check.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from jupyterlab_gpu_monitor.conda.errors import HINTS as CONDA_HINTS
from jupyterlab_gpu_monitor.contract import _in_place, document
from jupyterlab_gpu_monitor.gpu.clock_events import CLOCK_EVENT_BITS
from jupyterlab_gpu_monitor.gpu.errors import ERROR_KINDS, GpuReadError
from jupyterlab_gpu_monitor.gpu.model import Snapshot
from jupyterlab_gpu_monitor.gpu.nvidia_smi import parse_saved_output

from .contract_check import ANSWERS, problems
from .replay import REPO, SMI_FIXTURES, captures

REST_REFERENCE = REPO / "docs" / "rest-api.md"
_EXAMPLE = re.compile(r"<!-- payload: (\w+) -->\n```json\n(.*?)\n```", re.S)


def enum(group: str, name: str) -> set:
    return set(document(group)["$defs"][name]["enum"])


def test_error_kinds_are_the_contracts():
    assert set(ERROR_KINDS) == enum("gpus", "GpuErrorKind")
    assert set(CONDA_HINTS) == enum("errors", "CondaErrorKind")


def test_clock_reasons_the_sources_name_are_the_contracts():
    assert {name for _bit, name in CLOCK_EVENT_BITS} == enum("gpus", "ClockThrottleReason")


@pytest.mark.parametrize(
    "capture",
    captures("xml") + captures("csv") + captures("errors"),
    ids=lambda path: path.name,
)
def test_every_capture_read_from_a_file_is_a_snapshot_of_the_contract(capture: Path):
    # As `jupyter-gpu-monitor snapshot --json --from <capture>` prints it: the API's shape.
    try:
        snapshot = parse_saved_output(capture.read_text())
    except GpuReadError as error:  # an error capture: the snapshot of a failed read
        snapshot = Snapshot(source="nvidia-smi", timestamp=0.0, error=error.to_error())
    assert problems("GpuSnapshot", snapshot.to_json()) == []


@pytest.mark.parametrize("capture", captures("xml"), ids=lambda path: path.name)
async def test_every_xml_capture_served_live_is_what_the_contract_declares(
    fake_smi, jp_fetch, capture: Path
):
    # The CSV queries answered from the capture's own numbers: the whole machine replayed.
    fake_smi.replay(str(capture.relative_to(SMI_FIXTURES)))
    for route in (("gpus",), ("status",), ("gpus", "history"), ("kernels",)):
        await jp_fetch("gpu-monitor", "api", *route)  # checked by conftest's jp_fetch


@pytest.mark.parametrize("capture", captures("errors"), ids=lambda path: path.name)
async def test_every_error_capture_served_live_is_what_the_contract_declares(
    fake_smi, jp_fetch, capture: Path
):
    fake_smi.fail(capture)
    for route in (("gpus",), ("status",), ("gpus", "history")):
        await jp_fetch("gpu-monitor", "api", *route)


def test_the_rest_reference_shows_a_valid_example_of_every_answer():
    examples = _EXAMPLE.findall(REST_REFERENCE.read_text())
    for payload, text in examples:
        assert problems(payload, json.loads(text)) == [], payload
    shown = {payload for payload, _ in examples}
    assert set(ANSWERS.values()) - shown == set()


def test_references_put_in_place_check_what_they_named_and_a_recursive_one_stays():
    # The validators put each reference's definition in place once (contract.validator): a
    # description beside a reference keeps its checks, and a shape holding itself keeps its
    # $ref instead of being put in place without end.
    definitions = {
        "Tree": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
            },
        },
        "Forest": {
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree", "description": "The tallest."}},
        },
    }
    check = Draft202012Validator(
        {**_in_place(definitions["Forest"], definitions, ("Forest",)), "$defs": definitions}
    )
    assert check.is_valid({"tree": {"name": "oak", "children": [{"name": "acorn"}]}})
    (error,) = check.iter_errors({"tree": {"name": "oak", "children": [{"children": []}]}})
    assert (list(error.absolute_path), error.message) == (
        ["tree", "children", 0],
        "'name' is a required property",
    )
