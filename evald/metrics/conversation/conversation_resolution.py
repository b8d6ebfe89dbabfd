"""``conversation_resolution``: the conversation reached a configured end state, told by regular expressions."""

from __future__ import annotations

import re
from typing import ClassVar, Literal, cast

from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.conversation.roles import ASSISTANT_ROLES, USER_ROLES, texts_of
from evald.metrics.options import Regex
from evald.metrics.text import optional_text

Scope = Literal["last_assistant", "any_assistant", "last_user"]
_PREVIEW = 80


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


class ConversationResolutionOptions(ComponentConfig):
    resolved_patterns: list[Regex] = Field(
        default_factory=list, description="regexes (case-insensitive) that mark the conversation as resolved"
    )
    unresolved_patterns: list[Regex] = Field(
        default_factory=list,
        description="regexes (case-insensitive) that mark it as NOT resolved; checked first, they take precedence",
    )
    scope: Scope = Field(
        "last_assistant",
        description="text matched: last_assistant (final reply), any_assistant (every reply) or last_user",
    )
    require_match: bool = Field(
        True, description="true: no pattern matching scores 0; false: no pattern matching scores 1"
    )

    @model_validator(mode="after")
    def _some_pattern(self) -> ConversationResolutionOptions:
        if not self.resolved_patterns and not self.unresolved_patterns:
            raise ValueError("set resolved_patterns and/or unresolved_patterns")
        return self


class ConversationResolutionMetric(BaseMetric):
    """Whether the conversation reached a configured end state (1 or 0), by regexes on its messages.

    Reads ``messages`` and, as fallbacks, ``output`` and ``input``. ``scope`` picks the text: the last
    assistant message with text (``last_assistant``, the default; ``output`` when no assistant message has
    text), every assistant message (``any_assistant``; a pattern matching any one of them counts), or the last
    user message (``last_user``; ``input`` when no user message has text, e.g. to catch "that did not help").
    Assistant roles are ``assistant``, ``ai`` and ``model``; user roles ``user`` and ``human``.

    Patterns are Python regular expressions, matched case-insensitively with ``re.search`` and compiled when the
    config is loaded (an invalid one is a config error). ``unresolved_patterns`` are checked first: one match
    scores 0. Otherwise a match of ``resolved_patterns`` scores 1. When nothing matches, the value is 0 with
    ``require_match: true`` (the default) and 1 with ``require_match: false`` (only the unresolved patterns
    can fail a case). The metadata holds ``outcome`` (resolved, unresolved or no_match), ``matched_pattern``
    and ``scope``.

    Not applicable when the chosen scope has no text (no messages with text and no fallback).
    """

    kind: ClassVar[str] = "conversation_resolution"
    family: ClassVar[str] = "conversation"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("messages", "output", "input")
    needs: ClassVar[tuple[str, ...]] = ("messages", "output")
    Options: ClassVar[type[ComponentConfig]] = ConversationResolutionOptions

    def setup(self) -> None:
        opts = cast(ConversationResolutionOptions, self.options)
        self._resolved = [_compile(p) for p in opts.resolved_patterns]
        self._unresolved = [_compile(p) for p in opts.unresolved_patterns]

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(ConversationResolutionOptions, self.options)
        texts = _scoped_texts(eval_case, opts.scope)
        if not texts:
            return None
        for outcome, patterns, value in (("unresolved", self._unresolved, 0.0), ("resolved", self._resolved, 1.0)):
            for pattern in patterns:
                match = next((m for text in texts if (m := pattern.search(text))), None)
                if match is not None:
                    reason = f"{outcome}: {pattern.pattern!r} matched {match.group(0)[:_PREVIEW]!r}"
                    return self.score(value, reason, outcome=outcome, matched_pattern=pattern.pattern,
                                      scope=opts.scope)
        value = 0.0 if opts.require_match else 1.0
        reason = "no pattern matched" + (" (a match is required)" if opts.require_match else "")
        return self.score(value, reason, outcome="no_match", matched_pattern=None, scope=opts.scope)


def _scoped_texts(eval_case: EvalCase, scope: Scope) -> list[str]:
    """The texts the patterns are matched against; empty when the scope has none."""
    if scope == "last_user":
        users = texts_of(eval_case.messages, USER_ROLES)
        fallback = optional_text(eval_case.input)
        return users[-1:] if users else [fallback] if fallback else []
    replies = texts_of(eval_case.messages, ASSISTANT_ROLES)
    if not replies:
        output = optional_text(eval_case.output)
        return [output] if output else []
    return replies if scope == "any_assistant" else replies[-1:]
