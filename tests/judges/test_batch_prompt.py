"""The batched prompt and its strict per-part parsing (no network)."""

from __future__ import annotations

import json

from evald.judges.batch_prompt import BatchPart, batch_schema, build_batch_prompt, parse_batch
from evald.judges.prompting import Verdict, VerdictField

SCORE = (VerdictField("score", 1, 5, "quality"),)
PARTS = [BatchPart("Task A", (("input", "q"), ("output", "a")), SCORE),
         BatchPart("Task B", (("output", "a"),), SCORE),
         BatchPart("Task C", (("output", "another text"),), SCORE)]


def test_shared_blocks_are_sent_once_and_a_label_with_other_text_is_renamed() -> None:
    prompt = build_batch_prompt(PARTS)
    assert prompt.user.count('name="output"') == 1 and prompt.user.count('name="output#2"') == 1
    assert "Task m3 (about the blocks named output#2)" in prompt.system
    tag = prompt.user.split(" ", 1)[0][1:]
    assert tag.startswith("data-") and f"<{tag} ...>" in prompt.system  # the nonce tag, as for one verdict
    schema = batch_schema(PARTS)
    assert schema["required"] == ["m1", "m2", "m3"] and schema["additionalProperties"] is False
    assert schema["properties"]["m1"]["required"] == ["reasoning", "score"]


def test_each_part_is_parsed_on_its_own() -> None:
    answer = {"m1": {"reasoning": "ok", "score": 4}, "m2": {"score": 4, "reasoning": "order"},
              "m3": {"reasoning": "ok", "score": 6}, "extra": 1}
    results = parse_batch("```json\n" + json.dumps(answer) + "\n```", PARTS)
    assert results[0] == Verdict("ok", {"score": 4})
    assert isinstance(results[1], ValueError) and "in order" in str(results[1])
    assert isinstance(results[2], ValueError) and "outside its range" in str(results[2])


def test_a_missing_or_repeated_part_fails_alone() -> None:
    text = '{"m1": {"reasoning": "x", "score": 1}, "m1": {"reasoning": "y", "score": 2}, "m2": {"reasoning": "z", ' \
           '"score": 3}}'
    results = parse_batch(text, PARTS)
    assert isinstance(results[0], ValueError) and "twice" in str(results[0])
    assert results[1] == Verdict("z", {"score": 3})
    assert isinstance(results[2], ValueError) and "missing" in str(results[2])


def test_an_answer_that_is_not_one_object_fails_them_all() -> None:
    for text in ("[1, 2]", "m1: 5", '{"m1": {"reasoning": "x", "score": 1}} trailing'):
        try:
            parse_batch(text, PARTS)
        except ValueError:
            continue
        raise AssertionError(f"accepted {text!r}")
