"""Traces captured from instrumentations the shared corpus lacks (tests/testdata/captured), mapped by the default
router and compared field by field with what the app and the API stand-in did.

Twelve configurations: OpenInference and OpenLLMetry for the Anthropic SDK (with and without the SDK's own spans),
the OpenAI Agents SDK through OpenInference and through the official OpenTelemetry instrumentation, OpenLLMetry
for LangChain, pydantic-ai's and logfire's own instrumentation, OpenLIT, the Langfuse SDK, and the official OpenAI
instrumentation's older per-message events. Fields an emitter does not record (or records wrongly) are listed per
file in the manifest's ``emitter`` entries with the reason, and asserted at the value evald can read.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from captured_loader import CAPTURED, actual_fields, expected_fields, manifest_files

ENTRIES = manifest_files()


def _id(entry: dict[str, Any]) -> str:
    return str(entry["file"])


def test_every_configuration_and_file_is_present() -> None:
    configurations = json.loads((CAPTURED / "manifest.json").read_text())["configurations"]
    assert len(configurations) == 51 and len(ENTRIES) == 300
    assert {e["configuration"] for e in ENTRIES} == set(configurations)
    assert all((CAPTURED / e["file"]).is_file() for e in ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
def test_captured_trace_maps_to_its_ground_truth(entry: dict[str, Any]) -> None:
    expected = expected_fields(entry)
    assert actual_fields(entry, expected) == expected


def test_emitter_exceptions_each_say_why() -> None:
    exceptions = [o for e in ENTRIES for o in e["emitter"].values()]
    assert exceptions and all(isinstance(o["why"], str) and len(o["why"]) > 20 for o in exceptions)
    # most of what the apps did is read as it happened: exceptions stay the minority of the compared fields
    compared = sum(len(expected_fields(e)) for e in ENTRIES)
    assert len(exceptions) / compared < 0.1
