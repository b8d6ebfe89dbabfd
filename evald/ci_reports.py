"""CI reports of a replay: JUnit XML (``evald replay --junit FILE``) and SARIF 2.1.0 (``--sarif FILE``).

JUnit: one ``<testsuite>`` per metric, one ``<testcase>`` per scored case (name ``<scope> <trace_id>/<span_id>``);
a failing score is a ``<failure>`` whose message is the score's reason, a metric error an ``<error>``, a metric
that did not apply a ``<skipped>``. Safety metrics are their own suites like any other metric; CI tools show them
by name. Written with the standard library's ElementTree (well-formed, escaped).

SARIF: one ``run`` with tool ``evald``; one ``rule`` per metric (id = metric name, properties carry the kind's
dimension and threshold); one ``result`` per failing score (level ``error`` for safety metrics, ``warning``
otherwise) and per metric error (level ``error``), with the reason as message and Assay-style ``violations`` (when
the metric reports them) in the result's properties. Passing scores are not results. Every result has a physical
location, as GitHub code scanning requires: the OTLP input file its trace came from (``artifactLocation.uri``
relative to the current directory, which is the repository root in CI, with ``uriBaseId`` ``%SRCROOT%``; an
absolute ``file://`` URI for a file outside it), at the line of the span's id in an OTLP/JSON file (else of the
trace id, else line 1; binary ``.pb`` files: line 1). A trace whose file is unknown points at the ``fallback``
artifact (the configuration file, else the first input). Besides, a logical location
``trace/<trace_id>/span/<span_id>`` names the span, and ``partialFingerprints`` (``evaldResult/v1``: a hash of rule,
trace, span and kind) keep an alert the same across runs. At most ``MAX_RESULTS`` (GitHub's 25,000 per run)
results are written, errors first; the run's ``properties.results_omitted`` counts the rest.

Both are pure functions of the scored cases (and, for SARIF, of where each trace came from: ``trace_sources``
reads the input files once more to find it); writing the file is the caller's business.
"""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evald import __version__
from evald.case import Dimension
from evald.model import ScoredCase

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: GitHub code scanning's limit of results per run (a larger upload is refused)
MAX_RESULTS = 25_000
_LEVEL_ORDER = {"error": 0, "warning": 1, "note": 2}


@dataclass(frozen=True, slots=True)
class Artifact:
    """A place in a file: a SARIF ``artifactLocation.uri`` (relative to the current directory when inside it) and a
    1-based line."""

    uri: str
    line: int = 1

    @classmethod
    def of(cls, path: str | Path, line: int = 1) -> Artifact:
        resolved = Path(path).resolve()
        try:
            return cls(resolved.relative_to(Path.cwd().resolve()).as_posix(), max(1, line))
        except ValueError:
            return cls(resolved.as_uri(), max(1, line))

    def location(self) -> dict[str, Any]:
        artifact: dict[str, Any] = {"uri": self.uri}
        if not self.uri.startswith("file:"):
            artifact["uriBaseId"] = "%SRCROOT%"
        return {"artifactLocation": artifact, "region": {"startLine": self.line}}


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


def trace_sources(files: Iterable[str | Path]) -> dict[tuple[str, str], Artifact]:
    """Where each trace and span of the OTLP ``files`` is: ``(trace_id, "")`` -> the trace's first file (line of the
    trace id), ``(trace_id, span_id)`` -> the line of the span's id in an OTLP/JSON file. Files that cannot be read
    are left out (the replay reported them)."""
    from evald.receivers.files import read_signal_file
    from evald.replay import discover

    found: dict[tuple[str, str], Artifact] = {}
    for path in discover(files).files:
        try:
            batch = read_signal_file(path)
            text = path.read_text(encoding="utf-8", errors="replace").lower() if path.suffix == ".json" else ""
        except Exception:  # noqa: BLE001 - not usable here means the replay already said why
            continue
        ids = [(s.trace_id, s.span_id) for s in batch.spans]
        ids += [(r.trace_id, r.span_id or "") for r in batch.logs if r.trace_id]
        for trace_id, span_id in ids:
            if (trace_id, "") not in found:
                found[(trace_id, "")] = Artifact.of(path, _line_of(text, trace_id))
            if span_id and (trace_id, span_id) not in found:
                found[(trace_id, span_id)] = Artifact.of(path, _line_of(text, span_id) or _line_of(text, trace_id))
    return found


def sarif(scored_cases: Sequence[ScoredCase], sources: Mapping[tuple[str, str], Artifact] | None = None,
          fallback: Artifact | None = None) -> dict[str, Any]:
    """The SARIF log; ``sources`` (``trace_sources``) place each result, ``fallback`` the results it cannot place."""
    sources = sources or {}
    default = fallback or Artifact("evald.yaml")
    rules: dict[str, dict[str, Any]] = {}
    results: list[dict[str, Any]] = []
    for scored in scored_cases:
        place = (sources.get((scored.trace_id, scored.span_id or "")) or sources.get((scored.trace_id, ""))
                 or default)
        location = {"physicalLocation": place.location(), "logicalLocations": [{
            "fullyQualifiedName": f"trace/{scored.trace_id}/span/{scored.span_id or '-'}",
            "kind": "object",
            "properties": {"scope": scored.case.scope, "service_name": scored.case.service_name},
        }]}
        text = json.dumps(location)  # each result gets its own copy (callers may edit one)
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
                "locations": [json.loads(text)],
                "partialFingerprints": _fingerprint(score.name, scored, "fail"),
                "properties": json.loads(json.dumps(properties, default=str)),
            })
        for name, reason in scored.errors:
            rules.setdefault(name, _rule(name, scored.metric_dimensions.get(name, ""), None))
            results.append({"ruleId": name, "level": "error", "message": {"text": f"metric error: {reason}"},
                            "locations": [json.loads(text)],
                            "partialFingerprints": _fingerprint(name, scored, "error")})
    kept = results
    if len(results) > MAX_RESULTS:  # sorted() is stable: errors first, each level in case order
        kept = sorted(results, key=lambda r: _LEVEL_ORDER[r["level"]])[:MAX_RESULTS]
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "evald", "version": __version__, "informationUri":
                            "https://github.com/evald/evald", "rules": list(rules.values())}},
        "results": kept,
    }
    if len(kept) < len(results):
        run["properties"] = {"results_omitted": len(results) - len(kept)}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _line_of(text: str, hex_id: str) -> int:
    """1-based line of ``"<id>"`` in an OTLP/JSON text (ids are hex strings there), 0 when absent."""
    at = text.find(f'"{hex_id.lower()}"') if text and hex_id else -1
    return text.count("\n", 0, at) + 1 if at >= 0 else 0


def _fingerprint(rule: str, scored: ScoredCase, kind: str) -> dict[str, str]:
    key = f"{rule}|{scored.trace_id}|{scored.span_id or ''}|{scored.case.scope}|{kind}"
    return {"evaldResult/v1": hashlib.sha256(key.encode()).hexdigest()[:32]}


def _rule(name: str, dimension: str, threshold: float | None) -> dict[str, Any]:
    properties: dict[str, Any] = {"dimension": dimension}
    if threshold is not None:
        properties["threshold"] = threshold
    return {"id": name, "name": name, "shortDescription": {"text": f"evald metric {name} ({dimension})"},
            "properties": properties}
