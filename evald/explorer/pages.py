"""Server-rendered HTML of the explorer: the list page and the case page (no scripts, no external assets).

Every value that comes from a trace or the config goes through ``html.escape`` (attributes quoted), and links are
built with ``urllib.parse`` from the explorer's own paths or the validated http(s) ``trace_url_template``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import urlencode

from evald.explorer.store import OUTCOMES, Entry
from evald.explorer.views import API, BASE, Filters, iso

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.2em;color:#1d1d1f;background:#fafafa}
h1{font-size:1.3em;margin:.2em 0}h2{font-size:1.1em;margin:1.2em 0 .4em}
a{color:#0b5cad}table{border-collapse:collapse;width:100%;background:#fff}
th,td{border:1px solid #ddd;padding:.3em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f3}code,pre{font:12px/1.35 ui-monospace,monospace}
pre{white-space:pre-wrap;word-break:break-word;margin:0;max-height:24em;overflow:auto}
form{display:flex;flex-wrap:wrap;gap:.5em;align-items:end;margin:.6em 0}
label{display:flex;flex-direction:column;font-size:12px;color:#555}
.b{display:inline-block;padding:0 .45em;border-radius:.6em;font-size:12px;margin:1px;color:#fff}
.pass{background:#2e7d32}.fail{background:#c62828}.skipped{background:#757575}.error{background:#ef6c00}
.not_evaluable{background:#6a1b9a}.note{color:#555;font-size:12px}
"""


def _page(title: str, body: str) -> str:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
            f"<meta name=viewport content='width=device-width'><style>{_CSS}</style></head><body>{body}</body></html>")


def _badge(label: str, outcome: str) -> str:
    return f"<span class='b {escape(outcome)}'>{escape(label)}</span>"


def _link(href: str, text: str, cls: str = "") -> str:
    extra = f" class='{escape(cls)}'" if cls else ""
    return f"<a href='{escape(href)}'{extra}>{escape(text)}</a>"


def _options(name: str, label: str, values: Iterable[str], current: str | None) -> str:
    opts = ["<option value=''>any</option>"]
    for value in sorted(set(values)):
        selected = " selected" if value == current else ""
        opts.append(f"<option value='{escape(value)}'{selected}>{escape(value)}</option>")
    return f"<label>{escape(label)}<select name='{escape(name)}'>{''.join(opts)}</select></label>"


def list_page(entries: Sequence[Entry], shown: Sequence[Entry], matched: int, filters: Filters,
              stats: Mapping[str, Any], trace_links: Mapping[int, str | None]) -> str:
    metrics = {m for e in entries for m in e.outcomes}
    form = "".join([
        f"<form method=get action='{BASE}' id=filters>",
        _options("metric", "metric", metrics, filters.metric),
        _options("outcome", "outcome", OUTCOMES, filters.outcome),
        _options("service", "service", (e.service for e in entries if e.service), filters.service),
        _options("model", "model", (e.model for e in entries if e.model), filters.model),
        _options("scope", "scope", (e.scope for e in entries), filters.scope),
        f"<label>since<input name=since size=20 value='{escape(filters.query().get('since', ''))}'></label>",
        f"<label>until<input name=until size=20 value='{escape(filters.query().get('until', ''))}'></label>",
        "<label>last<input name=last size=5 placeholder=15m></label>",
        "<button type=submit>filter</button>", _link(BASE, "clear"), "</form>",
    ])
    rows = []
    for entry in shown:
        if entry.not_evaluable is not None:
            outcome = _badge(f"not evaluable: {entry.not_evaluable.reason}", "not_evaluable")
        else:
            outcome = " ".join(_badge(f"{m}: {o}", o) for m, o in sorted(entry.outcomes.items()))
        trace = trace_links.get(entry.id)
        rows.append(
            f"<tr class='{'failing' if entry.failing else 'row'}'>"
            f"<td>{_link(f'{BASE}/case/{entry.id}', str(entry.id), 'case')}</td>"
            f"<td>{escape(_time(entry.received))}</td><td>{outcome}</td><td>{escape(entry.service or '')}</td>"
            f"<td>{escape(entry.model or '')}</td><td>{escape(entry.scope)}</td><td><code>{escape(entry.trace_id)}"
            f"</code>{' ' + _link(trace, 'trace', 'trace') if trace else ''}</td></tr>")
    api = f"{API}/evaluations?{urlencode(filters.query())}"
    body = "".join([
        "<h1>evald: recent evaluations</h1>",
        f"<p class=note>{matched} matching of {stats['items']} kept ({stats['failing_items']} failing; "
        f"{stats['bytes'] // 1024} KiB of {stats['max_bytes'] // 1024} KiB, at most {stats['max_items']} records). "
        f"Showing {len(shown)}. {_link(api, 'JSON')}</p>",
        form,
        "<table id=evaluations><tr><th>#</th><th>received (UTC)</th><th>outcome</th><th>service</th><th>model</th>"
        "<th>scope</th><th>trace</th></tr>", "".join(rows), "</table>",
        "" if rows else "<p id=empty>No evaluation matches.</p>",
    ])
    return _page("evald evaluations", body)


def _time(seconds: float) -> str:
    return iso(seconds).replace("T", " ").rstrip("Z")


def _value(value: Any) -> str:
    if value is None or value == "" or value == [] or value == {}:
        return "<span class=note>-</span>"
    if isinstance(value, str):
        return f"<pre>{escape(value)}</pre>"
    if isinstance(value, (bool, int, float)):
        return escape(str(value))
    return f"<pre>{escape(json.dumps(value, indent=1, ensure_ascii=False, default=str))}</pre>"


def case_page(rec: Mapping[str, Any]) -> str:
    title = f"evaluation {rec['id']}"
    parts = [f"<p>{_link(BASE, '← all evaluations')}</p><h1>{escape(title)}</h1>"]
    ids = [("trace id", rec["trace_id"]), ("span id", rec.get("span_id")), ("scope", rec["scope"]),
           ("service", rec.get("service")), ("model", rec.get("model")), ("received", rec["received"])]
    parts.append("<table id=ids>" + "".join(f"<tr><th>{escape(k)}</th><td><code>{escape(str(v or ''))}</code></td></tr>"
                                           for k, v in ids) + "</table>")
    links = [_link(rec["api_url"], "JSON")]
    if rec.get("trace_url"):
        links.insert(0, _link(rec["trace_url"], "open the trace", "trace"))
    parts.append(f"<p>{' · '.join(links)}</p>")
    if rec.get("redacted"):
        counts = ", ".join(f"{k}: {v}" for k, v in sorted(rec.get("redactions", {}).items())) or "nothing found"
        parts.append(f"<p class=note id=redacted>Content redacted as for judges ({escape(counts)}); "
                     "explorer.show_content: true shows raw content.</p>")
    if "not_evaluable" in rec and "case" not in rec:
        ne = rec["not_evaluable"]
        parts.append("<h2>Not evaluable</h2><table id=not-evaluable>" + "".join(
            f"<tr><th>{escape(k)}</th><td>{_value(ne.get(k))}</td></tr>"
            for k in ("reason", "convention", "detail", "scope", "span_id")) + "</table>")
    if "scores" in rec:
        rows = []
        for s in rec["scores"]:
            outcome = "pass" if s["passed"] else "fail"
            rows.append(
                f"<tr class='score {outcome}-row'><td>{escape(s['name'])}</td><td>{_badge(outcome, outcome)}</td>"
                f"<td>{s['value']:.3f}</td><td>{s['threshold']:.3f}</td><td>{escape(s['dimension'])}</td>"
                f"<td>{_value(s['reason'])}</td><td>{_value(s.get('explanation'))}</td>"
                f"<td>{_value(s['metadata'])}</td></tr>")
        parts.append("<h2>Scores</h2><table id=scores><tr><th>metric</th><th>outcome</th><th>value</th>"
                     "<th>threshold</th><th>dimension</th><th>reason</th><th>judge explanation</th><th>metadata</th>"
                     "</tr>" + "".join(rows) + "</table>")
        for key, heading in (("skipped", "Skipped metrics"), ("errors", "Errors")):
            if rec[key]:
                parts.append(f"<h2>{heading}</h2><table id={key}><tr><th>metric</th><th>reason</th></tr>" + "".join(
                    f"<tr><td>{escape(x['metric'])}</td><td>{_value(x['reason'])}</td></tr>" for x in rec[key])
                    + "</table>")
        case = rec["case"]
        parts.append("<h2>Case</h2><table id=case>" + "".join(
            f"<tr><th>{escape(k)}</th><td>{_value(v)}</td></tr>" for k, v in case.items()) + "</table>")
    return _page(title, "".join(parts))


def error_page(status: int, message: str) -> str:
    links = _link(BASE, "all evaluations")
    return _page(f"evald: {status}", f"<h1>{status}</h1><p>{escape(message)}</p><p>{links}</p>")
