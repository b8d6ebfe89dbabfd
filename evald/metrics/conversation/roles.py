"""Chat roles as the mappers and instrumentations spell them, shared by the conversation metrics.

OpenAI-style roles are the norm (``user``, ``assistant``, ``system``/``developer``, ``tool``); LangChain writes
``human``/``ai`` and Gemini ``model``, so those count too. Roles are compared case-insensitively.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from evald.case import Message

USER_ROLES = frozenset({"user", "human"})
ASSISTANT_ROLES = frozenset({"assistant", "ai", "model"})
SYSTEM_ROLES = frozenset({"system", "developer"})
TOOL_ROLES = frozenset({"tool", "function", "ipython"})


def has_role(message: Message, roles: frozenset[str]) -> bool:
    return message.role.strip().lower() in roles


def texts_of(messages: Iterable[Message], roles: frozenset[str]) -> list[str]:
    """The non-empty contents of the messages whose role is in ``roles``, in conversation order."""
    return [m.content for m in messages if m.content and has_role(m, roles)]


def as_text(value: Any) -> str | None:
    """A case's ``input``/``output`` as text: strings as they are, structures as JSON, missing or empty as None."""
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text or None
