"""Print a field-by-field table: how the corpus maps through evald's default mappers vs. manifest ground truth.

Usage (from the repository root)::

    python -m tests.corpus_table [PREFIX ...] [-v]
    python tests/corpus_table.py otel-openai-v2 -v

PREFIX filters manifest entries by instrumentation (default: all). Cells: ``ok`` match, ``~`` accepted near-miss
(the trace input is the whole prompt the app sent rather than the user's question), ``X`` mismatch, ``-`` not
applicable. ``-v`` prints expected/actual for every mismatch.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _path in (_HERE.parent, _HERE / "mapping"):  # works both as a module and as a script
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from corpus_loader import FIELDS, Check, FileReport, manifest_files, map_file  # noqa: E402

_SHORT = {"evaluable": "eval", "input": "in", "output": "out", "model": "model", "request_model": "req_model",
          "input_tokens": "tok_in", "output_tokens": "tok_out", "tool_calls": "tools", "tool_results": "tool_res",
          "error": "error", "system_prompt": "system", "doc_ids_scores": "doc_ids", "doc_content": "doc_text",
          "llm_calls": "calls"}


def _cell(check: Check | None) -> str:
    if check is None or check.ok is None:
        return "-"
    if check.partial:
        return "~"
    return "ok" if check.ok else "X"


def render(reports: list[FileReport], verbose: bool = False) -> str:
    names = [f"{r.entry['instrumentation']}/{r.entry['scenario']}" for r in reports]
    width = max((len(n) for n in names), default=10)
    header = " ".join(f"{_SHORT[f]:>{max(len(_SHORT[f]), 2)}}" for f in FIELDS)
    lines = [f"{'file':<{width}} {header}"]
    totals = {f: [0, 0] for f in FIELDS}
    for name, report in zip(names, reports, strict=True):
        cells = []
        for field in FIELDS:
            check = report.checks.get(field)
            cells.append(f"{_cell(check):>{max(len(_SHORT[field]), 2)}}")
            if check is not None and check.ok is not None:
                totals[field][0] += bool(check.ok) and not check.partial
                totals[field][1] += 1
        lines.append(f"{name:<{width}} {' '.join(cells)}")
    summary = " ".join(f"{f'{ok}/{n}':>{max(len(_SHORT[f]), 2)}}" for f, (ok, n) in totals.items())
    lines.append(f"{'exact matches':<{width}} {summary}")
    if verbose:
        for name, report in zip(names, reports, strict=True):
            for check in report.checks.values():
                if check.ok is False or check.partial:
                    lines.append(f"  {name} {check.field}: expected {check.expected!r} got {check.actual!r}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    prefixes = [a for a in argv if not a.startswith("-")] or [""]
    entries = [e for p in prefixes for e in manifest_files(p)]
    print(render([map_file(e) for e in entries], verbose))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
