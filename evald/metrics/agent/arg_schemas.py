"""Assay's v2.0 argument policies for ``args_valid``: a ``schemas:`` map (tool name -> JSON Schema of its
arguments, with shared definitions under ``schemas.$defs``), tool filtering (``tools: {allow: [...], deny:
[...]}``) and ``enforcement.unconstrained_tools``.

Schemas are checked when the config loads (a schema that is not valid JSON Schema, or a ``$ref`` that leaves the
policy document, is a config error naming the tool) and compiled once per metric. A ``$ref`` resolves against the
policy document, as in Assay (``#/schemas/$defs/safe_path``); remote references are refused. The draft is the
schema's own ``$schema``, else 2020-12. Validation uses ``jsonschema`` (format assertions off, as the spec's
default).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal

import jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from pydantic import BeforeValidator, Field

from evald.config.base import ComponentConfig

DEFS = "$defs"
GlobList = Annotated[list[str], BeforeValidator(lambda v: [v] if isinstance(v, str) else v)]


class ToolFilter(ComponentConfig):
    """``tools: {allow, deny}`` of an Assay v2.0 policy (globs; Assay's ``*`` prefix/suffix/contains forms are the
    same in ``fnmatch``)."""

    allow: GlobList | None = Field(None, description="only these tools may be called (unset: any)")
    deny: GlobList = Field(default_factory=list, description="these tools must not be called")


class Enforcement(ComponentConfig):
    unconstrained_tools: Literal["warn", "deny", "allow"] = Field(
        "warn", description="a call to a tool with no schema or argument policy: `deny` is a violation; `warn` and "
        "`allow` let it pass (evald has no warnings)",
    )


def check_schemas(schemas: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming the tool whose schema is not usable."""
    for tool, schema in schemas.items():
        if not isinstance(schema, (Mapping, bool)):
            raise ValueError(f"schemas.{tool}: a JSON Schema must be an object or a boolean")
        if tool == DEFS:
            continue
        try:
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            cls.check_schema(schema)  # type: ignore[arg-type]  # a boolean is a schema too
        except SchemaError as err:
            where = "/".join(str(p) for p in err.path)
            raise ValueError(f"schemas.{tool}: not a valid JSON Schema{f' at {where}' if where else ''}: "
                             f"{err.message}") from None
        for ref in _refs(schema):
            if not ref.startswith("#"):
                raise ValueError(f"schemas.{tool}: $ref {ref!r} is not local (only '#/...' references inside the "
                                 "policy are allowed)")
    for ref in _refs(schemas.get(DEFS, {})):
        if not ref.startswith("#"):
            raise ValueError(f"schemas.$defs: $ref {ref!r} is not local")


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def compile_schemas(schemas: Mapping[str, Any]) -> dict[str, Validator]:
    """A validator per tool, each rooted in the policy document (``{"schemas": ...}``) so ``#/schemas/...``
    references resolve as in Assay."""
    out: dict[str, Validator] = {}
    for tool, schema in schemas.items():
        if tool == DEFS:
            continue
        pointer = tool.replace("~", "~0").replace("/", "~1")
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        root: dict[str, Any] = {"schemas": dict(schemas), "$ref": f"#/schemas/{pointer}"}
        if isinstance(schema, Mapping) and "$schema" in schema:
            root["$schema"] = schema["$schema"]
        out[tool] = cls(root)
    return out


def schema_problems(validator: Validator, arguments: Any) -> list[tuple[str | None, Any, str, str]]:
    """(argument, value, constraint, message) per schema error, in a stable order (by path, then keyword)."""
    errors = sorted(validator.iter_errors(arguments), key=lambda e: ([str(p) for p in e.path], str(e.validator)))
    out = []
    for err in errors:
        argument = ".".join(str(p) for p in err.path) or None
        constraint = f"{err.validator}: {_short(err.validator_value)}"
        out.append((argument, err.instance, constraint, err.message))
    return out


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:80] + "…"
