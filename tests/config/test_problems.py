"""Pydantic errors as (yaml path, message) problems, and where unknown keys find their suggestions."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evald.config.model import EvaldConfig
from evald.config.problems import UNKNOWN_KEY, allowed_keys, pydantic_problems, without_duplicates


class Leaf(BaseModel):
    model_config = ConfigDict(extra="forbid")
    endpoint: str = "x"
    timeout: float = 1.0


class Other(BaseModel):
    model_config = ConfigDict(extra="forbid")
    brokers: list[str] = []


class Root(BaseModel):
    model_config = ConfigDict(extra="forbid")
    leaf: Leaf | None = None
    items: list[Leaf] = []
    named: dict[str, Leaf] = {}
    either: Leaf | Other | None = None
    annotated: Annotated[Leaf, Field(description="d")] = Leaf()
    aliased: int = Field(0, alias="alias_name")


def errors(model: type[BaseModel], data: object) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError) as info:
        model.model_validate(data)
    return pydantic_problems(info.value, "root", model)


def test_paths_cover_models_lists_dicts_and_optional_members() -> None:
    got = dict(errors(Root, {"leaf": {"endpont": 1}, "items": [{}, {"timout": 1}], "named": {"a": {"endpoit": 1}},
                             "annotated": {"timeot": 1}, "alias_nam": 1}))
    assert got["root.leaf.endpont"] == f"{UNKNOWN_KEY}; did you mean 'endpoint'?"
    assert got["root.items[1].timout"] == f"{UNKNOWN_KEY}; did you mean 'timeout'?"
    assert got["root.named.a.endpoit"] == f"{UNKNOWN_KEY}; did you mean 'endpoint'?"
    assert got["root.annotated.timeot"] == f"{UNKNOWN_KEY}; did you mean 'timeout'?"
    assert got["root.alias_nam"] == f"{UNKNOWN_KEY}; did you mean 'alias_name'?"


def test_a_union_of_models_suggests_from_the_member_pydantic_tried() -> None:
    got = errors(Root, {"either": {"broker": ["b"]}})
    assert ("root.either.Other.broker", f"{UNKNOWN_KEY}; did you mean 'brokers'?") in got


def test_allowed_keys_at_a_location() -> None:
    assert allowed_keys(Root, ("items", 0)) == ["endpoint", "timeout"]
    assert allowed_keys(Root, ()) == sorted(["leaf", "items", "named", "either", "annotated",
                                             "alias_name"])
    assert allowed_keys(Root, ("either",)) is None  # two models could be meant
    assert allowed_keys(Root, ("nowhere", 3)) is None
    assert allowed_keys(EvaldConfig, ("metrics", 2)) is not None
    assert "options" in (allowed_keys(EvaldConfig, ("metrics", 2)) or [])


def test_without_duplicates_keeps_the_first_problem_of_an_unbuilt_path() -> None:
    problems = [("a", "variable X is not set"), ("b", "bad"), ("a", "invalid endpoint ''"), ("b", "worse")]
    assert without_duplicates(problems, {"a"}) == [("a", "variable X is not set"), ("b", "bad"), ("b", "worse")]
