"""Suggestions ("did you mean") for config names: unknown keys, option names, metric kinds and component types.

``close_matches(word, choices)`` gives at most ``n`` known names near ``word``: difflib's close matches (typos,
swapped letters) first, then rapidfuzz's ``WRatio`` above 80 (a prefix or part of a longer name: ``tool_call`` ->
``tool_called``). ``did_you_mean`` turns them into the suffix every config message uses. Pure; no configuration.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

_DIFFLIB_CUTOFF = 0.6
_PARTIAL_CUTOFF = 80.0


def close_matches(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` names from ``choices`` near ``word``, best first; empty when none is near."""
    known = sorted(set(choices))
    close = difflib.get_close_matches(word, known, n=n, cutoff=_DIFFLIB_CUTOFF)
    from rapidfuzz import fuzz, process  # only when a config has a misspelt name: not at every start-up

    found = process.extract(word, known, scorer=fuzz.WRatio, limit=n, score_cutoff=_PARTIAL_CUTOFF)
    return list(dict.fromkeys([*close, *(name for name, _, _ in found)]))[:n]


def did_you_mean(word: str, choices: Iterable[str], n: int = 3) -> str:
    """``"; did you mean 'a' or 'b'?"`` for the names near ``word``, or ``""``."""
    close = close_matches(word, choices, n)
    if not close:
        return ""
    quoted = [repr(name) for name in close]
    alternatives = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return f"; did you mean {alternatives}?"
