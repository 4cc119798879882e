"""The ``fix`` command from its options to its exit code: facts collected (or read), the fix planned and placed,
its diff printed, and with ``--write`` the files written, then with ``--verify`` the patched configuration
measured against the original."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from ..base import children
from ..base.escape import terminal_line
from ..facts import Facts
from .command import FixOptions, FixResult, fix
from .files import shown_path
from .places import Targets

if TYPE_CHECKING:
    from ..pipeline import ProbeOptions, Reporter

EXIT_CLEAN, EXIT_CHANGES = 0, 1


def run_fix(params: dict[str, Any], probe: ProbeOptions, reporter: Reporter) -> int:
    from ..judge.rules import load_rules
    from ..pipeline import collect, from_file, policy_for

    if params["container"] and not params["manifest"]:
        raise click.UsageError("--container names a container of --manifest: give the manifest with --manifest")
    if params["verify"] and not params["write"]:
        raise click.UsageError("--verify measures the patched files: it needs --write")
    if params["verify"] and not (probe.service.model or probe.measure):
        raise click.UsageError("--verify measures the model: give it with --model, or --measure for a recorded service")
    rulebook = load_rules(params["rules_file"])
    settings = policy_for(params["settings_file"], (), rulebook)
    targets = Targets(probe.service.config, params["dockerfile"], params["manifest"], params["container"])
    options = FixOptions(params["unsafe"], tuple(params["select"]), tuple(params["ignore"]), targets)
    if params["facts_file"]:
        facts = from_file(params["facts_file"], probe.service)
    else:
        facts = collect(probe, reporter)
    with children.phase("planning the fixes", deferred=True):
        result = fix(facts, rulebook, settings, options, project_folders(facts, probe.source_paths, targets))
    diff = result.diff(os.getcwd())
    click.echo(diff, nl=False)

    def say(line: str) -> None:  # lines quote the service's files and paths: written out, never sent to the terminal raw
        reporter.say(terminal_line(f"paddle-doctor fix: {line}"))

    for line in summary_lines(result):
        say(line)
    if not params["write"]:
        if diff:
            say(f"{plural(len(result.applied), 'fix', 'fixes')} in {plural(len(result.patches), 'file', 'files')} shown; "
                "--write applies them")
        return EXIT_CHANGES if diff or result.refused else EXIT_CLEAN
    if diff:
        from .files import vcs_state, write_all

        warning = vcs_state([patch.read.path for patch in result.patches])
        if warning:
            say(f"warning: {warning}")
        with children.phase("writing the fixes", deferred=True):
            written = write_all(result.patches)
        say(f"applied {plural(len(result.applied), 'fix', 'fixes')} in {plural(len(written), 'file', 'files')}: "
            f"{', '.join(shown_path(path, os.getcwd()) for path in written)}")
        if params["verify"]:
            from .verified import verify_written

            for line in verify_written(facts, probe, reporter, result.applied):
                say(line)
    return EXIT_CHANGES if result.refused else EXIT_CLEAN


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def project_folders(facts: Facts, source_paths: tuple[str, ...], targets: Targets) -> list[str]:
    """The folders whose files the fix may edit: those the user named, and the folder of the service's script."""
    named = [*source_paths, *(path for path in (targets.config, targets.dockerfile, targets.manifest) if path)]
    if facts.service_process.script:
        named.append(facts.service_process.script)
    return sorted({os.path.realpath(path if os.path.isdir(path) else os.path.dirname(path) or ".") for path in named})


def summary_lines(result: FixResult) -> list[str]:
    """What the fix did not do, one line each, then the count of what it does."""
    lines = [f"not applied: {one.wanted.rule_id} {one.wanted.setting}: {one.refused}" for one in result.refused]
    lines += [f"passed over: {one.rule_id} {one.setting}: {one.why}" for one in result.passed]
    if result.hidden:
        lines.append(f"{plural(len(result.hidden), 'unsafe fix', 'unsafe fixes')} not shown "
                     f"({', '.join(f'{one.rule_id} {one.setting}' for one in result.hidden)}); --unsafe-fixes shows "
                     f"{'them' if len(result.hidden) != 1 else 'it'}")
    if result.left_out:
        lines.append(f"{plural(result.left_out, 'change', 'changes')} left out by --select / --ignore")
    if not result.applied and not result.refused and not result.hidden and not result.left_out:
        lines.append("nothing to change: the service's files already say what the doctor recommends")
    return lines

