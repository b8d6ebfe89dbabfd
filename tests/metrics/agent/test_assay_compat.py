"""Assay users' files load unchanged: a v2.0 argument policy (``schemas:`` with ``$defs``/``$ref``, ``tools:
{allow, deny}``, ``enforcement``) through ``args_valid``'s ``policy_file``, and a ``sequence_valid`` rule list with
every rule type, the temporal ones (Policy DSL v1.1) included, written as Assay's docs and tests write them.
Expected values are computed by hand in the comments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from evald.metrics.agent.args_valid import ArgsValidMetric
from evald.metrics.agent.sequence_valid import SequenceValidMetric

from .helpers import measure, rules_of, trajectory

# Assay's policy reference (v2.0), with a shared definition, a deny list and unconstrained tools denied
POLICY_V2 = """\
version: "2.0"
name: "with-defs"

tools:
  allow: ["read_file", "list_directory", "search_*", "apply_discount", "write_note"]
  deny:  ["execute_*", "spawn", "*sh", "*kill*"]

schemas:
  $defs:
    safe_path:
      type: string
      pattern: "^/workspace/.*"
      minLength: 1
      maxLength: 4096

  read_file:
    type: object
    additionalProperties: false
    properties:
      path: { $ref: "#/schemas/$defs/safe_path" }
    required: ["path"]

  apply_discount:
    type: object
    properties:
      percent: { type: number, minimum: 0, maximum: 30 }
    required: ["percent"]

enforcement:
  unconstrained_tools: deny

limits:
  max_requests_total: 1000
  max_tool_calls_total: 500

signatures:
  check_descriptions: true
"""

# Assay's sequence rules (its docs' examples and its v1.1 tests), one of each type
RULES = """\
rules:
  - type: require
    tool: Authenticate
  - type: before
    first: Authenticate
    then: WriteRecord
  - type: blocklist
    tools: [admin_*]
  - type: max_calls
    tool: SendEmail
    max: 1
  - type: eventually
    tool: Authenticate
    within: 2
  - type: after
    trigger: WriteRecord
    then: AuditLog
    within: 2
  - type: never_after
    trigger: Logout
    forbidden: WriteRecord
  - type: sequence
    tools: [Authenticate, LoadRecord, WriteRecord]
    strict: true
"""


def args_metric(tmp_path: Path, text: str = POLICY_V2) -> ArgsValidMetric:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return ArgsValidMetric(options={"policy_file": str(path)})


def test_a_v2_policy_passes_valid_calls(tmp_path: Path) -> None:
    score = measure(args_metric(tmp_path), trajectory(("read_file", {"path": "/workspace/a.txt"}),
                                                        ("apply_discount", {"percent": 30})))
    assert score.value == 1.0 and score.metadata["calls_checked"] == 2 and score.metadata["violation_count"] == 0


def test_a_v2_policy_reports_schema_filter_and_enforcement_violations(tmp_path: Path) -> None:
    case = trajectory(
        ("read_file", {"path": "/etc/passwd", "mode": "r"}),  # pattern ($ref) and additionalProperties: 2 errors
        ("apply_discount", {"percent": 50}),                   # maximum: 1 error
        ("execute_shell", {"cmd": "ls"}),                      # denied
        ("delete_all", {}),                                    # not in the allow list
        ("write_note", {"text": "x"}),                         # allowed but no schema: unconstrained_tools: deny
        ("read_file", {"path": "/workspace/ok"}),              # valid
    )
    score = measure(args_metric(tmp_path), case)
    # 6 calls checked, 1 valid -> 1/6
    assert score.value == pytest.approx(1 / 6) and not score.passed
    assert score.metadata["calls_checked"] == 6 and score.metadata["calls_valid"] == 1
    assert rules_of(score) == ["schema", "schema", "schema", "tool_denied", "tool_not_allowed", "unknown_tool"]
    first, second, third = score.metadata["violations"][:3]
    assert (first["index"], first["constraint"]) == (0, "additionalProperties: False")
    assert "argument" not in first  # an error about the whole arguments object
    assert (second["argument"], second["value"], second["constraint"]) == ("path", "/etc/passwd",
                                                                            "pattern: ^/workspace/.*")
    assert (third["index"], third["argument"], third["value"], third["constraint"]) == (1, "percent", 50,
                                                                                        "maximum: 30")
    assert score.metadata["violations"][5]["constraint"] == "unconstrained_tools: deny"


def test_unconstrained_tools_warn_lets_calls_without_a_schema_pass(tmp_path: Path) -> None:
    metric = args_metric(tmp_path, POLICY_V2.replace("unconstrained_tools: deny", "unconstrained_tools: warn"))
    score = measure(metric, trajectory(("write_note", {"text": "x"}), ("read_file", {"path": "/workspace/a"})))
    assert score.value == 1.0 and score.metadata["calls_checked"] == 1  # write_note is not checked


def test_schemas_and_the_v1_argument_policy_combine(tmp_path: Path) -> None:
    policy = {"tools": {"pay": {"required": ["order_id"]}},
              "schemas": {"pay": {"type": "object", "properties": {"amount": {"type": "integer"}}}}}
    score = measure(ArgsValidMetric(options={"policy": policy}), trajectory(("pay", {"amount": "ten"})))
    assert score.value == 0.0 and rules_of(score) == ["required", "schema"]
    # arguments that are no JSON object are one violation, though a policy and a schema both constrain the tool
    bad = measure(ArgsValidMetric(options={"policy": policy}), trajectory(("pay", "amount=ten")))
    assert bad.value == 0.0 and rules_of(bad) == ["arguments_not_object"]
    assert bad.metadata["violations"][0]["value"] == "amount=ten"


@pytest.mark.parametrize(("schemas", "message"), [
    ({"t": {"type": "objekt"}}, "schemas.t: not a valid JSON Schema"),
    ({"t": {"properties": {"a": {"$ref": "https://example.com/s.json"}}}}, "is not local"),
    ({"t": "string"}, "must be an object or a boolean"),
])
def test_unusable_schemas_are_config_errors(schemas: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ArgsValidMetric(options={"policy": {"schemas": schemas}})


def sequence_metric() -> SequenceValidMetric:
    return SequenceValidMetric(options=yaml.safe_load(RULES))


def test_every_rule_type_holds_on_a_good_trajectory() -> None:
    names = ("Authenticate", "LoadRecord", "WriteRecord", "AuditLog", "SendEmail", "Logout")
    score = measure(sequence_metric(), trajectory(*names))
    assert score.value == 1.0 and score.metadata["rules_satisfied"] == 8


def test_every_rule_type_fails_on_a_bad_trajectory() -> None:
    # index: 0 Probe, 1 Probe, 2 Authenticate, 3 LoadRecord, 4 Logout, 5 WriteRecord, 6 SendEmail, 7 SendEmail,
    #        8 admin_reset
    names = ("Probe", "Probe", "Authenticate", "LoadRecord", "Logout", "WriteRecord", "SendEmail", "SendEmail",
             "admin_reset")
    score = measure(sequence_metric(), trajectory(*names))
    # require holds, before holds (Authenticate at 2 < WriteRecord at 5); blocklist fails (8); max_calls fails
    # (2 > 1, second call at 7); eventually fails (Authenticate first at 2, not among the first 2); after fails
    # (WriteRecord at 5, no AuditLog at 6..7); never_after fails (WriteRecord at 5 after Logout at 4); sequence
    # (strict) fails (Logout at 4 interrupts after Authenticate, LoadRecord). 2 of 8 hold.
    assert score.value == 0.25 and score.metadata["rules_satisfied"] == 2
    assert rules_of(score) == ["blocklist", "count", "eventually", "after", "never_after", "sequence"]
    by_rule = {v["rule"]: v for v in score.metadata["violations"]}
    assert by_rule["eventually"]["index"] == 2
    assert (by_rule["after"]["index"], by_rule["never_after"]["index"], by_rule["sequence"]["index"]) == (5, 5, 4)
    assert by_rule["count"]["rule_index"] == 3 and by_rule["sequence"]["rule_index"] == 7


def holds(rule: dict[str, Any], *names: str) -> bool:
    return measure(SequenceValidMetric(options={"rules": [rule]}), trajectory(*names)).value == 1.0


@pytest.mark.parametrize(("names", "ok"), [
    (("Step1", "Step2", "Step3", "Step4", "ValidateOutput"), True),   # Assay's docs: index 4 < 5
    (("Step1", "Step2", "Step3", "Step4", "Step5", "ValidateOutput"), False),
    (("Step1",), False), ((), False),
])
def test_eventually(names: tuple[str, ...], ok: bool) -> None:
    assert holds({"type": "eventually", "tool": "ValidateOutput", "within": 5}, *names) is ok


@pytest.mark.parametrize(("names", "ok"), [
    (("Create", "Audit"), True), (("Create", "X", "Audit"), True),     # Assay's tests: within 2
    (("Create",), False), ((), True),
    (("Create", "Audit", "Create", "X", "Y"), False),                 # the second trigger has none (re-armed)
    (("Create", "X", "Create", "Audit"), True),                        # a later trigger resets the deadline
    (("Create", "X", "Y", "Audit"), False),                            # index 3 is past 0 + 2
])
def test_after(names: tuple[str, ...], ok: bool) -> None:
    assert holds({"type": "after", "trigger": "Create", "then": "Audit", "within": 2}, *names) is ok


@pytest.mark.parametrize(("names", "ok"), [
    (("Delete", "Archive"), True), (("Archive", "Delete"), False), (("Delete",), True),
    (("Delete", "Archive", "Read", "Delete"), False),
])
def test_never_after(names: tuple[str, ...], ok: bool) -> None:
    assert holds({"type": "never_after", "trigger": "Archive", "forbidden": "Delete"}, *names) is ok


@pytest.mark.parametrize(("names", "loose", "strict"), [
    (("A", "B", "C"), True, True),
    (("A", "X", "B", "Y", "C"), True, False),  # Assay's tests: gaps allowed unless strict
    (("B", "A", "C"), False, False),           # a later step first
    (("A", "C"), False, False),                # C while B is expected
    (("X", "Y"), True, True),                  # not exercised
    (("A", "B"), False, False),                # started, not completed
    (("X", "A", "B", "C", "X"), True, True),   # before the start and after the end do not count
    (("B", "A", "B", "C"), False, True),       # strict looks only from the start on
])
def test_sequence(names: tuple[str, ...], loose: bool, strict: bool) -> None:
    assert holds({"type": "sequence", "tools": ["A", "B", "C"]}, *names) is loose
    assert holds({"type": "sequence", "tools": ["A", "B", "C"], "strict": True}, *names) is strict


# an Assay v1.1 policy file (its changelog's examples): sequences and aliases, beside the argument keys of args_valid
POLICY_V11 = """\
version: "1.1"
name: "temporal"

tools:
  deny: ["drop_*"]

aliases:
  Search:
    - SearchKnowledgeBase
    - SearchWeb

sequences:
  - type: eventually
    tool: Search
    within: 2
  - type: never_after
    trigger: Logout
    forbidden: AccessData
  - type: blocklist
    pattern: admin_
  - type: sequence
    tools: [Authenticate, Search, AccessData]
"""


def test_an_assay_policy_file_with_sequences_and_aliases(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY_V11, encoding="utf-8")
    metric = SequenceValidMetric(options={"policy_file": str(path), "rules": [{"type": "require", "tool": "Logout"}]})
    good = measure(metric, trajectory("Authenticate", "SearchWeb", "AccessData", "Logout"))
    assert good.value == 1.0 and good.metadata["rules_checked"] == 5  # the file's 4, then the inline one
    # Search (an alias) first at index 2, not within 2; AccessData after Logout; superadmin_x contains admin_;
    # the sequence holds (SearchKnowledgeBase is a Search); require Logout holds: 2 of 5
    bad = measure(metric, trajectory("Authenticate", "superadmin_x", "SearchKnowledgeBase", "AccessData", "Logout",
                                     "AccessData"))
    assert bad.value == 0.4 and rules_of(bad) == ["eventually", "never_after", "blocklist"]
    assert bad.metadata["violations"][2]["index"] == 1
    # the same file is args_valid's policy too: its deny list applies, its sequences are left to sequence_valid
    args = measure(args_metric(tmp_path, POLICY_V11), trajectory(("drop_table", {}), ("SearchWeb", {"q": "x"})))
    assert args.value == 0.0 and rules_of(args) == ["tool_denied"] and args.metadata["calls_checked"] == 1


def test_blocklist_needs_tools_or_pattern() -> None:
    with pytest.raises(ValueError, match="exactly one of `tools` and `pattern`"):
        SequenceValidMetric(options={"rules": [{"type": "blocklist"}]})


def test_assay_test_entries_load_unchanged(tmp_path: Path) -> None:
    """An Assay suite's test entries (``metric`` and ``id`` are the suite's; the rest are the metric's options)."""
    (tmp_path / "policy.yaml").write_text(POLICY_V2, encoding="utf-8")
    suite = yaml.safe_load(f"""
tests:
  - id: args_valid
    metric: args_valid
    policy: {tmp_path / "policy.yaml"}
    tools: [read_file]
  - id: auth_flow
    metric: sequence_valid
    rules:
      - type: require
        tool: authenticate_user
      - type: before
        first: authenticate_user
        then: [get_customer, update_customer]
""")
    args_entry, sequence_entry = ({k: v for k, v in t.items() if k not in ("id", "metric")} for t in suite["tests"])
    args = measure(ArgsValidMetric(options=args_entry), trajectory(("read_file", {"path": "/etc/x"}),
                                                                    ("spawn", {})))
    assert args.value == 0.0 and args.metadata["calls_checked"] == 1  # only read_file is checked (tools)
    sequence = measure(SequenceValidMetric(options=sequence_entry), trajectory("get_customer", "authenticate_user"))
    assert sequence.value == 0.5 and rules_of(sequence) == ["before"]
