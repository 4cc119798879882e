"""The report for people: host summary, findings grouped by area, problems expanded with cause and fix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ..base.escape import escaped, terminal_line, terminal_text
from ..base.vocabulary import (
    BuiltBy,
    Effect,
    ExperimentStatus,
    FusionStatus,
    ProcessStatus,
    ProgramStatus,
    Severity,
    SourceStatus,
    Status,
    Verdict,
)
from ..base.words import byte_size as _bytes
from ..facts import paddle_status_words
from ..judge.verdict_words import describe, effect_words
from ..report.report import RECOMMEND, Report, ReportFinding, ServiceSummary
from .digest import ENFORCED_WHY, STATUS_LABEL, Digest, digest
from .service_lines import (
    deployment_lines,
    flags_line,
    process_line,
    process_note,
    record_lines,
    setting_value,
    shown_settings,
    source_line,
)

if TYPE_CHECKING:
    from ..facts.graph import FusionInstance
    from ..facts.verification import ExperimentResult, Throttling
    from ..report.measured import GraphSummary, VerificationSummary

STATUS_STYLE = {status: (label, style) for (status, label), style in
                zip(STATUS_LABEL.items(), ("bold red", "bold yellow", "bold magenta", "green", "dim"))}
VERDICT_STYLE = {Verdict.CONFIRMED: "green", Verdict.REFUTED: "red", Verdict.UNDECIDED: "yellow"}
SEVERITY_STYLE = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


DETAILS = ("summary", "default", "full")  # -q, default, -v


def render_text(report: Report, console: Console, detail: str = "default") -> None:
    """The summary first (verdict, problems ranked by measured gain, the recommended configuration
    as code, the model's inputs); then, unless ``summary``, the problems in full and the passes and
    skips one line per area (``full``: each in full). Every string is shown as it is: control
    characters (and, but in code, line breaks) written out (``\\x1b``), never read as markup."""
    report = escaped(report, terminal_line, code=terminal_text)
    summary = digest(report)
    _render_summary(report, summary, console)
    if detail == "summary":
        return
    console.print()
    console.print(_host_table(report) if detail == "full" else _host_line(report), highlight=False)
    if report.service:
        _render_service(report.service, console)
    _render_areas(report, console, detail)
    if report.graph and detail == "full":  # else its finding (PD-GRAPH-003) says the coverage
        _render_graph(report.graph, console)
    if report.verification:
        _render_verification(report.verification, summary, console, detail)
        _render_layouts(report, console)
    for failure in report.check_errors:
        console.print(Text(f"check could not be loaded: {failure.entry_point}: {failure.reason}", style="bold magenta"))
    console.print()
    console.print(Text(summary.verdict, style="bold"))


def _render_areas(report: Report, console: Console, detail: str) -> None:
    """The findings area by area: an area with something shown in full under its heading, then the
    areas with nothing to fix in one paragraph."""
    clean, not_applying, measure = [], [], measure_hint(report)
    for area in dict.fromkeys(f.area for f in report.findings):
        name = report.areas.get(area, area)
        findings = [f for f in report.findings if f.area == area]
        shown = [f for f in findings if detail == "full" or f.status.is_problem]
        if shown:
            _render_area(name, findings, shown, console, detail, measure)
        elif all(f.status == Status.SKIP for f in findings):
            not_applying.append(name)
        else:
            clean.append(Text.assemble((f"{name}: ", "bold"), *_passed_here(findings)))
    if not_applying:
        clean.append(Text.assemble(("nothing applies here", "bold"), " (all skipped): ", ", ".join(not_applying)))
    if clean:
        console.print()
        # one paragraph: the areas with nothing to fix are read at a glance, not line by line
        console.print(Text.assemble(("Nothing to fix here", "bold underline"), " (-v shows each check): ", Text("; ").join(clean)))


def _render_area(name: str, findings: list[ReportFinding], shown: list[ReportFinding], console: Console, detail: str,
                 measure: str) -> None:
    """One area's heading, the findings shown in it, and (but in ``full``) its passes and skips in one line."""
    console.print()
    console.print(Text(name, style="bold underline"))
    for finding in shown:
        _render_finding(finding, console, detail, measure)
    collapsed = [] if detail == "full" else _collapsed(findings)
    if collapsed:
        console.print(Text.assemble(*collapsed))


def _render_summary(report: Report, summary: Digest, console: Console) -> None:
    console.print(Text.assemble((f"paddle-doctor {report.tool.version}: ", "bold"), summary.verdict))
    if summary.problems:
        console.print(Text("Problems, ranked by measured gain", style="bold underline"))
        for problem in summary.top:
            label, style = STATUS_STYLE[problem.finding.status]
            console.print(Text.assemble((f"{label:<7} ", style), (f"{problem.finding.rule_id} ", "bold"),
                                        (problem.headline, "bold green" if problem.gain else "")))
        if len(summary.problems) > len(summary.top):
            console.print(Text(f"and {len(summary.problems) - len(summary.top)} more below", style="dim"))
    recommendation = summary.recommendation
    if recommendation:
        console.print(Text(recommendation.title, style="bold underline"))
        if not summary.recommendation_measured_above:  # said once on the first screen
            console.print(Text(recommendation.headline), highlight=False)
        if recommendation.noise:
            console.print(Text(recommendation.noise, style="yellow"), highlight=False)
        if recommendation.enforced:
            console.print(Text(f"enforced: {', '.join(recommendation.enforced)} ({ENFORCED_WHY})", style="yellow"))
        if recommendation.wrapper:
            console.print(Text(recommendation.wrapper.words), highlight=False)
            print_code(console, recommendation.wrapper.code)
        if recommendation.snippet:
            print_code(console, recommendation.snippet)
    for view in summary.inputs:
        console.print(Text.assemble(("input ", "bold"), (view.name, "bold"),
                                    f": {view.dtype}, declared {view.declared}; measured {', '.join(view.shapes)}; "
                                    f"chosen by {view.chosen_by}"), highlight=False)
    if summary.inputs:
        console.print(Text(f"change them: {summary.inputs[0].how_to_change}", style="dim"))


def print_code(console: Console, code: str) -> None:
    """Code exactly as it is pasted: never wrapped nor indented, so a terminal's copy gives these bytes."""
    console.print(Text(code.rstrip("\n"), style="cyan"), soft_wrap=True, highlight=False)


def _collapsed(findings: list[ReportFinding]) -> list[Text]:
    """The passes and skips of one area, as one line's parts: their rule ids after the status."""
    parts = []
    for status in (Status.PASS, Status.SKIP):
        ids = [f.rule_id for f in findings if f.status == status]
        if ids:
            label, style = STATUS_STYLE[status]
            parts += [Text(f"{label} ", style=style), Text(id_ranges(ids) + "  ", style="dim")]
    return parts


def _passed_here(findings: list[ReportFinding]) -> list[Text]:
    """An area with nothing to fix, as its passes' rule ids and how many of its checks were skipped."""
    skipped = sum(f.status == Status.SKIP for f in findings)
    label, style = STATUS_STYLE[Status.PASS]
    passes = id_ranges([f.rule_id for f in findings if f.status == Status.PASS])
    return [Text(f"{label} ", style=style), Text(passes + (f" ({skipped} skipped)" if skipped else ""), style="dim")]


def id_ranges(ids: list[str]) -> str:
    """``PD-GPU-001 PD-GPU-002 PD-GPU-003`` as ``PD-GPU-001..003``: runs of consecutive numbers in one area."""
    runs: list[list[str]] = []
    for rule_id in ids:
        prefix, _, number = rule_id.rpartition("-")
        last = runs[-1][-1] if runs else ""
        if last.rpartition("-")[0] == prefix and number.isdigit() and last.rpartition("-")[2] == f"{int(number) - 1:0{len(number)}d}":
            runs[-1].append(rule_id)
        else:
            runs.append([rule_id])
    return " ".join(run[0] if len(run) == 1 else f"{run[0]}..{run[-1].rpartition('-')[2]}" for run in runs)


def measure_hint(report: Report) -> str:
    """The command that measures the service's model: ``--measure`` where its record names a model in files."""
    predictors = report.service.predictors if report.service else []
    recorded = any(p.built_by != BuiltBy.SOURCE and p.model is not None and not p.model.in_memory for p in predictors)
    return "paddle-doctor --measure" if recorded else "paddle-doctor --model PATH"


def _render_finding(finding: ReportFinding, console: Console, detail: str, measure: str) -> None:
    label, style = STATUS_STYLE[finding.status]
    verdict = f" [{finding.verdict}]" if finding.verdict else ""
    console.print(Text.assemble((f"{label:<7} ", style), (finding.rule_id, "bold"), " ",
                                (finding.severity, SEVERITY_STYLE.get(finding.severity, "")), " ",
                                (finding.title if finding.status.is_problem else finding.message,
                                 "bold" if finding.status.is_problem else "dim"),
                                (verdict, VERDICT_STYLE[finding.verdict] if finding.verdict else "")))
    if not finding.status.is_problem:
        return
    for line in _body(finding, detail, measure):
        console.print(Padding(line, (0, 0, 0, 2)))
    if finding.experiment == RECOMMEND and detail != "full":
        return  # its code is the recommended configuration, printed in full at the top
    for change in finding.fix.changes if finding.status != Status.ERROR else ():
        console.print(Text(f"  {change.kind}:", style="dim"))
        print_code(console, change.code)


def _host_table(report: Report) -> Table:
    host = report.host
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(overflow="fold")  # a long path breaks across lines, never cut
    flags = ", ".join(host.cpu_flags) or "none of avx/avx2/avx512"
    table.add_row("CPU", Text(f"{host.cpu_model or 'unknown'} ({host.cpu_arch or '?'}); {flags}"))
    if host.cpu_budget is not None:
        table.add_row("CPU budget", Text(f"{host.cpu_budget:g} CPUs, from {host.cpu_budget_limited_by} ({host.cpu_budget_file or '?'})"))
    table.add_row("Memory", Text(f"limit {_bytes(host.memory_limit_bytes)}; /dev/shm {_bytes(host.shm_bytes)}"))
    table.add_row("Container", Text(host.container))
    if host.paddle_version:
        paddle = f"{host.paddle_distribution} {host.paddle_version} ({host.paddle_status})"
    else:
        paddle = paddle_status_words(host.paddle_status)
    table.add_row("Paddle", Text(f"{paddle}; python {host.python or '?'}"))
    if host.gpu:
        table.add_row("GPU", Text(host.gpu))
    return table


def _host_line(report: Report) -> Text:
    host = report.host
    budget = (f"{host.cpu_budget:g} CPUs ({host.cpu_budget_limited_by}, {host.cpu_budget_file or '?'})"
              if host.cpu_budget is not None else "no CPU limit")
    paddle = f"{host.paddle_distribution} {host.paddle_version}" if host.paddle_version else paddle_status_words(host.paddle_status)
    return Text.assemble(("host ", "bold"), f"{host.cpu_model or 'unknown CPU'}, {', '.join(host.cpu_flags) or 'no AVX'}; "
                         f"budget {budget}; container {host.container}; {paddle}; GPU {host.gpu or 'none'} (-v for more)")


def _render_service(service: ServiceSummary, console: Console) -> None:
    """The service's process and source, and each setting with where it came from."""
    process, source = service.process, service.source
    if process.status == ProcessStatus.NOT_PROBED and source.status == SourceStatus.NOT_READ and not service.settings and not service.predictors:
        return
    console.print()
    console.print(Text("Service", style="bold underline"))
    line = process_line(process)
    if line:
        console.print(Text(line))
        for name, value in process.environ.items():
            console.print(Text(f"  {name}={value} ({process.environ_source})", style="dim"))
    for line in deployment_lines(service):
        console.print(Text(f"  {line}"))
    note = process_note(process)
    if note:
        console.print(Text(note, style="yellow"))
    line = source_line(source)
    if line:
        console.print(Text(line))
    for error in source.errors:
        console.print(Text(f"{error.location}: {error.message}", style="yellow"))
    flags = flags_line(service)
    if flags:
        console.print(Text(f"  {flags}"))
    for setting in shown_settings(service):
        console.print(Text.assemble((f"  {setting.name} = {setting_value(setting.value)}", "bold"), (f"  {setting.origin}: {setting.detail}", "dim")))
    for line in record_lines(service):
        console.print(Text(line))


def _body(finding: ReportFinding, detail: str, measure: str) -> list[Text]:
    """Compact: message, where, fix and the best measurement; ``full`` adds observed, expected,
    cause and every comparison."""
    parts = [Text(finding.message)]
    for location in finding.locations:
        parts.append(Text.assemble(("at       ", "bold"), (str(location), "cyan")))
    if finding.observed and detail == "full":
        parts.append(Text.assemble(("observed ", "bold"), finding.observed))
    if finding.expected and detail == "full":
        parts.append(Text.assemble(("expected ", "bold"), finding.expected))
    if finding.status != Status.ERROR:
        if detail == "full":
            parts.append(Text.assemble(("cause    ", "bold"), finding.cause))
        parts.append(Text.assemble(("fix      ", "bold"), finding.fix.text, (f" ({_more(finding, detail)})", "dim")))
    experiment = finding.experiment_result
    if experiment and experiment.layouts:
        parts.append(Text("measured (layouts): see 'Serving layouts under load' below", style="dim"))
    elif experiment:
        if detail == "full":  # else the summary says what it measured, and the message how it was reconciled
            parts.extend(measurement_lines(experiment))
    elif finding.experiment and finding.experiment != RECOMMEND and finding.status != Status.ERROR:
        parts.append(Text(f"confirm with a measurement: {measure} (experiment '{finding.experiment}')", style="dim"))
    if finding.status == Status.ERROR:
        parts.append(Text(_more(finding, detail), style="dim"))
    return parts


def _more(finding: ReportFinding, detail: str) -> str:
    """Where to read more: the docs link (``full``: and the explain command)."""
    links = [finding.explain] if detail == "full" or not finding.docs_link else []
    return "more: " + " · ".join(links + ([finding.docs_link] if finding.docs_link else []))


def measurement_lines(experiment: ExperimentResult) -> list[Text]:
    """One line per comparison of an experiment, then what else it measured."""
    name = experiment.name
    if not experiment.measured:
        return [Text(f"not measured ({name}): {experiment.reason}", style="dim")]
    lines = []
    for c in experiment.comparisons:
        style = {Effect.IMPROVED: "bold green", Effect.REGRESSED: "bold red"}.get(c.verdict, "yellow")
        line = Text.assemble((f"measured ({name}) ", "bold"), (describe(c), style), f", {c.rounds} rounds")
        if c.drift:
            line.append(f"; output drift max {c.drift.max_abs_diff:.2g}, cosine {c.drift.cosine:.5f}")
        lines.append(line)
    if experiment.noisy:
        lines.append(Text("the machine was too noisy to decide within the budget; raise --budget or measure on a quiet machine", style="yellow"))
    lines.extend(Text(f"  {line}", style="dim") for line in _result_lines(experiment))
    return lines


def _result_lines(experiment: ExperimentResult) -> list[str]:
    """What an experiment measured besides latency arms (the layouts have their own section)."""
    if experiment.warmup:
        warmup = experiment.warmup
        ratio = f" ({warmup.first_over_steady:.1f}x)" if warmup.first_over_steady is not None else ""
        return [f"first request {warmup.first_ms:.2f} ms, steady-state p50 {warmup.steady_p50_ms:.2f} ms{ratio}"]
    if experiment.optim_cache:
        cold = experiment.optim_cache
        return [f"cold start {cold.rebuild_graph_ms:.0f} ms rebuilding the graph, {cold.optimised_cache_ms:.0f} ms from the cache"]
    if experiment.onednn_cache:
        memory = experiment.onednn_cache
        return [(f"RSS grew {memory.service.growth_mb:.0f} MB over {memory.shapes} input shapes with the service's cache, "
                f"{memory.bounded.growth_mb:.0f} MB with a bounded one")]
    return []


def _render_graph(graph: GraphSummary, console: Console) -> None:
    """The program read and optimised, its fusion coverage per pattern, what was not fused, and the rest measured."""
    console.print()
    console.print(Text("Graph fusion coverage", style="bold underline"))
    if graph.error:
        console.print(Text(graph.error, style="bold magenta"))
        return
    _render_programs(graph, console)
    console.print(_coverage_table(graph))
    _render_not_fused(graph, console)
    _render_graph_notes(graph, console)


def _render_programs(graph: GraphSummary, console: Console) -> None:
    """The program as written, then as optimised (or why the optimised one was not read)."""
    version = f" version {graph.version}" if graph.version is not None else ""
    console.print(Text(f"program {graph.program} ({graph.format}{version}, {graph.ops} ops; "
                   f"feed/fetch {_counts(graph.feed_fetch)})"))
    optimised = graph.optimised
    if optimised and optimised.status == ProgramStatus.READ:
        console.print(Text(f"optimised for {optimised.pipeline}: {optimised.ops} ops, {len(optimised.passes or [])} passes ran; "
                       f"removed {_counts(optimised.removed)}; added {_counts(optimised.added)}"))
    elif optimised:
        console.print(Text(f"optimised program {optimised.status}: {optimised.reason}", style="dim"))


def _coverage_table(graph: GraphSummary) -> Table:
    """One row per fusion pattern (and the total): how many could fuse, did, partly, did not, and the share."""
    table = Table(box=None, padding=(0, 1), show_edge=False)
    for column in ("pattern", "fusible", "fused", "partly", "not fused", "coverage"):
        table.add_column(column, justify="left" if column == "pattern" else "right")
    for row in graph.coverage + ([graph.total] if graph.total else []):
        cells = [row.title, *(str(count) for count in (row.fusible, row.fused, row.partial, row.unfused)),
                 f"{row.coverage:.0%}" if row.coverage is not None else "-"]
        table.add_row(*map(Text, cells), style="bold" if row.pattern == "total" else None)
    return table


def _render_not_fused(graph: GraphSummary, console: Console) -> None:
    """The instances not fused, one line per pattern, status and reason: the first and how many more like it."""
    groups: dict[tuple, list[FusionInstance]] = {}
    for instance in graph.instances:
        if instance.status != FusionStatus.FUSED:
            groups.setdefault((instance.pattern, instance.status, instance.reason), []).append(instance)
    for (_, status, reason), instances in groups.items():
        first = instances[0]
        params = f" [{', '.join(first.params[:2])}]" if first.params else ""
        alike = f" and {len(instances) - 1} more like it" if len(instances) > 1 else ""
        became = f" -> {' + '.join(first.became)}" if first.became else ""
        console.print(Text.assemble((f"  {status:8} ", "yellow"), " -> ".join(first.ops), params, alike, became,
                                    (f": {reason}", "dim")))


def _render_graph_notes(graph: GraphSummary, console: Console) -> None:
    """Dropout left in the program, TensorRT's share of the ops, and the measured IR optimisation."""
    if graph.dropout:
        left = "unknown" if graph.dropout_left is None else graph.dropout_left
        console.print(Text(f"dropout: {len(graph.dropout)} ops in the program, {left} left after optimisation"))
    share = graph.optimised.tensorrt if graph.optimised else None
    if share:
        console.print(Text(f"TensorRT: {share.ops_inside} of {share.ops_inside + share.ops_outside} ops inside "
                       f"{share.engines} engines; outside {_counts(share.outside)}"))
    if graph.ir_optim_experiment:
        for line in measurement_lines(graph.ir_optim_experiment):
            console.print(line)


def _counts(counts: dict[str, int], shown: int = 6) -> str:
    items = list(counts.items())
    text = ", ".join(f"{name} x{n}" for name, n in items[:shown]) or "nothing"
    return text + (f" and {len(items) - shown} more" if len(items) > shown else "")


def _render_verification(verification: VerificationSummary, summary: Digest, console: Console, detail: str) -> None:
    console.print()
    model = verification.model
    console.print(Text("Verification on the real predictor", style="bold underline"))
    console.print(Text(f"model {model.path} ({model.format}); measured {verification.seconds:.1f} s "
                   f"of a {verification.budget_s:g} s budget; minimum effect {verification.min_effect:.0%}"))
    if verification.error:
        console.print(Text(verification.error, style="bold magenta"))
    if verification.over_budget and verification.over_budget != verification.error:
        console.print(Text(f"over the budget: {verification.over_budget}", style="yellow"))
    not_measured = [e for e in verification.experiments if e.status != ExperimentStatus.MEASURED]
    if detail == "full":
        for experiment in not_measured:
            console.print(Text(f"  {experiment.name}: {experiment.status} — {experiment.reason}", style="dim"))
    elif not_measured:
        console.print(Text(f"  not measured: {', '.join(e.name for e in not_measured)} (-v says why)", style="dim"))
    for row in summary.shape_latencies:
        p50 = "; ".join(f"{label} {_number(ms)} ms" for label, ms in row.p50_ms.items())
        console.print(Text(f"  p50 on {row.shapes}: {p50}"))
    recommendation = verification.recommendation
    if recommendation and summary.shape_latencies:
        console.print(Text(f"  p50 over the mix: baseline {_number(recommendation.baseline.p50)} ms; "
                       f"recommended {_number(recommendation.recommended.p50)} ms"))
    if recommendation and detail == "full":
        console.print(Text("how the recommended configuration was found:", style="bold"))
        for step in recommendation.steps:
            console.print(Text(f"  • {step}"))


def _render_layouts(report: Report, console: Console) -> None:
    """The layouts experiment, once: every layout's throughput and latency under load."""
    experiment = next((f.experiment_result for f in report.findings if f.experiment_result and f.experiment_result.layouts), None)
    if experiment is None or experiment.layouts is None:
        return
    measured = experiment.layouts
    console.print()
    console.print(Text("Serving layouts under load", style="bold underline"))
    console.print(Text(f"{measured.concurrency} concurrent clients, CPU budget {measured.budget_cpus:g}; {measured.rounds} rounds "
                   f"of {measured.window_s:.2f} s windows, interleaved (stopped: {measured.stopped})"))
    console.print(_layouts_table(experiment, measured.recommended))
    _render_throttling(measured.throttling, console)
    console.print(Text(f"→ {measured.recommended}: {measured.why}"))
    for excluded in measured.excluded:
        console.print(Text(f"  not measured: {excluded.layout} — {excluded.reason}", style="dim"))


def _layouts_table(experiment: ExperimentResult, recommended: str) -> Table:
    """One row per layout measured (the recommended one marked): its threads, throughput, latencies and how it compares."""
    ratios = {c.candidate: c for c in experiment.comparisons}
    table = Table(box=None, padding=(0, 1), show_edge=False)
    for column in ("layout", "threads", "req/s", "p50 ms", "p90 ms", "p99 ms", "vs service"):
        table.add_column(column, justify="left" if column == "layout" else "right")
    for arm in experiment.arms:
        layout, versus = arm.layout, ratios.get(arm.label)
        threads = "-" if layout is None else f"{layout.total_threads}{'' if layout.fits_budget else ' (over budget)'}"
        cells = [("→ " if arm.label == recommended else "  ") + arm.label, threads, _number(arm.throughput_rps), _number(arm.p50),
                 _number(arm.p90), _number(arm.p99), effect_words(versus) if versus else ""]
        table.add_row(*map(Text, cells))
    return table


def _render_throttling(throttling: dict[str, Throttling], console: Console) -> None:
    """The quota periods throttled while measuring each layout, or that none was."""
    throttled = {name: t for name, t in throttling.items() if t.throttled_periods}
    for name, counts in throttled.items():
        console.print(Text(f"  throttled in {counts.throttled_periods} of {counts.periods} quota periods "
                       f"({counts.throttled_us / 1e6:.2f} s) while measuring {name}"))
    if throttling and not throttled:
        periods = sum(t.periods for t in throttling.values())
        console.print(Text(f"  cpu.stat: no throttled period in {periods} quota periods while measuring" if periods
                       else "  cpu.stat: no CPU quota periods elapsed (no quota), so nothing was throttled", style="dim"))


def _number(value: float | None) -> str:
    return f"{value:.1f}" if value is not None else "-"
