"""Assay policy files and tool aliases for ``sequence_valid``.

An Assay policy file (``version``, ``name``, ``sequences: [<rule>...]``, ``aliases: {<name>: [<tool>...]}``, and
the argument-policy keys ``args_valid`` reads) gives ``sequence_valid`` its rules: ``policy_file: <path>`` reads
``sequences`` and ``aliases`` from it (its other keys belong to ``args_valid`` and are left alone); rules listed
inline under ``rules`` are checked after the file's. An alias stands for its member tools wherever a rule names a
tool (``tool``, ``first``, ``then``, ``tools``, ``trigger``, ``forbidden``, each step of a ``sequence``), as in
Assay; a name that is no alias is kept as written (a glob). ``blocklist``'s ``pattern`` (a substring) is not
resolved, as in Assay. An unreadable file is a config error naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evald.metrics.agent.trajectory import read_policy_yaml

_TOOL_FIELDS = ("tool", "first", "then", "tools", "trigger", "forbidden")


def load_rules(data: Mapping[str, Any]) -> dict[str, Any]:
    """Raw ``sequence_valid`` options with the policy file's rules and aliases merged in and aliases resolved."""
    out = dict(data)
    path = out.get("policy_file")
    rules = list(out.get("rules") or [])
    aliases = dict(out.get("aliases") or {})
    if isinstance(path, str) and path:
        doc = read_policy_yaml(path, "a 'sequences' key")
        sequences, file_aliases = doc.get("sequences") or [], doc.get("aliases") or {}
        if not isinstance(sequences, list) or not isinstance(file_aliases, dict):
            raise ValueError(f"policy file {path!r}: `sequences` must be a list and `aliases` a mapping")
        rules = [*sequences, *rules]
        aliases = {**file_aliases, **aliases}
    if aliases:
        rules = [_resolve(rule, aliases) for rule in rules]
    out["rules"] = rules
    return out


def _resolve(rule: Any, aliases: Mapping[str, Any]) -> Any:
    if not isinstance(rule, Mapping):
        return rule
    out = dict(rule)
    for name in _TOOL_FIELDS:
        if name not in out:
            continue
        if out.get("type") == "sequence" and name == "tools" and isinstance(out[name], list):
            out[name] = [_expand(step, aliases) for step in out[name]]
        else:
            out[name] = _expand(out[name], aliases)
    return out


def _expand(value: Any, aliases: Mapping[str, Any]) -> Any:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not any(isinstance(n, str) and n in aliases for n in names):
        return value
    out: list[Any] = []
    for name in names:
        members = aliases.get(name) if isinstance(name, str) else None
        out += ([members] if isinstance(members, str) else list(members)) if members is not None else [name]
    return out
