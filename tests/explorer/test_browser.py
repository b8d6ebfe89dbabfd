"""The explorer in a real browser: headless Chromium (Debian package `chromium`) against a running `evald run` fed
with corpus traces over OTLP/HTTP: the list, a filter submitted as the page's form submits it, a failing case
opened from the list, and its trace link followed to a stand-in trace backend. No DevTools protocol: the browser
dumps the DOM it rendered (`--dump-dom`) and takes screenshots (`--screenshot`).

With EVALD_EXPLORER_SCREENSHOTS=<dir> the screenshots are also copied there (docs/images/ holds the checked-in
ones: `EVALD_EXPLORER_SCREENSHOTS=docs/images python3 -m pytest tests/explorer/test_browser.py`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import httpx
import pytest

from tests.integration.daemon import Daemon

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "testdata" / "corpus" / "openinference-openai"
SCENARIOS = ("a_chat_correct", "b_chat_wrong", "c_tool_call", "e_pii", "f_error", "g_embeddings")
CONFIG = """
assembly: {{ settle: 100ms, decision_wait: 2s }}
metrics:
  - {{ kind: error_free, scope: all }}
  - {{ kind: contains, scope: trace, options: {{ values: ["Paris"] }} }}
  - {{ kind: pii_leak, scope: trace }}
pipeline: {{ workers: 2, shutdown_timeout: 5s }}
explorer:
  trace_url_template: "http://127.0.0.1:{port}/trace/{{trace_id}}?span={{span_id}}"
"""


class _TraceBackend(BaseHTTPRequestHandler):
    """A stand-in for Tempo/Jaeger: answers /trace/<id> with a page naming the trace."""

    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.seen.append(self.path)
        trace_id = urlsplit(self.path).path.rpartition("/")[2]
        body = f"<html><body><h1 id=trace>trace {trace_id}</h1></body></html>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def backend() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _TraceBackend)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


class Browser:
    def __init__(self, tmp: Path) -> None:
        exe = shutil.which("chromium")
        assert exe is not None, "headless Chromium is needed: apt-get install -y chromium"
        self.exe = exe
        self.profile = tmp / "chromium-profile"

    def _run(self, *args: str) -> str:
        result = subprocess.run(
            [self.exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             f"--user-data-dir={self.profile}", "--window-size=1280,900", *args],
            capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr[-2000:]
        return result.stdout

    def dom(self, url: str) -> str:
        return self._run("--dump-dom", url)

    def screenshot(self, url: str, path: Path) -> None:
        self._run(f"--screenshot={path}", "--hide-scrollbars", url)
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


class _Page(HTMLParser):
    """Links (href, class, text) and the filter form's field names, from a dumped DOM."""

    def __init__(self, dom: str) -> None:
        super().__init__()
        self.links: list[tuple[str, str, str]] = []
        self.fields: list[str] = []
        self.rows = 0
        self._href: tuple[str, str] | None = None
        self.feed(dom)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "a":
            self._href = (a.get("href", ""), a.get("class", ""))
        elif tag in ("input", "select") and "name" in a:
            self.fields.append(a["name"])
        elif tag == "tr" and a.get("class") in ("failing", "row"):
            self.rows += 1

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self.links.append((*self._href, data))
            self._href = None


def send_corpus(daemon: Daemon) -> None:
    for name in SCENARIOS:
        body = (CORPUS / f"{name}.pb").read_bytes()
        response = httpx.post(f"http://127.0.0.1:{daemon.http_port}/v1/traces", content=body,
                              headers={"Content-Type": "application/x-protobuf"}, timeout=5)
        assert response.status_code == 200, response.text


def wait_listed(base: str, count: int, timeout: float = 15.0, quiet: float = 1.0) -> list[dict[str, object]]:
    """The records once at least ``count`` are listed and nothing changed for ``quiet`` seconds (a trace's
    trace-scope and llm_call-scope cases arrive separately)."""
    deadline = time.monotonic() + timeout
    items: list[dict[str, object]] = []
    stable_since = time.monotonic()
    while time.monotonic() < deadline:
        current = httpx.get(f"{base}/debug/evaluations/api/evaluations", timeout=2).json()["items"]
        if current != items:
            items, stable_since = current, time.monotonic()
        elif len(items) >= count and time.monotonic() - stable_since >= quiet:
            return items
        time.sleep(0.1)
    raise AssertionError(f"{len(items)} records listed, still changing or fewer than {count}: {items}")


def test_explorer_in_headless_chromium(tmp_path: Path, backend: ThreadingHTTPServer) -> None:
    browser = Browser(tmp_path)
    daemon = Daemon(tmp_path, CONFIG.format(port=backend.server_address[1]))
    shots = tmp_path / "shots"
    shots.mkdir()
    with daemon:
        base = daemon.metrics_url
        send_corpus(daemon)
        items = wait_listed(base, len(SCENARIOS))

        # the list: every evaluation with its outcomes, failing ones marked
        page = browser.dom(f"{base}/debug/evaluations")
        listing = _Page(page)
        assert listing.rows == len(items) and "contains: fail" in page and "contains: pass" in page
        assert {"metric", "outcome", "service", "model", "scope", "since", "until", "last"} <= set(listing.fields)
        browser.screenshot(f"{base}/debug/evaluations", shots / "explorer-list.png")

        # filter: the query the form's GET submit sends (every field, the unused ones empty)
        query = {name: "" for name in listing.fields} | {"metric": "contains", "outcome": "fail"}
        filtered_url = f"{base}/debug/evaluations?{urlencode(query)}"
        filtered = browser.dom(filtered_url)
        failing = _Page(filtered)
        expected = [i for i in items if i["outcomes"].get("contains") == "fail"]  # type: ignore[attr-defined]
        assert expected and failing.rows == len(expected)
        assert "contains: pass" not in filtered and "contains: fail" in filtered
        browser.screenshot(filtered_url, shots / "explorer-filtered.png")

        # open a failing case from the filtered list: the wrong answer (Saturn) and why it failed
        wrong = next(i for i in expected if "Saturn" in str(httpx.get(f"{base}{i['api_url']}", timeout=2).json()))
        case_links = [href for href, cls, text in failing.links if cls == "case" and text == str(wrong["id"])]
        assert case_links == [f"/debug/evaluations/case/{wrong['id']}"]
        case = browser.dom(f"{base}{case_links[0]}")
        assert "Saturn" in case and "missing" in case.lower() and "Paris" in case
        assert re.search(r"<td>\s*0\.000\s*</td>\s*<td>\s*1\.000\s*</td>", case)  # value and threshold
        assert str(wrong["trace_id"]) in case
        browser.screenshot(f"{base}{case_links[0]}", shots / "explorer-case.png")

        # the PII case's content is redacted in the page (the judges' redaction)
        pii = next(i for i in items if i["outcomes"].get("pii_leak") == "fail")  # type: ignore[attr-defined]
        pii_page = browser.dom(f"{base}/debug/evaluations/case/{pii['id']}")
        assert "[EMAIL_1]" in pii_page and not re.search(r"[\w.]+@[\w-]+\.\w+", pii_page.replace("[EMAIL_", ""))

        # follow the trace link to the (stand-in) trace backend
        trace_links = [href for href, cls, _ in _Page(case).links if cls == "trace"]
        assert len(trace_links) == 1 and str(wrong["trace_id"]) in trace_links[0]
        assert f"trace {wrong['trace_id']}" in browser.dom(trace_links[0])
        assert any(str(wrong["trace_id"]) in path for path in _TraceBackend.seen)
    assert daemon.proc is not None and daemon.proc.returncode == 0, daemon.log()[-3000:]
    if target := os.environ.get("EVALD_EXPLORER_SCREENSHOTS"):
        for shot in shots.iterdir():
            shutil.copy(shot, Path(target) / shot.name)
