"""Chat roles as the mappers and instrumentations spell them, shared by the conversation metrics.

OpenAI-style roles are the norm (``user``, ``assistant``, ``system``/``developer``, ``tool``); LangChain writes
``human``/``ai`` and Gemini ``model``, so those count too. Roles are compared case-insensitively.
"""

from __future__ import annotations

from collections.abc import Iterable

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
