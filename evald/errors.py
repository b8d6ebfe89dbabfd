"""evald's error hierarchy.

::

    EvaldError
    ├── ConfigError          invalid configuration; carries every problem with its YAML path
    ├── PermanentError       bad data or a request that will never succeed: refused, not retried
    ├── QueueFullError       a bounded buffer is full: retryable after ``retry_after`` seconds
    └── MissingExtraError    an optional dependency is not installed
"""

from __future__ import annotations


class EvaldError(Exception):
    """Base class of every error evald raises on purpose."""


class ConfigError(EvaldError):
    """The configuration is invalid. ``problems`` holds ``(yaml_path, message)`` pairs."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__(self.report())

    def report(self) -> str:
        lines = [f"invalid configuration ({len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}):"]
        lines += [f"  {path or '<root>'}: {message}" for path, message in self.problems]
        return "\n".join(lines)


class PermanentError(EvaldError):
    """The input is bad and retrying will not help (INVALID_ARGUMENT / HTTP 400)."""


class QueueFullError(EvaldError):
    """A bounded buffer is full; the caller may retry after ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class MissingExtraError(EvaldError):
    """An optional dependency is missing; the message says which extra to install."""

    def __init__(self, extra: str) -> None:
        super().__init__(f"this feature needs an optional dependency: pip install 'evald[{extra}]'")
        self.extra = extra
