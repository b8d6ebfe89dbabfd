"""``evald replay`` inputs (evald/replay.py): which paths fail and why, what is only skipped, and why 0 cases."""

from __future__ import annotations

import asyncio
import ctypes
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from evald.config.loader import ResolvedConfig, parse_config
from evald.replay import ReplayResult, discover, no_cases_reason, replay
from tests.receivers.support import logs_request

SPAN_ONLY = Path(__file__).resolve().parent / "testdata" / "corpus" / "otel-openai-v2.span_only"
NOBODY = 65534
T = TypeVar("T")

CONFIG = """
receivers: {}
exporters: {}
assembly: { settle: 0s, decision_wait: 1s }
metrics: [{ kind: error_free, scope: trace }]
"""


@pytest.fixture(scope="module")
def config() -> ResolvedConfig:
    return parse_config(CONFIG, environ={})


def as_another_user(fn: Callable[[], T]) -> T:
    """``fn()`` with file permissions checked as an unprivileged user. As root, in a thread whose filesystem uid is
    ``nobody`` (setfsuid is per thread on Linux and drops CAP_DAC_OVERRIDE for that thread only); otherwise the
    caller already is unprivileged."""
    if os.geteuid() != 0:
        return fn()
    libc = ctypes.CDLL(None, use_errno=True)
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        libc.setfsuid(NOBODY)
        try:
            if libc.setfsuid(-1) != NOBODY:  # -1 changes nothing and returns the current fsuid
                raise RuntimeError("setfsuid did not take effect")
            results.append(fn())
        except BaseException as err:  # re-raised in the caller
            errors.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    if errors:
        raise errors[0]
    return results[0]


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory others may enter (pytest's tmp_path sits under a root-only directory)."""
    path = Path(tempfile.mkdtemp(prefix="evald-replay-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for sub in path.rglob("*"):
            if sub.is_dir() and not sub.is_symlink():
                sub.chmod(0o755)
        shutil.rmtree(path)


def test_missing_dangling_looping_and_special_paths_fail_with_their_reason(tmp_path: Path) -> None:
    (tmp_path / "dangling.pb").symlink_to(tmp_path / "gone.pb")
    (tmp_path / "loop_a.pb").symlink_to(tmp_path / "loop_b.pb")
    (tmp_path / "loop_b.pb").symlink_to(tmp_path / "loop_a.pb")
    os.mkfifo(tmp_path / "pipe.pb")
    names = ("missing.pb", "dangling.pb", "loop_a.pb", "pipe.pb")
    found = discover([tmp_path / name for name in names])
    failed = dict(found.failed)
    assert found.files == [] and found.skipped == []
    assert failed[str(tmp_path / "missing.pb")] == "no such file or directory"
    assert failed[str(tmp_path / "dangling.pb")] == f"dangling symlink (to {tmp_path / 'gone.pb'})"
    assert failed[str(tmp_path / "loop_a.pb")] == "cannot access: Too many levels of symbolic links"
    assert failed[str(tmp_path / "pipe.pb")] == "not a regular file or a directory"


def test_a_directory_is_walked_in_order_and_other_files_are_only_noted(tmp_path: Path) -> None:
    for name in ("b/2.pb", "b/1.json", "a/3.pb", "top.logs.pb", "notes/README.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "a" / "dangling.json").symlink_to(tmp_path / "nowhere.json")
    found = discover([tmp_path])
    assert [p.relative_to(tmp_path).as_posix() for p in found.files] == ["a/3.pb", "b/1.json", "b/2.pb", "top.logs.pb"]
    assert found.skipped == [(str(tmp_path / "notes" / "README.md"), "not an OTLP file (.pb or .json)")]
    dangling = tmp_path / "a" / "dangling.json"
    assert found.failed == [(str(dangling), f"dangling symlink (to {tmp_path / 'nowhere.json'})")]


def test_unreadable_files_and_unlistable_directories_fail_and_the_rest_is_scored(
    shared_dir: Path, config: ResolvedConfig
) -> None:
    good = shared_dir / "good.pb"
    good.write_bytes((SPAN_ONLY / "a_chat_correct.pb").read_bytes())
    good.chmod(0o644)
    secret = shared_dir / "secret.pb"
    secret.write_bytes((SPAN_ONLY / "b_chat_wrong.pb").read_bytes())
    secret.chmod(0o600 if os.geteuid() == 0 else 0o000)  # root owns it: only the owner may read
    locked = shared_dir / "locked"
    (locked / "inner").mkdir(parents=True)
    (locked / "inner" / "c.pb").write_bytes((SPAN_ONLY / "c_tool_call.pb").read_bytes())
    nested = shared_dir / "tree"
    (nested / "closed").mkdir(parents=True)
    (nested / "open.pb").write_bytes((SPAN_ONLY / "d_rag.pb").read_bytes())
    nested.chmod(0o755)
    for directory in (locked, nested / "closed"):
        directory.chmod(0o700 if os.geteuid() == 0 else 0o000)
    asyncio.run(replay([good], config))  # imports everything replay needs while they can be read

    result: ReplayResult = as_another_user(lambda: asyncio.run(replay([good, secret, locked, nested], config)))
    failed = dict(result.failed_files)
    assert failed == {
        str(secret): "cannot read: Permission denied",
        str(locked): "cannot list directory: Permission denied",
        str(nested / "closed"): "cannot list directory: Permission denied",
    }
    assert result.files_read == 2  # good.pb and tree/open.pb
    assert len({case.trace_id for case in result.scored}) == 2
    assert no_cases_reason(result) is None


def test_a_file_of_log_records_alone_says_it_held_no_spans(tmp_path: Path, config: ResolvedConfig) -> None:
    path = tmp_path / "only.logs.pb"
    path.write_bytes(logs_request(2).SerializeToString())
    result = asyncio.run(replay([path], config))
    assert result.files_read == 1 and not result.failed_files and not result.scored
    assert no_cases_reason(result) == "the 1 file held no spans (only 2 log records)"


def test_corrupt_files_fail_and_nothing_read_says_so(tmp_path: Path, config: ResolvedConfig) -> None:
    corrupt = tmp_path / "corrupt.pb"
    corrupt.write_bytes(b"\x0a\xff\xff\xff\xff\x0f")  # a length that runs past the end
    empty = tmp_path / "empty.json"
    empty.write_text("{}", encoding="utf-8")
    result = asyncio.run(replay([corrupt, empty], config))
    failed = dict(result.failed_files)
    assert failed[str(corrupt)].startswith("not a binary ExportTraceServiceRequest")
    assert failed[str(empty)] == "not an OTLP/JSON ExportTraceServiceRequest (no resourceSpans)"
    assert no_cases_reason(result) == "no OTLP file was read (2 failed)"


@pytest.mark.parametrize(("scope", "llm_call_cases"), [("trace", 0), ("llm_call", 2), ("all", 2)])
async def test_llm_call_cases_are_built_only_when_a_metric_scores_them(scope: str, llm_call_cases: int) -> None:
    """The tool-calling agent of the span_only capture (four spans, two model calls): one trace case, and an
    ``llm_call`` case per model call only when a metric's scope is ``llm_call`` or ``all`` (else nothing would score
    them: they are not built)."""
    config = parse_config(CONFIG.replace("scope: trace", f"scope: {scope}"), environ={})
    result = await replay([SPAN_ONLY / "c_tool_call.pb"], config)
    built = result.counts.cases
    scored_llm = sum(1 for c in result.scored if c.case.scope == "llm_call")
    assert scored_llm == llm_call_cases
    assert built == llm_call_cases + 1  # evald_cases_total: the trace case always
