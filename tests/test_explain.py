"""`paddle-doctor explain ID`: every fix it prints is either filled in for this machine and runs as
pasted (Python parses, shell passes `bash -n`, a Dockerfile line passes hadolint), or is a template
whose placeholders read `<name>` and cannot run; code and links are never split, at 80 columns too."""

from __future__ import annotations

import pytest
from conftest import REPO, fixture_root, run_doctor
from paddle_doctor.facts.budget import cpu_budget
from paddle_doctor.facts.predictor import ServiceConfig
from paddle_doctor.judge.rules import load_rules
from paddle_doctor.probes import collect_facts
from paddle_doctor.probes.context import ProbeContext
from paddle_doctor.render.explain import fix_blocks, machine_values, needs_machine
from snippets import TEMPLATE_PLACEHOLDER, UNFILLED, pasting_problem, python_code_outside_strings_and_comments

RULES = load_rules().ordered()
QUOTA_ROOT = "intel-noavx2-v1-quota"  # a cgroup quota of 2 CPUs on an 8-CPU host


def explained(rule_id: str, *args: str) -> list[str]:
    result = run_doctor("explain", rule_id, *args, env={"COLUMNS": "80"})
    assert result.returncode == 0 and not result.stderr, result.stderr
    return result.stdout.splitlines()


@pytest.mark.parametrize("rule", RULES, ids=[rule.id for rule in RULES])
def test_every_printed_fix_runs_as_pasted_or_is_a_template_that_cannot(rule):
    known = machine_values(root=str(fixture_root(QUOTA_ROOT)))
    for block in fix_blocks(rule, known):
        assert not UNFILLED.search(block.code), block  # never `{name}`: valid Python that fails at run time
        if not block.is_template:
            assert pasting_problem(block.kind, block.code) is None, (block, pasting_problem(block.kind, block.code))
            continue
        assert set(TEMPLATE_PLACEHOLDER.findall(block.code)) == set(block.missing), block
        if block.kind == "python" and TEMPLATE_PLACEHOLDER.search(python_code_outside_strings_and_comments(block.code)):
            assert pasting_problem("python", block.code) is not None, block  # `<name>` is a syntax error
        filled = TEMPLATE_PLACEHOLDER.sub("x1", block.code)
        assert pasting_problem(block.kind, filled) is None, (block, pasting_problem(block.kind, filled))  # filled in, it runs


@pytest.mark.parametrize("rule", RULES, ids=[rule.id for rule in RULES])
def test_the_cli_prints_each_fix_whole_on_its_own_lines_at_80_columns(rule):
    lines = explained(rule.id)
    text = "\n".join(lines)
    for block in fix_blocks(rule, machine_values() if needs_machine(rule) else None):
        assert "\n" + block.code + "\n" in text + "\n", block
        label = lines[lines.index(block.code.splitlines()[0]) - 1]
        assert ("a template: fill in" in label) == block.is_template, label
    for url in rule.docs:
        assert url in lines, url  # a link on a line of its own, never split
    assert not [line for line in lines if line != line.rstrip()]  # no trailing spaces


def test_threads_are_filled_in_from_the_cpu_budget_of_this_machine():
    budget = cpu_budget(collect_facts(ProbeContext("/"), ServiceConfig(), None, 1.0))
    lines = explained("PD-CPU-010")
    assert f"config.set_cpu_math_library_num_threads({budget.whole_cpus})" in lines
    assert any(line.startswith(f"filled in for this machine: a budget of {budget.describe()}, 1 instance") for line in lines)
    split = explained("PD-CPU-010", "--instances", str(budget.whole_cpus + 1))
    assert "config.set_cpu_math_library_num_threads(1)" in split  # more instances than CPUs: one thread each


def test_a_quota_fills_in_its_own_budget():
    known = machine_values(instances=1, root=str(fixture_root(QUOTA_ROOT)))
    assert known.values == {"budget": 2, "threads_per_instance": 2}, known
    (python, _) = fix_blocks(load_rules()["PD-CPU-010"], known)
    assert python.code == "config.set_cpu_math_library_num_threads(2)" and not python.is_template


def test_a_placeholder_the_machine_cannot_fill_is_a_template():
    lines = explained("PD-TRT-003")
    assert "shell, a template: fill in <service_user>, <directory>" in lines
    assert "chown -R <service_user> <directory>" in lines


def test_the_controls_pasting_catches_broken_code():
    """The controls for the tests above: each paste check does fail on broken code."""
    assert pasting_problem("python", "config.set_cpu_math_library_num_threads(<threads>)")
    assert pasting_problem("shell", "docker run ( --cpus=2")
    assert pasting_problem("dockerfile", "ENV")
    assert pasting_problem("kubernetes", "resources: {limits: {cpu: ")
    assert pasting_problem("python", "config.set_cpu_math_library_num_threads({threads_per_instance})") is None  # why `{}` is banned


def test_a_rules_files_text_and_links_are_printed_as_text_never_as_markup_or_terminal_codes(tmp_path):
    rules = tmp_path / "rules.yaml"
    text = (REPO / "rules.yaml").read_text()
    planted = "[bold red]PLANTED[/bold red] \\x1b[2J"
    text = text.replace("    docs:\n      - https://docs.python.org/3/library/ast.html",
                        f'    docs:\n      - "https://docs.python.org/3/library/ast.html#{planted}"', 1)
    cause = next(line for line in text.splitlines() if line.startswith("    cause: The doctor reads at most 2,000"))
    text = text.replace(cause, f'    cause: "{planted} {cause.removeprefix("    cause: ")}"', 1)
    rules.write_text(text)
    result = run_doctor("explain", "PD-SRC-008", "--rules", str(rules), env={"COLUMNS": "1000"})
    assert result.returncode == 0, result.stderr
    shown = "[bold red]PLANTED[/bold red] \\x1b[2J"  # the markup as it is written, the escape written out
    assert result.stdout.count(shown) == 2 and "\x1b" not in result.stdout, result.stdout
