"""CI reports of a replay: JUnit XML (``evald replay --junit FILE``) and SARIF 2.1.0 (``--sarif FILE``).

JUnit: one ``<testsuite>`` per metric, one ``<testcase>`` per scored case (name ``<scope> <trace_id>/<span_id>``);
a failing score is a ``<failure>`` whose message is the score's reason, a metric error an ``<error>``, a metric
that did not apply a ``<skipped>``. Safety metrics are their own suites like any other metric; CI tools show them
by name. Written with the standard library's ElementTree (well-formed, escaped).

SARIF: one ``run`` with tool ``evald``; one ``rule`` per metric (id = metric name, properties carry the kind's
dimension and threshold); one ``result`` per failing score (level ``error`` for safety metrics, ``warning``
otherwise) and per metric error (level ``error``), located by a logical location ``trace/<trace_id>/span/<span_id>``
(SARIF has no file for a trace), with the reason as message and Assay-style ``violations`` (when the metric
reports them) in the result's properties. Passing scores are not results.

Both are pure functions of the scored cases; writing the file is the caller's business.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from evald import __version__
from evald.case import Dimension
from evald.model import ScoredCase

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _case_name(scored: ScoredCase) -> str:
    return f"{scored.case.scope} {scored.trace_id}/{scored.span_id or '-'}"


def junit_xml(scored_cases: Sequence[ScoredCase]) -> str:
    suites: dict[str, list[tuple[ScoredCase, str, str | None]]] = {}
    for scored in scored_cases:
        for score in scored.scores:
            suites.setdefault(score.name, []).append((scored, "fail" if not score.passed else "pass", score.reason))
        for name, why in scored.skipped:
            suites.setdefault(name, []).append((scored, "skipped", why))
        for name, why in scored.errors:
            suites.setdefault(name, []).append((scored, "error", why))
    root = ET.Element("testsuites", name="evald replay")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for metric, rows in sorted(suites.items()):
        counts = {
            "tests": len(rows),
            "failures": sum(o == "fail" for _, o, _ in rows),
            "errors": sum(o == "error" for _, o, _ in rows),
            "skipped": sum(o == "skipped" for _, o, _ in rows),
        }
        suite = ET.SubElement(root, "testsuite", {"name": metric, **{k: str(v) for k, v in counts.items()}})
        for key, value in counts.items():
            totals[key] += value
        for scored, outcome, reason in rows:
            case = ET.SubElement(suite, "testcase", classname=metric, name=_case_name(scored))
            if outcome == "fail":
                ET.SubElement(case, "failure", message=reason or "score below threshold", type="evald.fail")
            elif outcome == "error":
                ET.SubElement(case, "error", message=reason or "metric error", type="evald.error")
            elif outcome == "skipped":
                ET.SubElement(case, "skipped", message=reason or "not applicable")
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def sarif(scored_cases: Sequence[ScoredCase]) -> dict[str, Any]:
    rules: dict[str, dict[str, Any]] = {}
    results: list[dict[str, Any]] = []
    for scored in scored_cases:
        location = {"logicalLocations": [{
            "fullyQualifiedName": f"trace/{scored.trace_id}/span/{scored.span_id or '-'}",
            "kind": "object",
            "properties": {"scope": scored.case.scope, "service_name": scored.case.service_name},
        }]}
        for score in scored.scores:
            rules.setdefault(score.name, _rule(score.name, score.dimension.value, score.threshold))
            if score.passed:
                continue
            properties: dict[str, Any] = {"score": score.value, "threshold": score.threshold}
            if isinstance(score.metadata.get("violations"), list):
                properties["violations"] = score.metadata["violations"]
            results.append({
                "ruleId": score.name,
                "level": "error" if score.dimension is Dimension.SAFETY else "warning",
                "message": {"text": score.reason or f"score {score.value:.3f} is below {score.threshold:g}"},
                "locations": [location],
                "properties": json.loads(json.dumps(properties, default=str)),
            })
        for name, reason in scored.errors:
            rules.setdefault(name, _rule(name, scored.metric_dimensions.get(name, ""), None))
            results.append({"ruleId": name, "level": "error", "message": {"text": f"metric error: {reason}"},
                            "locations": [location]})
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "evald", "version": __version__, "informationUri":
                                "https://github.com/evald/evald", "rules": list(rules.values())}},
            "results": results,
        }],
    }


def _rule(name: str, dimension: str, threshold: float | None) -> dict[str, Any]:
    properties: dict[str, Any] = {"dimension": dimension}
    if threshold is not None:
        properties["threshold"] = threshold
    return {"id": name, "name": name, "shortDescription": {"text": f"evald metric {name} ({dimension})"},
            "properties": properties}
