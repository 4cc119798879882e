"""paddle-doctor fleet on reports the real doctor wrote for differing fixture roots: pods grouped by
findings and facts, the pods that differ named with what differs, every format, bad input."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from browser import chromium, png_colours  # noqa: F401 (a fixture)
from conftest import REPO, fixture_root, report_with_its_exit, run_doctor

FLEET_SCHEMA = json.loads((REPO / "doctor" / "schemas" / "fleet.schema.json").read_text())
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def doctor_report(root: str, *service: str) -> str:
    result = run_doctor("--root", str(fixture_root(root)), *service, "--json", unset=THREAD_VARIABLES)
    report_with_its_exit(result)
    return result.stdout


@pytest.fixture(scope="session")
def recorded(tmp_path_factory) -> dict[str, str]:
    """Reports of pods on differing roots: two alike, one with 8 threads under a half-CPU quota,
    one on a CPU without AVX2 with a 2-CPU quota."""
    alike = doctor_report("intel-avx512-v2-max", "--threads", "4", "--instances", "2")
    return {"pod-a": alike, "pod-b": alike,
            "pod-c": doctor_report("intel-avx512-v2-halfcpu", "--threads", "8"),
            "pod-d": doctor_report("intel-noavx2-v1-quota", "--threads", "2")}


def folder(tmp_path: Path, recorded: dict[str, str], *pods: str) -> Path:
    for pod in pods:
        (tmp_path / f"{pod}.json").write_text(recorded[pod])
    return tmp_path


def fleet_json(*args: str) -> tuple[int, dict]:
    result = run_doctor("fleet", *args, "--json")
    assert result.stdout, result.stderr
    report = json.loads(result.stdout)
    jsonschema.validate(report, FLEET_SCHEMA)
    return result.returncode, report


def test_the_pod_with_8_threads_under_half_a_cpu_is_named_with_pd_cpu_010(tmp_path, recorded):
    code, report = fleet_json(str(folder(tmp_path, recorded, "pod-a", "pod-b", "pod-c")))
    assert code == 1 and report["exit_code"] == 1 and report["pods"] == 3
    usual, outlier = report["groups"]
    assert usual["pods"] == ["pod-a", "pod-b"] and usual["usual"] and usual["differences"] == []
    assert outlier["pods"] == ["pod-c"] and not outlier["usual"]
    differences = {d["what"]: (d["usual"], d["here"]) for d in outlier["differences"]}
    assert differences["PD-CPU-010"] == ("pass (error)", "fail (error)")
    assert differences["threads x instances"] == ("4 x 2", "8 x 1")
    assert differences["CPU budget"] == ("8 CPUs", "0.5 CPUs")
    assert "CPU" not in differences and "ISA" not in differences
    (over,) = [f for f in outlier["findings"] if f["rule_id"] == "PD-CPU-010"]
    assert over["status"] == "fail" and "0.5 CPUs" in over["message"]
    assert report["problem_pods"] == ["pod-c"] and outlier["problems"] >= 1 and usual["problems"] == 0


def test_a_pod_on_another_cpu_differs_in_cpu_and_isa(tmp_path, recorded):
    _, report = fleet_json(str(folder(tmp_path, recorded, "pod-a", "pod-b", "pod-d")))
    (outlier,) = [group for group in report["groups"] if not group["usual"]]
    differences = {d["what"]: (d["usual"], d["here"]) for d in outlier["differences"]}
    assert outlier["pods"] == ["pod-d"]
    assert "E5-2670" in differences["CPU"][1] and "avx2" not in differences["ISA"][1].split()
    assert differences["PD-CPU-002"][1].startswith("fail")


def test_alike_pods_are_one_group_and_fail_on_decides_the_exit_code(tmp_path, recorded):
    reports = str(folder(tmp_path, recorded, "pod-a", "pod-b"))
    code, report = fleet_json(reports)
    (group,) = report["groups"]
    assert code == 0 and group["usual"] and group["pods"] == ["pod-a", "pod-b"] and report["problem_pods"] == []
    # their only problem is an info-severity one (PD-CPU-014): it counts with --fail-on info
    assert {f["severity"] for f in group["findings"]} == {"info"}
    code, report = fleet_json(reports, "--fail-on", "info")
    assert code == 1 and report["problem_pods"] == ["pod-a", "pod-b"]


def test_files_and_folders_can_be_mixed_and_same_named_files_keep_their_paths(tmp_path, recorded):
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir(), second.mkdir()
    folder(first, recorded, "pod-a")
    folder(second, recorded, "pod-a", "pod-c")
    _, report = fleet_json(str(first / "pod-a.json"), str(second))
    pods = sorted(pod for group in report["groups"] for pod in group["pods"])
    assert pods == sorted([str(first / "pod-a.json"), str(second / "pod-a.json"), "pod-c"])


def test_a_report_without_the_profile_still_compares_on_the_host(tmp_path, recorded):
    older = json.loads(recorded["pod-a"])
    del older["profile"]
    folder(tmp_path, recorded, "pod-a")
    (tmp_path / "older.json").write_text(json.dumps(older))
    _, report = fleet_json(str(tmp_path))
    facts = {group["pods"][0]: group["facts"] for group in report["groups"]}
    assert facts["older"]["threads"] == "unknown" and facts["pod-a"]["threads"] == "4 x 2"
    assert facts["older"]["cpu_budget"] == facts["pod-a"]["cpu_budget"] == "8 CPUs"


def test_the_report_profile_carries_the_service_and_validates(recorded, report_schema):
    report = json.loads(recorded["pod-c"])
    jsonschema.validate(report, report_schema)
    assert report["profile"]["threads"] == 8 and report["profile"]["instances"] == 1
    assert report["profile"]["paddle_build"] == "Paddle not probed" and report["profile"]["cache"] is None


def test_markdown_is_a_table_and_html_a_page(tmp_path, recorded):
    (tmp_path / "reports").mkdir()
    reports = str(folder(tmp_path / "reports", recorded, "pod-a", "pod-b", "pod-c"))
    markdown = run_doctor("fleet", reports, "--format", "markdown")
    assert markdown.returncode == 1
    rows = [line for line in markdown.stdout.splitlines() if line.startswith("| ")]
    assert rows[0] == "| group | pods | count | differs from the usual group | problems |"
    assert any(row.startswith("| 2 | pod-c | 1 | ") and "PD-CPU-010" in row for row in rows)
    page = tmp_path / "fleet.html"
    assert run_doctor("fleet", reports, "--format", "html", "--output", str(page)).returncode == 1
    cells: list[str] = []

    class Cells(HTMLParser):
        def handle_data(self, data: str) -> None:
            cells.append(data)

    Cells().feed(page.read_text())
    assert "pod-a, pod-b" in cells and "pod-c" in cells and "threads x instances" in cells
    assert "<script" not in page.read_text() and "http" not in page.read_text()
    text = run_doctor("fleet", reports)
    assert "pod-c" in text.stdout and "(pod-c), 0 not diagnosed (exit 1)" in text.stdout


@pytest.mark.parametrize("setup, expected", [
    (lambda d: [str(d / "missing.json")], "missing.json: no such file or folder"),
    (lambda d: [str(d)], "no *.json reports in this folder"),
    (lambda d: [str(d / "facts.json")], "facts.json: not a paddle-doctor report"),
    (lambda d: [str(d / "broken.json")], "broken.json: not JSON"),
    (lambda d: [], "no reports given"),
    (lambda d: [str(d / "tool.json")], "tool.json: not a paddle-doctor report"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, setup, expected):
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "facts.json").write_text('{"schema_version": 1, "cpu": {}}')
    (tmp_path / "broken.json").write_text('{"schema_version": ')
    (tmp_path / "tool.json").write_text('{"tool": "x", "schema_version": 1}')
    before = {path: path.read_bytes() for path in tmp_path.glob("*.json")}
    result = run_doctor("fleet", *setup(empty if expected.startswith("no *") else tmp_path))
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and expected in result.stderr and "Traceback" not in result.stderr
    assert {path: path.read_bytes() for path in tmp_path.glob("*.json")} == before


def test_a_report_with_a_field_of_the_wrong_type_is_one_line(tmp_path, recorded):
    odd = json.loads(recorded["pod-a"])
    odd["host"]["cpu_budget"] = "two"
    (tmp_path / "odd.json").write_text(json.dumps(odd))
    result = run_doctor("fleet", str(tmp_path / "odd.json"))
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    assert "odd.json: not a complete paddle-doctor report" in result.stderr


def test_a_report_named_twice_is_one_pod(tmp_path, recorded):
    folder(tmp_path, recorded, "pod-a", "pod-c")
    _, report = fleet_json(str(tmp_path), str(tmp_path), str(tmp_path / "pod-a.json"))
    assert sorted(pod for group in report["groups"] for pod in group["pods"]) == ["pod-a", "pod-c"]


def test_a_report_of_another_schema_version_is_refused(tmp_path, recorded):
    newer = json.loads(recorded["pod-a"])
    newer["schema_version"] = 9
    (tmp_path / "newer.json").write_text(json.dumps(newer))
    result = run_doctor("fleet", str(tmp_path))
    assert result.returncode == 2 and "schema_version is 9, this paddle-doctor reads 2" in result.stderr


def test_with_no_majority_the_groups_are_compared_with_the_healthiest(tmp_path, recorded):
    code, report = fleet_json(str(folder(tmp_path, recorded, "pod-a", "pod-c", "pod-d")))
    assert code == 1 and report["compared_with"] == "healthiest" and len(report["groups"]) == 3
    healthiest, *others = report["groups"]
    # pod-a's only problem is of severity info; pod-c's threads exceed its budget (error), pod-d's CPU lacks AVX2
    assert healthiest["pods"] == ["pod-a"] and healthiest["problems"] == 0 and healthiest["differences"] == []
    assert not any(group["usual"] for group in report["groups"])
    outlier = {group["pods"][0]: {d["what"]: (d["usual"], d["here"]) for d in group["differences"]} for group in others}
    assert outlier["pod-c"]["PD-CPU-010"] == ("pass (error)", "fail (error)")
    assert outlier["pod-d"]["PD-CPU-002"][1].startswith("fail")
    text = run_doctor("fleet", str(tmp_path), env={"COLUMNS": "200"}).stdout
    assert "3 pods in 3 groups; no majority: 2 pods differ from the healthiest group (group 1, fewest problems)" in text
    markdown = run_doctor("fleet", str(tmp_path), "--format", "markdown").stdout
    assert "| group | pods | count | differs from the healthiest group | problems |" in markdown
    assert "| 1 (healthiest) | pod-a | 1 | - |" in markdown and "(usual)" not in markdown


def test_with_no_majority_and_no_healthiest_group_none_is_compared(tmp_path, recorded):
    other = json.loads(recorded["pod-a"])
    other["host"]["cpu_model"] = "Intel(R) Xeon(R) Platinum 8480+"  # another node type, the same findings
    folder(tmp_path, recorded, "pod-a")
    (tmp_path / "pod-x.json").write_text(json.dumps(other))
    code, report = fleet_json(str(tmp_path))
    assert code == 0 and report["compared_with"] == "none"
    assert [group["pods"] for group in report["groups"]] == [["pod-a"], ["pod-x"]]
    assert all(not group["usual"] and group["differences"] == [] for group in report["groups"])
    markdown = run_doctor("fleet", str(tmp_path), "--format", "markdown").stdout
    assert "2 pods in 2 groups; no majority and no group healthier than the others: the groups are not compared" in markdown
    assert "| group | pods | count | problems |" in markdown and "differs from" not in markdown
    assert "## Facts by group" in markdown and "| fact | group 1 | group 2 |" in markdown
    assert any(row.startswith("| CPU | Intel(R) Xeon(R) Platinum 8358") and "Platinum 8480+" in row for row in markdown.splitlines())


def test_the_findings_matrix_names_each_pods_problem_by_rule(tmp_path, recorded):
    reports = str(folder(tmp_path, recorded, "pod-a", "pod-b", "pod-c"))
    markdown = run_doctor("fleet", reports, "--format", "markdown").stdout.splitlines()
    header = markdown[markdown.index("## Findings by pod") + 2]
    rules = header.strip("| ").split(" | ")[2:]
    assert header.startswith("| pod | group | ") and "PD-CPU-010" in rules and "PD-CPU-014" in rules
    rows = {line.split(" | ")[0].strip("| "): line.strip("| ").split(" | ")[2:] for line in markdown
            if line.startswith(("| pod-a |", "| pod-b |", "| pod-c |"))}
    column = rules.index("PD-CPU-010")
    assert rows["pod-c"][column] == "fail (error)" and rows["pod-a"][column] == rows["pod-b"][column] == "-"
    assert rows["pod-a"] == rows["pod-b"] and rows["pod-a"][rules.index("PD-CPU-014")] == "fail (info)"
    page = run_doctor("fleet", reports, "--format", "html").stdout
    assert '<td data-label="PD-CPU-010" class="fail">fail (error)</td>' in page
    assert '<td data-label="PD-CPU-010" class="ok">-</td>' in page


def test_output_to_a_file_says_where_and_what_the_fleet_found(tmp_path, recorded):
    reports = str(folder(tmp_path, recorded, "pod-a", "pod-c"))
    for fmt in ("html", "text", "json"):
        page = tmp_path / f"fleet.{fmt}"
        result = run_doctor("fleet", reports, "--format", fmt, "--output", str(page))
        assert result.returncode == 1 and result.stdout == "" and page.read_text()
        assert result.stderr == (f"paddle-doctor: wrote the {fmt} fleet report to {page} "
                                 f"(1 pod with problems at or above 'error' (pod-c), 0 not diagnosed (exit 1))\n")


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_the_fleet_page_fits_a_phone_and_a_desktop_and_colours_the_matrix(tmp_path, recorded, chromium, viewport):
    reports = str(folder(tmp_path, recorded, "pod-a", "pod-b", "pod-c", "pod-d"))
    page = tmp_path / "fleet.html"
    assert run_doctor("fleet", reports, "--format", "html", "--output", str(page)).returncode == 1
    width, height, mobile = {"phone": (390, 844, True), "desktop": (1280, 900, False)}[viewport]
    session = chromium.open(page.as_uri(), width, height, mobile)
    layout = json.loads(chromium.evaluate(session, """JSON.stringify({
        innerWidth: innerWidth, scrollWidth: document.documentElement.scrollWidth,
        colours: Object.fromEntries(['fail', 'warn', 'ok'].map(css => [css,
            [...new Set([...document.querySelectorAll('td.' + css)].map(td => getComputedStyle(td).backgroundColor))]]))})"""))
    chromium.screenshot(session, tmp_path / f"fleet-{viewport}.png")
    assert png_colours((tmp_path / f"fleet-{viewport}.png").read_bytes()) > 16
    assert layout["innerWidth"] == width and layout["scrollWidth"] <= width, layout
    colours = layout["colours"]
    assert all(len(colours[css]) == 1 for css in ("fail", "ok")), colours  # pod-c's and pod-d's problems, the others' none
    assert len({colours["fail"][0], colours["ok"][0], "rgba(0, 0, 0, 0)"}) == 3, colours
