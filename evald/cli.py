"""Command line: ``evald run | validate | list-metrics | replay | version`` (and ``evald --version``).

Exit codes: 0 success; 1 replay gate failed (``--fail-under``) or runtime failure; 2 invalid config or usage, a
config that scores nothing in a role that scores (``metrics: []``), or a replay input that could not be read.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evald import __version__
from evald.config.loader import ResolvedConfig, load_config, scoring_problems
from evald.config.model import ROLES
from evald.errors import ConfigError

if TYPE_CHECKING:
    from evald.replay import ReplayResult

EXIT_GATE = 1
EXIT_CONFIG = 2
#: ``evald replay``: an input path could not be used (after the others were processed and reported)
EXIT_INPUT = 2

logger = logging.getLogger(__name__)


def version_text() -> str:
    from evald.native import COMPILED_MODULES, compiled

    return f"evald {__version__} ({len(compiled())}/{len(COMPILED_MODULES)} hot modules compiled with mypyc)"


class _VersionAction(argparse.Action):
    """``evald --version``: what ``evald version`` prints (argparse's own action takes a fixed string)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(version_text())
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evald", description="OpenTelemetry collector-side evaluation daemon")
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="start the daemon (embedded default config unless --config is given)")
    run.add_argument("-c", "--config", help="YAML config file")
    run.add_argument("--role", choices=ROLES, help="all (default; or `role:` in the config), ingest (OTLP -> Kafka) "
                     "or score (Kafka -> scores); docs/kafka.md")
    val = sub.add_parser("validate", help="check a config file and report every problem")
    val.add_argument("-c", "--config", required=True, help="YAML config file")
    val.add_argument("--role", choices=ROLES, help="also check that the config can run in this role")
    lm = sub.add_parser("list-metrics", help="list every registered metric")
    lm.add_argument("--format", choices=("table", "json"), default="table")
    rp = sub.add_parser("replay", help="score captured OTLP files offline")
    rp.add_argument("paths", nargs="+", help=".pb/.json OTLP files (and *.logs.* companions) or directories")
    rp.add_argument("-c", "--config", help="YAML config file (metrics, assembly...)")
    rp.add_argument("-o", "--output", help="write one JSON line per evaluated case to FILE ('-' for stdout)")
    rp.add_argument("--fail-under", type=float, metavar="X", help="exit 1 when the mean pass rate is below X")
    rp.add_argument("--format", choices=("table", "json"), default="table", help="summary format")
    rp.add_argument("--missing", choices=("skip", "zero"), default="skip",
                    help="a metric that did not apply on a case: leave it out (skip) or count it as a failed 0")
    rp.add_argument("--aggregate", metavar="SCRIPT",
                    help="custom aggregation script with Harbor's metric.py contract (-i rewards.jsonl -o out.json)")
    rp.add_argument("--junit", metavar="FILE", help="write a JUnit XML report (one suite per metric)")
    rp.add_argument("--sarif", metavar="FILE", help="write a SARIF 2.1.0 report (one result per failing score)")
    sub.add_parser("version", help="print the version")
    return parser


def _load(path: str | None) -> ResolvedConfig | None:
    try:
        return load_config(path)
    except ConfigError as err:
        print(err.report(), file=sys.stderr)
        return None


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "version":
        print(version_text())
        return 0
    if args.command == "list-metrics":
        return _list_metrics(args.format)
    if args.command == "validate":
        cfg = _load(args.config)
        if cfg is None or _role_problems(cfg, args.role):
            return EXIT_CONFIG
        print(f"{args.config}: configuration is valid ({_metrics_text(cfg)}, "
              f"receivers: {', '.join(cfg.receivers) or 'none'}, exporters: {', '.join(cfg.exporters) or 'none'})")
        return 0
    if args.command == "run":
        cfg = _load(args.config)
        if cfg is None or _role_problems(cfg, args.role):
            return EXIT_CONFIG
        return _run(cfg, args.role or cfg.root.role)
    if args.command == "replay":
        if args.fail_under is not None and not 0.0 <= args.fail_under <= 1.0:
            print("--fail-under must be within [0, 1]", file=sys.stderr)
            return EXIT_CONFIG
        cfg = _load(args.config)
        if cfg is None or _role_problems(cfg, "all"):  # replay scores: `metrics: []` is refused as by `run`
            return EXIT_CONFIG
        return _replay(args, cfg)
    return EXIT_CONFIG


#: Net allocations (container objects created minus freed) between young-generation collections. The default (700)
#: makes a daemon holding tens of thousands of traces in its window spend a noticeable share of CPU in the cyclic GC;
#: evald's data is acyclic and freed by reference counting. Measured on the e2e benchmark: 50,000 still cost ~4.5%
#: of the CPU (each collection walked the window's live records); at 200,000 the steady state (records freed as
#: fast as they arrive) rarely reaches a collection (GC ~0.7% of the CPU, peak RSS unchanged).
GC_GEN0_THRESHOLD = 200_000


def tune_gc() -> None:
    """Move everything alive after startup (modules, config, servers) out of the collector's view and make young
    collections rarer: the usual tuning for long-running Python servers."""
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)


def _metrics_text(cfg: ResolvedConfig) -> str:
    if cfg.default_metrics:
        return f"{len(cfg.metrics)} metrics [the default set, as there is no `metrics` key: {_kinds(cfg)}]"
    return f"{len(cfg.metrics)} metrics"


def _kinds(cfg: ResolvedConfig) -> str:
    return ", ".join(spec.name or spec.kind for spec in cfg.metrics)


def _role_problems(cfg: ResolvedConfig, role: str | None) -> bool:
    """Print why ``cfg`` cannot run as ``role`` (``--role``, else ``role:`` in the config); True if it cannot.

    Besides what the role needs (evald/ingest/roles.py), a role that scores refuses ``metrics: []``."""
    from evald.ingest.roles import role_problems

    role = role or cfg.root.role
    problems = role_problems(cfg, role) + scoring_problems(cfg, role)
    if problems:
        print(ConfigError(problems).report(), file=sys.stderr)
    return bool(problems)


def _run(cfg: ResolvedConfig, role: str = "all") -> int:
    from evald.logsetup import configure_logging
    from evald.service import EvaldService

    configure_logging(cfg.root.telemetry.logs.level, cfg.root.telemetry.logs.format)
    from evald.receivers.connection_limits import raise_open_file_limit

    raise_open_file_limit()  # as Go programs do: the listeners' auto caps follow the larger limit
    if cfg.default_metrics and role != "ingest":
        logger.info("no metrics configured: using the default metric set: %s", _kinds(cfg))

    async def serve() -> None:
        if role == "ingest":
            from evald.ingest.roles import IngestService

            service: EvaldService = IngestService(cfg)
        else:
            service = EvaldService(cfg, role=role)
        try:
            await service.start()
        except Exception:
            await service.shutdown()
            raise
        tune_gc()
        await service.run_until_stopped()

    try:
        asyncio.run(serve())
    except OSError as err:
        print(f"evald: cannot start: {err}", file=sys.stderr)
        return 1
    return 0


def _replay(args: argparse.Namespace, cfg: ResolvedConfig) -> int:
    """Replay, report, gate; an input that could not be used makes it exit 2 after all of that."""
    from evald.logsetup import configure_logging
    from evald.replay import replay

    configure_logging("warning", "text")
    holder: list[ReplayResult] = []

    async def main() -> None:
        # the coroutine asyncio.run runs returns nothing: at the end of asyncio.run, Python 3.11's signal handling
        # formats the runner's main task with repr(), and the repr of a finished task includes its result (every
        # scored case of the replay: ~1 s per 18k spans measured)
        holder.append(await replay(args.paths, cfg, args.missing))

    # The replay holds every scored case, which the cyclic GC walks again and again: it is off while the replay runs
    # and reports (records are acyclic and freed by reference counting) and back on, untouched, after. Measured on
    # 60k spans of the full mix: tuned as for `evald run` it took a quarter off the CPU (pure Python); off, another
    # 10% (compiled: 4.47-4.50 -> 3.97-4.08 s) for +1% of peak RSS (348 -> 351 MB): it finds next to nothing to free.
    gc.disable()
    try:
        asyncio.run(main())
        result = holder[0]
        for path, reason in result.skipped_files:
            print(f"skipped {path}: {reason}", file=sys.stderr)
        status = _replay_report(args, result)
    finally:
        gc.enable()
    if result.failed_files:
        count = len(result.failed_files)
        print(f"evald replay: {count} input{'s' if count != 1 else ''} could not be used:", file=sys.stderr)
        for path, reason in result.failed_files:
            print(f"  {path}: {reason}", file=sys.stderr)
        return EXIT_INPUT
    return status


def _replay_report(args: argparse.Namespace, result: ReplayResult) -> int:
    """Outputs, summary and gate of a replay; its exit status as far as they go."""
    from evald.aggregate_script import AggregationError, run_aggregation
    from evald.replay import no_cases_reason, open_output, write_jsonl
    from evald.summary import render_summary

    if args.output:
        out = open_output(args.output)
        try:
            write_jsonl(result.scored, out, result.not_evaluable)
        finally:
            if out is not sys.stdout:
                out.close()
    _write_ci_reports(args, result.scored)
    if args.aggregate:  # result.summary: summarized with args.missing, counts attached, by replay()
        try:
            result.summary.custom = run_aggregation(args.aggregate, result.scored)
        except AggregationError as err:
            print(f"evald: {err}", file=sys.stderr)
            return EXIT_GATE
    report = sys.stderr if args.output == "-" else sys.stdout
    why_none = no_cases_reason(result)
    if args.format == "json":
        doc = result.summary.to_dict()
        doc["no_cases_reason"] = why_none
        doc["failed_inputs"] = [{"path": path, "reason": reason} for path, reason in result.failed_files]
        print(json.dumps(doc, indent=2), file=report)
    else:
        print(render_summary(result.summary), file=report)
        if why_none is not None:
            print(f"no cases evaluated: {why_none}", file=report)
    if args.fail_under is not None:
        failures = result.summary.gate_failures(args.fail_under)
        for failure in failures:
            print(f"gate failed: {failure}", file=sys.stderr)
        if failures:
            return EXIT_GATE
    return 0


def _write_ci_reports(args: argparse.Namespace, scored: Sequence[Any]) -> None:
    from pathlib import Path

    from evald.ci_reports import Artifact, junit_xml, sarif, trace_sources

    if args.junit:
        Path(args.junit).write_text(junit_xml(scored), encoding="utf-8")
    if args.sarif:  # each result located in the input file its trace came from (docs/replay-format.md)
        report = sarif(scored, trace_sources(args.paths), Artifact.of(args.config or args.paths[0]))
        Path(args.sarif).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def _list_metrics(fmt: str) -> int:
    from evald.metrics.catalog import list_rows, render_table

    rows = list_rows()
    if fmt == "json":
        print(json.dumps(rows, indent=2))
    else:
        print(render_table(rows))
    return 0
