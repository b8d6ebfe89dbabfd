"""Judges know prompts, providers and governance, nothing of metrics or the pipeline (issue 17, Design).

Static: every ``import`` in ``evald/judges/`` (including those inside functions and ``TYPE_CHECKING`` blocks) is
parsed with ``ast``, and so is every evald module they reach in turn; none of them may be ``evald.metrics`` or
``evald.pipeline`` (or a module under them). The walk does not go on through ``evald.telemetry``: that is the
service's self-metrics module (it defines instruments for every component, the pipeline's queue histogram among
them); judges use only its ``shared_instruments``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("evald.metrics", "evald.pipeline")
#: reached, but not walked through (see the module docstring)
NOT_WALKED = frozenset({"evald.telemetry"})


def module_file(name: str) -> Path | None:
    base = ROOT / Path(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported(path: Path, module: str) -> set[str]:
    """The evald modules ``path`` (module ``module``) imports, relative imports resolved; a ``from a import b``
    counts ``a`` and ``a.b`` when ``a.b`` is a module."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names if module_file(f"{base}.{alias.name}")}
    return {name for name in found if name == "evald" or name.startswith("evald.")}


def reachable_from_judges() -> dict[str, str]:
    """Every evald module reachable from ``evald/judges/*.py`` -> the module that imports it first."""
    start = {f"evald.judges.{p.stem}" for p in (ROOT / "evald" / "judges").glob("*.py") if p.stem != "__init__"}
    seen: dict[str, str] = {name: "" for name in start}
    todo = sorted(start)
    while todo:
        name = todo.pop()
        path = module_file(name)
        if path is None or name in NOT_WALKED:
            continue
        for target in sorted(imported(path, name)):
            parents = [".".join(target.split(".")[:i]) for i in range(2, target.count(".") + 2)]
            for each in parents:  # importing a.b.c runs a.b's __init__ too
                if each not in seen:
                    seen[each] = name
                    todo.append(each)
    return seen


def forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def test_the_judges_import_nothing_of_the_metrics_or_the_pipeline() -> None:
    direct = {
        (p.name, target)
        for p in (ROOT / "evald" / "judges").glob("*.py")
        for target in imported(p, f"evald.judges.{p.stem}")
        if forbidden(target)
    }
    assert direct == set()


def test_nor_does_any_module_they_reach() -> None:
    reached = reachable_from_judges()
    assert "evald.judges.limiter" in reached and "evald.pricing" in reached  # the walk does follow imports
    assert {name: by for name, by in reached.items() if forbidden(name)} == {}


def test_the_check_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from evald.metrics.registry import get_metric_class\n"
                     "    from ..pipeline import y\n")
    assert {t for t in imported(probe, "evald.judges.probe") if forbidden(t)} == {
        "evald.metrics.registry", "evald.pipeline",
    }
