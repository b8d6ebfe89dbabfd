"""Regex option types, checked when the config is loaded (shared by metric options and judge configs)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as err:
        raise ValueError(f"invalid regular expression {pattern!r}: {err}") from err
    return pattern


#: an option value that must be a valid Python regex (checked when the config is loaded)
Pattern = Annotated[str, AfterValidator(_compiles)]
#: the same, non-empty
Regex = Annotated[Pattern, Field(min_length=1)]
