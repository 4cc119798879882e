"""``paddle-doctor healthcheck``: a cheap probe for Docker ``HEALTHCHECK`` and Kubernetes exec probes.

It runs every few seconds in production, so it never imports Paddle and never runs a predictor: it
reads the cheap live facts (cgroup, /proc, mounts) and, given a baseline, what the baseline recorded
(``Facts.baseline``), and runs the fast checks on them, with the rules and runner of ``check``: the
comparisons with the baseline are rules too (PD-HEALTH-*), documented and ignorable like any other.
All of that runs within a time budget (default 2 s); whatever has not finished by then is reported
as unhealthy.

Exit 0 healthy, 1 unhealthy, and nothing else (Docker reserves 2): bad arguments, a missing or
corrupt baseline and internal errors are unhealthy too, and so is a healthcheck stopped by SIGTERM,
SIGINT or SIGHUP before it finished (its line names the signal and what it was doing). One short line goes to stdout, which
Docker keeps in ``docker inspect``; ``--json`` prints the detail instead.

Start-up is most of the cost, so the entry point dispatches here before click and rich are
imported, and with a baseline the checks, rules and settings come from it (no entry-point scan, no
YAML).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..base import children
from ..base.escape import terminal_line
from ..base.timebox import run_within
from ..judge.policy import Policy
from ..judge.registry import RegistryError, applying_checks, discover_checks
from ..judge.rule_docs import docs_link, docs_page
from ..judge.rules import RulesError, load_rules
from ..judge.weighing import counts_against
from ..pipeline import collect_lean, judged_lean
from ..probes.context import RootError
from ..service.config import ServiceConfigError, ServiceOptions
from .baselines import Baseline, BaselineError, load_baseline, record_command

if TYPE_CHECKING:
    from ..facts import Facts
    from ..judge.registry import Check, LoadFailure
    from ..judge.rules import Rulebook
    from ..judge.weighing import Judged

HEALTHY, UNHEALTHY = 0, 1
DEFAULT_BUDGET = 2.0
MAX_BUDGET = 3600.0
LINE_PROBLEMS = 1  # problems named on the one-line output; --json has them all
LINE_MAX = 500  # characters; Docker keeps the last 4096 bytes of each check's output


@dataclass
class Progress:
    """What the healthcheck is doing and has done, readable by the main thread when the budget runs out."""

    steps: list[str] = field(default_factory=lambda: ["starting"])
    deadline: float | None = None  # time.monotonic() when the budget runs out: a check whose timeout is longer needs no thread

    def step(self, name: str) -> None:
        self.steps.append(name)

    @property
    def current(self) -> str:
        return self.steps[-1]

    @property
    def finished(self) -> list[str]:
        return self.steps[1:-1]


@dataclass
class Outcome:
    """The healthcheck's answer: healthy or not, the one line Docker keeps, and the detail ``--json`` prints."""

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


OPTIONS: dict[str, Callable[[str], object]] = {"--baseline": str, "--budget": _seconds, "--root": str, "--config": str, "--threads": _positive, "--instances": _positive}
SUMMARY_RULES = ("PD-HEALTH-001", "PD-HEALTH-002")  # what a healthy line says: the CPU budget and throttling
BASELINE_AREA = "HEALTH"


@dataclass(frozen=True)
class HealthcheckOptions:
    """The healthcheck's options; the service's part (--config, --threads, --instances) typed as ``check``'s."""

    baseline: str | None = None
    budget: float = DEFAULT_BUDGET
    root: str | None = None
    json: bool = False
    service: ServiceOptions = field(default_factory=ServiceOptions)


def parse_args(argv: list[str]) -> HealthcheckOptions:
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
    return HealthcheckOptions(values["baseline"], values["budget"], values["root"], values["json"],
                              ServiceOptions(config=values["config"], threads=values["threads"], instances=values["instances"]))


def main(argv: list[str]) -> None:
    start = time.perf_counter()
    try:
        args = parse_args(argv)
    except Usage as exc:
        _finish(Outcome(False, f"unhealthy: bad arguments: {exc} (paddle-doctor healthcheck --help)", {}), as_json=False)
    progress = Progress()
    with children.handling_stop_signals():
        try:
            outcome, stuck = _evaluate_within_budget(args, progress)
        except children.Interrupted as stop:  # the evaluation may be stuck in a read: its thread is left behind
            outcome, stuck = _stopped(stop, progress), True
        outcome.detail.update(budget_seconds=args.budget, seconds=round(time.perf_counter() - start, 3))
        with children.phase("answering", deferred=True):  # a signal now lets the answer out whole
            _finish(outcome, args.json, hard=stuck)


def _evaluate_within_budget(args: HealthcheckOptions, progress: Progress) -> tuple[Outcome, bool]:
    """The outcome, and whether the evaluation is still running (stuck in a read)."""
    progress.deadline = time.monotonic() + args.budget
    bounded = run_within(lambda: evaluate(args, progress), args.budget, "healthcheck")
    if not bounded.finished:
        reason = f"did not finish within {args.budget:g} s: still {progress.current}"
        return _unhealthy(reason, {"unfinished": [progress.current], "finished": progress.finished}), True
    if bounded.error is not None:  # the healthcheck must answer 0 or 1, whatever happens
        exc = bounded.error
        reason = str(exc) if isinstance(exc, _user_errors()) else _reason(exc)
        return _unhealthy(reason, {"error": reason}), False
    assert bounded.value is not None  # finished without an error: evaluate returned its Outcome
    return bounded.value, False


def _stopped(stop, progress: Progress) -> Outcome:
    """A stop signal before the answer: unhealthy, since nothing was judged, and why, truthfully."""
    return _unhealthy(f"stopped by {stop.signal_name} before it finished (still {progress.current})",
                      {"stopped_by": stop.signal_name, "unfinished": [progress.current], "finished": progress.finished})


class _Refused(Exception):
    """What the healthcheck cannot judge by (a baseline it cannot read, a pinned check it cannot load): the message says what to do."""


def evaluate(args: HealthcheckOptions, progress: Progress) -> Outcome:
    """The lean pipeline: the baseline, the cheap probes, the fast checks run and judged, then the one line and the detail."""
    try:
        baseline = _baseline(args.baseline, progress)
        root = args.root or (baseline.root if baseline else "/")
        facts = _facts(root, args, baseline, progress)
        progress.step("loading the checks")
        checks, rulebook, settings, load_failures = _checks(baseline, args.baseline)
    except _Refused as exc:
        return _unhealthy(str(exc), {"baseline": args.baseline, "error": str(exc)})
    findings = judged_lean(checks, facts, rulebook, settings, progress.step, progress.deadline)
    page = docs_page(settings.docs_url)
    progress.step("done")
    problems = _problems(findings, facts, settings.fail_on, load_failures)
    detail = {
        "baseline": args.baseline,
        "root": root,
        "fail_on": settings.fail_on,
        "findings": [_finding_detail(f, settings.fail_on, page) for f in findings],
        "check_errors": [vars(failure) for failure in load_failures],
        "problems": problems,
    }
    if problems:
        return _unhealthy("; ".join(problems[:LINE_PROBLEMS]) + _more(problems), detail)
    return Outcome(True, "healthy: " + "; ".join(_summary(findings, checks, facts, baseline is not None)), detail)


def _baseline(path: str | None, progress: Progress) -> Baseline | None:
    if not path:
        return None
    progress.step(f"reading the baseline {path}")
    try:
        return load_baseline(path)
    except BaselineError as exc:
        raise _Refused(str(exc)) from None


def _facts(root: str, args: HealthcheckOptions, baseline: Baseline | None, progress: Progress) -> Facts:
    """The cheap facts, with what the baseline recorded; a --config describes the whole service, and without one
    the service is the baseline's."""
    if baseline is None:
        return collect_lean(root, args.service, progress.step)
    base = baseline.service if not args.service.config else None
    return collect_lean(root, args.service, progress.step, base, lambda ctx: baseline.as_facts(str(args.baseline), ctx))


def _checks(baseline: Baseline | None, path: str | None) -> tuple[list[Check], Rulebook, Policy, list[LoadFailure]]:
    """The fast checks and what judges them: pinned in the baseline, or discovered (slower)."""
    try:
        if baseline is not None:
            return baseline.pinned_checks(), baseline.rulebook(), baseline.settings, []
        rulebook = load_rules()
        checks, load_failures = discover_checks(rulebook)
    except RegistryError as exc:
        raise _Refused(f"{exc}; re-create the baseline with '{record_command(str(path))}'") from None
    return [check for check in checks if check.fast], rulebook, Policy(), load_failures


def _problems(findings: list[Judged], facts: Facts, fail_on: str, load_failures: list[LoadFailure]) -> list[str]:
    """What makes the container unhealthy, said one problem at a time, what changed since the baseline first:
    that is what a healthcheck is for."""
    counted = sorted((f for f in findings if counts_against(f, fail_on)), key=lambda f: f.area != BASELINE_AREA)
    problems = []
    if any(f.status == "error" for f in counted):  # a check the doctor could not carry out: say first what it could not read
        problems += [issue.describe() for issue in facts.issues if issue.unreadable]
    problems += [f"{f.rule_id} {f.message}" for f in counted]
    problems += [f"check could not be loaded: {e.entry_point}: {e.reason}" for e in load_failures]
    return problems


def _finding_detail(finding: Judged, fail_on: str, page: str) -> dict[str, Any]:
    return {"rule_id": finding.rule_id, "status": finding.status, "severity": finding.severity, "message": finding.message,
            "counts": counts_against(finding, fail_on), "docs": docs_link(finding.rule.id, page) if finding.rule else None}


def _summary(findings: list[Judged], checks: list[Check], facts: Facts, with_baseline: bool) -> list[str]:
    """What a healthy line says: what the summary rules passed with (else what the checks say of the facts, the
    CPU budget against the threads), and how many of the fast checks apply."""
    said = [f.message for rule in SUMMARY_RULES for f in findings if f.rule_id == rule and f.status == "pass"]
    said = said or [check.summary(facts) for check in checks if check.summary is not None]
    return [*said, applying_checks(checks, facts) + ("" if with_baseline else ", no baseline")]


def _more(problems: list[str]) -> str:
    extra = len(problems) - LINE_PROBLEMS
    return f" (+{extra} more, see --json)" if extra > 0 else ""


def _user_errors() -> tuple[type[Exception], ...]:
    """Bad input the user can fix: the message names the file and what is wrong."""
    return RulesError, ServiceConfigError, RootError


def _reason(exc: BaseException) -> str:
    return f"internal error: {type(exc).__name__}: {exc}"


def _unhealthy(reason: str, detail: dict[str, Any]) -> Outcome:
    return Outcome(False, f"unhealthy: {reason}", detail)


def _finish(outcome: Outcome, as_json: bool, hard: bool = False) -> None:
    if as_json:
        payload = {"healthy": outcome.healthy, "line": outcome.line, **outcome.detail}
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    else:
        line = terminal_line(" ".join(outcome.line.split()))  # one line, no control character, whatever the messages hold
        sys.stdout.write((line[: LINE_MAX - 3] + "...") if len(line) > LINE_MAX else line)
        sys.stdout.write("\n")
    sys.stdout.flush()
    code = HEALTHY if outcome.healthy else UNHEALTHY
    if hard:  # a thread is stuck in a read that cannot be interrupted: leave without waiting for it
        os._exit(code)
    sys.exit(code)
