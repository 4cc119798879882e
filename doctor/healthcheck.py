"""``paddle-doctor healthcheck``: a cheap probe for Docker ``HEALTHCHECK`` and Kubernetes exec probes.

It runs every few seconds in production, so it never imports Paddle and never runs a predictor: it
reads the cheap live facts (cgroup, /proc, mounts), runs only the checks marked fast and, given a
baseline, compares the live facts with it. All of that runs within a time budget (default 2 s);
whatever has not finished by then is reported as unhealthy.

Exit 0 healthy, 1 unhealthy, and nothing else (Docker reserves 2): bad arguments, a missing or
corrupt baseline and internal errors are unhealthy too. One short line goes to stdout, which
Docker keeps in ``docker inspect``; ``--json`` prints the detail instead.

Start-up is most of the cost, so the entry point dispatches here before click and rich are
imported, and with a baseline the checks, rules and settings come from it (no entry-point scan, no
YAML).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

HEALTHY, UNHEALTHY = 0, 1
DEFAULT_BUDGET = 2.0
MAX_BUDGET = 3600.0
THROTTLED_LIMIT = 0.05  # share of the CFS periods since the baseline in which the quota throttled us
MIN_PERIODS = 10  # fewer periods since the baseline say nothing about throttling
LINE_PROBLEMS = 1  # problems named on the one-line output; --json has them all


@dataclass
class Invariant:
    """One comparison of a live fact with the baseline."""

    name: str
    ok: bool
    message: str
    rule: str | None = None


@dataclass
class Progress:
    """What the healthcheck is doing and has done, readable by the main thread when the budget runs out."""

    current: str = "starting"
    done: list[str] = field(default_factory=list)

    def step(self, name: str) -> None:
        self.done.append(self.current)
        self.current = name


@dataclass
class Outcome:
    healthy: bool
    line: str
    detail: dict[str, Any]


class Usage(Exception):
    pass


HELP = f"""\
usage: paddle-doctor healthcheck [--baseline PATH] [--budget SECONDS] [--json] [--root DIR]
                                 [--config FILE] [--threads N] [--instances K]

Cheap liveness/readiness probe: exit 0 healthy, 1 unhealthy, one line on stdout.

  --baseline PATH     compare with this baseline (from `paddle-doctor baseline --out PATH`)
  --budget SECONDS    total time allowed; what has not finished by then is unhealthy [default: {DEFAULT_BUDGET:g}]
  --json              print the detail as one JSON object instead of one line
  --root DIR          read /proc and /sys under this directory [default: the baseline's, or /]
  --config FILE       the service's config YAML (paddle-doctor --config); flags override it
  --threads N         math threads per predictor (overrides the baseline)
  --instances K       predictor instances in this container (overrides the baseline)
"""


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 < value <= MAX_BUDGET:
        raise ValueError(text)
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


OPTIONS = {"--baseline": str, "--budget": _seconds, "--root": str, "--config": str, "--threads": _positive, "--instances": _positive}


def parse_args(argv: list[str]) -> SimpleNamespace:
    """The options, by hand: argparse and the help formatter it builds cost this command's start-up."""
    values: dict[str, Any] = {name[2:]: None for name in OPTIONS}
    values.update(budget=DEFAULT_BUDGET, json=False)
    rest = list(argv)
    while rest:
        argument = rest.pop(0)
        if argument in ("-h", "--help"):
            sys.stdout.write(HELP)
            sys.exit(HEALTHY)
        name, has_value, value = argument.partition("=")
        if name == "--json" and not has_value:
            values["json"] = True
            continue
        if name not in OPTIONS:
            raise Usage(f"unknown argument {argument!r}")
        if not has_value:
            if not rest:
                raise Usage(f"{name} needs a value")
            value = rest.pop(0)
        try:
            values[name[2:]] = OPTIONS[name](value)
        except ValueError:
            raise Usage(f"{name}: invalid value {value!r}") from None
    return SimpleNamespace(**values)


def main(argv: list[str]) -> None:
    start = time.perf_counter()
    try:
        args = parse_args(argv)
    except Usage as exc:
        _finish(Outcome(False, f"unhealthy: bad arguments: {exc} (paddle-doctor healthcheck --help)", {}), as_json=False)
    progress = Progress()
    box: dict[str, Outcome] = {}

    def work() -> None:
        try:
            box["outcome"] = evaluate(args, progress)
        except Exception as exc:  # the healthcheck must answer 0 or 1, whatever happens
            reason = str(exc) if isinstance(exc, _user_errors()) else _reason(exc)
            box["outcome"] = _unhealthy(reason, {"error": reason})

    worker = threading.Thread(target=work, name="healthcheck", daemon=True)
    worker.start()
    worker.join(args.budget)
    outcome = box.get("outcome")
    if outcome is None:
        reason = f"did not finish within {args.budget:g} s: still {progress.current}"
        outcome = _unhealthy(reason, {"unfinished": [progress.current], "finished": progress.done[1:]})
    outcome.detail.update(budget_seconds=args.budget, seconds=round(time.perf_counter() - start, 3))
    _finish(outcome, args.json, hard=worker.is_alive())


def evaluate(args: SimpleNamespace, progress: Progress) -> Outcome:
    from .baseline import BaselineError, load_baseline
    from .context import ProbeContext
    from .probes import collect_facts
    from .registry import RegistryError
    from .report import build_report, counts_against
    from .runner import run_one

    baseline = None
    if args.baseline:
        progress.step(f"reading the baseline {args.baseline}")
        try:
            baseline = load_baseline(args.baseline)
        except BaselineError as exc:
            return _unhealthy(str(exc), {"baseline": args.baseline, "error": str(exc)})
    progress.step("reading the service settings")
    service = _service(args, baseline)
    root = args.root or (baseline.root if baseline else "/")
    ctx = ProbeContext(root)
    progress.step("probing the container")
    facts = collect_facts(ctx, service, None, 0)
    progress.step("loading the checks")
    try:
        checks, rulebook, settings, load_failures = _checks(baseline)
    except RegistryError as exc:
        message = f"{exc}; re-create the baseline with 'paddle-doctor baseline --out {args.baseline}'"
        return _unhealthy(message, {"baseline": args.baseline, "error": message})
    results = []
    for check in checks:
        progress.step(f"running check {check.name}")
        results.append(run_one(check, facts, rulebook))
    report = build_report(facts, results, rulebook, settings, load_failures)
    invariants: list[Invariant] = []
    if baseline is not None:
        progress.step("comparing with the baseline")
        invariants = compare(baseline, facts, ctx)
    progress.step("done")
    problems = [inv.message for inv in invariants if not inv.ok]
    problems += [f"{f.rule_id} {f.message}" for f in report.findings if counts_against(f, settings.fail_on)]
    problems += [f"check could not be loaded: {e['entry_point']}: {e['reason']}" for e in report.check_errors]
    detail = {
        "baseline": args.baseline,
        "root": root,
        "fail_on": settings.fail_on,
        "invariants": [vars(inv) for inv in invariants],
        "findings": [
            {"rule_id": f.rule_id, "status": f.status, "severity": f.severity, "message": f.message,
             "counts": counts_against(f, settings.fail_on), "docs": f.docs_link}
            for f in report.findings
        ],
        "check_errors": report.check_errors,
        "problems": problems,
    }
    if problems:
        return _unhealthy("; ".join(problems[:LINE_PROBLEMS]) + _more(problems), detail)
    summary = [inv.message for inv in invariants if inv.name in ("cpu_budget", "throttling")] or [_cpu_summary(facts)]
    summary.append(f"{len(checks)} fast checks" + ("" if baseline else ", no baseline"))
    return Outcome(True, "healthy: " + "; ".join(summary), detail)


def _service(args: SimpleNamespace, baseline):
    from .facts import ServiceFacts

    if args.config:
        from .service import load_service_config

        service = load_service_config(args.config)
    else:
        service = baseline.service if baseline else ServiceFacts()
    for name in ("threads", "instances"):
        if getattr(args, name) is not None:
            setattr(service, name, getattr(args, name))
    return service


def _checks(baseline):
    """The fast checks and what judges them: pinned in the baseline, or discovered (slower)."""
    if baseline is not None:
        from .registry import load_check

        checks = [load_check(pinned.reference) for pinned in baseline.checks]
        return checks, baseline.rulebook(), baseline.settings, []
    from .registry import discover_checks
    from .rules import load_rules
    from .settings import Settings

    checks, load_failures = discover_checks()
    return [check for check in checks if check.fast], load_rules(), Settings(), load_failures


def compare(baseline, facts, ctx) -> list[Invariant]:
    """Live cheap facts against the baseline: what must have stayed true."""
    return [
        _compare_cpu(baseline, facts),
        _compare_throttling(baseline, facts),
        _compare_memory(baseline, facts),
        *([_compare_cache(baseline, facts, ctx)] if baseline.cache else []),
        *([_compare_paddle(baseline, ctx)] if baseline.paddle.metadata_file else []),
    ]


def _compare_cpu(baseline, facts) -> Invariant:
    from .budget import cpu_budget, service_threads

    budget = cpu_budget(facts)
    total = service_threads(facts)[0] * facts.service.instances
    if budget is None:
        return Invariant("cpu_budget", False, "cannot establish the CPU budget now (no cgroup, cpuset or CPU count readable)", "PD-CPU-010")
    before = baseline.cpu.budget_cpus
    if before is not None and budget.cpus < before and budget.cpus < total:
        return Invariant("cpu_budget", False, f"cpu budget shrank from {before:g} to {budget.describe()}, "
                         f"below {total} threads", "PD-CPU-010")
    return Invariant("cpu_budget", True, _cpu_summary(facts, before), "PD-CPU-010")


def _compare_throttling(baseline, facts) -> Invariant:
    before, now = baseline.throttling, facts.cgroup
    if None in (before.nr_periods, before.nr_throttled, now.nr_periods, now.nr_throttled):
        return Invariant("throttling", True, "no throttling counters to compare", "PD-CPU-012")
    periods, throttled = now.nr_periods - before.nr_periods, now.nr_throttled - before.nr_throttled
    if periods < 0 or throttled < 0:
        return Invariant("throttling", False, "throttling counters went backwards since the baseline (another cgroup); "
                         "re-create the baseline", "PD-CPU-012")
    if periods < MIN_PERIODS:
        judged = "not throttled" if not throttled else f"throttled in {throttled} of them, too few to judge"
        return Invariant("throttling", True, f"{periods} CPU quota periods since baseline, {judged}", "PD-CPU-012")
    ratio = throttled / periods
    if ratio >= THROTTLED_LIMIT:
        return Invariant("throttling", False, f"throttled in {ratio:.1%} of {periods} CPU periods since baseline "
                         f"(limit {THROTTLED_LIMIT:.0%})", "PD-CPU-012")
    return Invariant("throttling", True, f"throttled {ratio:.1%} of {periods} periods since baseline", "PD-CPU-012")


def _compare_memory(baseline, facts) -> Invariant:
    before, now = baseline.memory.limit_bytes, facts.memory.limit_bytes
    if now is not None and (before is None or now < before):
        return Invariant("memory_limit", False, f"memory limit lowered from {_size(before)} to {_size(now)} since baseline")
    return Invariant("memory_limit", True, f"memory limit {_size(now)}" + (" (raised since baseline)" if now != before else ""))


def _compare_cache(baseline, facts, ctx) -> Invariant:
    from .baseline import probe_cache

    before = baseline.cache
    now = probe_cache(ctx, before.path, facts.mounts)
    where = f"cache {before.path}"
    if now.error:
        return Invariant("cache", False, now.error, "PD-TRT-003")
    if before.exists and not now.exists:
        return Invariant("cache", False, f"{where} is gone (baseline: {before.files} files, {before.engines} engines)", "PD-TRT-001")
    if before.engines and not now.engines:
        return Invariant("cache", False, f"{where} lost its {before.engines} TensorRT engines", "PD-TRT-001")
    if before.files and not now.files:
        return Invariant("cache", False, f"{where} was emptied (baseline: {before.files} files)", "PD-START-001")
    if before.persisted and not now.persisted:
        return Invariant("cache", False, f"{where} is no longer on its volume ({before.mountpoint}, {before.fstype}); "
                         f"now on {now.fstype}", "PD-TRT-002")
    return Invariant("cache", True, f"{where}: {now.files} files, {now.engines} engines" if now.exists else f"{where} absent, as at baseline")


def _compare_paddle(baseline, ctx) -> Invariant:
    from .baseline import read_installed

    before = baseline.paddle
    now, problem = read_installed(ctx, before.metadata_file)
    if now != before.installed:
        return Invariant("paddle_build", False, f"Paddle build changed since baseline: was {before.installed}, now {now or problem}")
    return Invariant("paddle_build", True, f"{now} as at baseline")


def _cpu_summary(facts, before: float | None = None) -> str:
    from .budget import cpu_budget, service_threads

    budget = cpu_budget(facts)
    total = service_threads(facts)[0] * facts.service.instances
    if budget is None:
        return f"{total} threads, cpu budget unknown"
    changed = f" (was {before:g} at baseline)" if before is not None and budget.cpus != before else ""
    return f"cpu budget {budget.cpus:g} {'>=' if budget.cpus >= total else '<'} {total} threads{changed}"


def _size(value: int | None) -> str:
    if value is None:
        return "unlimited"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:g} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(value)


def _more(problems: list[str]) -> str:
    extra = len(problems) - LINE_PROBLEMS
    return f" (+{extra} more, see --json)" if extra > 0 else ""


def _user_errors() -> tuple[type[Exception], ...]:
    """Bad input the user can fix: the message names the file and what is wrong."""
    from .rules import RulesError
    from .service import ServiceConfigError

    return RulesError, ServiceConfigError


def _reason(exc: BaseException) -> str:
    return f"internal error: {type(exc).__name__}: {exc}"


def _unhealthy(reason: str, detail: dict[str, Any]) -> Outcome:
    return Outcome(False, f"unhealthy: {reason}", detail)


def _finish(outcome: Outcome, as_json: bool, hard: bool = False) -> None:
    if as_json:
        payload = {"healthy": outcome.healthy, "line": outcome.line, **outcome.detail}
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(outcome.line + "\n")
    sys.stdout.flush()
    code = HEALTHY if outcome.healthy else UNHEALTHY
    if hard:  # a thread is stuck in a read that cannot be interrupted: leave without waiting for it
        os._exit(code)
    sys.exit(code)
