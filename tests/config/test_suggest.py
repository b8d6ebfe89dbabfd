"""Nearest known names for a misspelt config name (evald/config/suggest.py)."""

from __future__ import annotations

from evald.config.suggest import close_matches, did_you_mean

KINDS = ["latency", "token_usage", "tool_called", "tool_called_with", "tool_call_order", "tool_not_called",
         "exact_match", "json_valid", "json_diff", "pii_leak"]


def test_a_typo_finds_its_word() -> None:
    assert close_matches("latncy", KINDS) == ["latency"]
    assert close_matches("exact_macth", KINDS) == ["exact_match"]


def test_a_prefix_finds_the_longer_names_it_starts() -> None:
    assert close_matches("pii", KINDS) == ["pii_leak"]
    assert set(close_matches("json", KINDS)) == {"json_valid", "json_diff"}


def test_at_most_n_names_and_none_when_nothing_is_near() -> None:
    assert len(close_matches("tool_call", KINDS)) == 3
    assert len(close_matches("tool_call", KINDS, n=2)) == 2
    assert close_matches("zzzzqqq", KINDS) == []


def test_did_you_mean_wording() -> None:
    assert did_you_mean("latncy", KINDS) == "; did you mean 'latency'?"
    assert did_you_mean("jsn_vlid", ["json_valid", "json_void"]) == "; did you mean 'json_valid' or 'json_void'?"
    three = did_you_mean("tool_call", KINDS)
    assert three.startswith("; did you mean 'tool_call") and three.count("'") == 6 and ", " in three and " or " in three
    assert did_you_mean("zzzzqqq", KINDS) == ""
