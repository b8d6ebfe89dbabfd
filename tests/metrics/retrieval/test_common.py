"""The shared resolution of the retrieval metrics: cutoff k, relevance labels and the judged top-k ranking."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import Document, EvalCase
from evald.metrics.retrieval.common import (
    DEFAULT_K,
    RelevanceOptions,
    judge_ranking,
    normalize_text,
    resolve_judgments,
    resolve_k,
)


def docs(*ids: str | None) -> tuple[Document, ...]:
    return tuple(Document(id=i) for i in ids)


def test_default_k_is_five() -> None:
    assert DEFAULT_K == 5
    assert resolve_k(EvalCase(), None) == 5


def test_case_metadata_k_wins_over_the_option() -> None:
    assert resolve_k(EvalCase(metadata={"k": 2}), 3) == 2
    assert resolve_k(EvalCase(), 3) == 3


@pytest.mark.parametrize("bad_k", [0, -1, "2", 2.0, True, None])
def test_unusable_case_k_falls_back_to_the_option(bad_k: Any) -> None:
    assert resolve_k(EvalCase(metadata={"k": bad_k}), 3) == 3


def test_labels_precedence_metadata_then_expected_then_options() -> None:
    options = RelevanceOptions(relevant_ids=["opt"])
    expected = {"relevant_ids": ["exp"]}
    both = EvalCase(metadata={"relevant_ids": ["meta"]}, expected=expected)
    judged = resolve_judgments(both, options)
    assert judged is not None and (set(judged.relevant_ids), judged.source) == ({"meta"}, "metadata")
    judged = resolve_judgments(EvalCase(expected=expected), options)
    assert judged is not None and (set(judged.relevant_ids), judged.source) == ({"exp"}, "expected")
    judged = resolve_judgments(EvalCase(expected="an answer"), options)
    assert judged is not None and (set(judged.relevant_ids), judged.source) == ({"opt"}, "options")
    assert resolve_judgments(EvalCase(), RelevanceOptions()) is None


def test_relevant_ids_and_relevance_of_one_level_merge() -> None:
    case = EvalCase(metadata={"relevant_ids": ["a", "b"], "relevance": {"b": 3, "c": 2, "d": 0, "e": -1}})
    judged = resolve_judgments(case, RelevanceOptions())
    assert judged is not None
    assert dict(judged.grades) == {"a": 1.0, "b": 3.0, "c": 2.0}  # grade <= 0: not relevant


def test_one_id_and_integer_ids_are_accepted() -> None:
    judged = resolve_judgments(EvalCase(metadata={"relevant_ids": "kb-1"}), RelevanceOptions())
    assert judged is not None and judged.relevant_ids == {"kb-1"}
    judged = resolve_judgments(EvalCase(metadata={"relevant_ids": [7, "8"]}), RelevanceOptions())
    assert judged is not None and judged.relevant_ids == {"7", "8"}


@pytest.mark.parametrize(
    "metadata",
    [{"relevant_ids": 3.5}, {"relevant_ids": ["a", None]}, {"relevant_ids": {"a": 1}}, {"relevance": ["a"]},
     {"relevance": {"a": "high"}}, {"relevance": {"a": True}}, {"relevance": {"a": float("nan")}}],
)
def test_a_malformed_level_counts_as_absent(metadata: dict[str, Any]) -> None:
    judged = resolve_judgments(EvalCase(metadata=metadata), RelevanceOptions(relevant_ids=["opt"]))
    assert judged is not None and judged.source == "options"


def test_an_explicit_empty_label_list_wins_and_makes_the_ranking_metrics_inapplicable() -> None:
    case = EvalCase(context=docs("a"), metadata={"relevant_ids": []})
    judged = resolve_judgments(case, RelevanceOptions(relevant_ids=["a"]))
    assert judged is not None and judged.source == "metadata" and not judged.grades
    assert judge_ranking(case, RelevanceOptions(relevant_ids=["a"])) is None


def test_judged_ranking_gains() -> None:
    # ranks: 1 a (grade 2), 2 no id, 3 a again (credited once), 4 b (unjudged), 5 c (grade 1), 6 d (beyond k)
    case = EvalCase(context=docs("a", None, "a", "b", "c", "d"), metadata={"relevance": {"a": 2, "c": 1, "d": 1}})
    ranking = judge_ranking(case, RelevanceOptions())
    assert ranking is not None
    assert ranking.k == 5 and len(ranking.top_k) == 5
    assert ranking.gains == (2.0, 0.0, 0.0, 0.0, 1.0)
    assert ranking.relevant_ranks == [1, 5]
    assert ranking.found_ids == {"a", "c"}
    assert ranking.summary() == {"k": 5, "retrieved": 5, "relevant": 3, "relevant_ranks": [1, 5],
                                 "labels_from": "metadata"}


def test_an_empty_id_is_never_relevant() -> None:
    ranking = judge_ranking(EvalCase(context=docs("", "x")), RelevanceOptions(relevant_ids=["x"]))
    assert ranking is not None and ranking.gains == (0.0, 1.0)
    # an empty id as a label is malformed: the whole mapping counts as absent
    assert resolve_judgments(EvalCase(metadata={"relevance": {"": 1, "x": 1}}), RelevanceOptions()) is None


def test_no_retrieved_documents_is_not_applicable() -> None:
    assert judge_ranking(EvalCase(metadata={"relevant_ids": ["a"]}), RelevanceOptions()) is None


def test_normalize_text() -> None:
    assert normalize_text("  Refund\n\tWITHIN  30 days ") == "refund within 30 days"
    assert normalize_text("cafe\u0301 STRASSE") == normalize_text("caf\u00e9 straße")


@pytest.mark.parametrize(
    "options", [{"k": 0}, {"relevant_ids": [""]}, {"relevance": {"a": -1}}, {"relevance": {"a": "x"}}, {"x": 1}]
)
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        RelevanceOptions.model_validate(options)
