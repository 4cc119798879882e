"""The report a person reads first: summary on top, code that survives copy-paste, Markdown for CI
job summaries, a self-contained HTML page with charts that renders in a real browser, and a
progress display on the terminal. One real measurement of the misconfigured CNN (8 threads,
oneDNN off, as `paddle-doctor demo`) is recorded once and rendered in every format."""

import html
import json
import os
import pty
import re
import subprocess
import sys

import pytest
from browser import CHROMIUM, png_colours
from conftest import FIXTURES, fixture_root, report_json, run_doctor
from machine import observed, skip_unless

pytestmark = pytest.mark.timing  # judges live timings: .ci/run runs these again on the machine as it is

SUMMARY_LINES, MAX_LINES = 25, 120


@pytest.fixture(scope="module")
def measured_cnn(tmp_path_factory):
    """Facts of one measurement of the misconfigured CNN, the JSON report of them, and the machine's
    conditions while it measured."""
    from paddle_doctor.verify.modelzoo import build_model

    root = tmp_path_factory.mktemp("people")
    model = build_model("cnn", "pir", root / "cnn")
    facts = root / "facts.json"
    with observed() as machine:
        result = run_doctor("facts", "--model", str(model), "--pid", "none", "--threads", "8", "--no-onednn",
                            "--budget", "16", "--output", str(facts), timeout=300)
    assert result.returncode == 0, result.stderr
    report = report_json(run_doctor("--facts", str(facts), "--json"))
    return facts, report, machine.conditions


def text_report(facts, *args, columns="80"):
    result = run_doctor("--facts", str(facts), *args, env={"COLUMNS": columns})
    assert result.returncode == 1, result.stderr
    return result.stdout


def test_the_default_report_starts_with_a_measured_gain_and_fits_120_lines(measured_cnn):
    facts, report, conditions = measured_cnn
    lines = text_report(facts).splitlines()
    assert lines[-1].endswith("(exit 1)")
    skip_unless(conditions, onednn=True)  # a loaded machine measures no oneDNN gain, and finds more to report
    assert len(lines) <= MAX_LINES, "\n".join(lines)
    summary = "\n".join(lines[:SUMMARY_LINES])
    assert "PD-CPU-004" in summary and re.search(r"measured\s+oneDNN\s+on\s+vs\s+baseline(\s+at\s+threads=\d+)?:\s+\d+\.\d+x\s+faster", summary), summary
    assert "Recommended configuration" in summary and "import paddle.inference as paddle_infer" in summary


def test_problems_are_ranked_by_measured_gain(measured_cnn):
    facts, report, conditions = measured_cnn
    summary = text_report(facts, "-q", columns="200").splitlines()
    failing = [line for line in summary if line.startswith("✗ FAIL")]
    ranked = [line.split()[2] for line in failing]
    gains = [float(m.group(1)) if (m := re.search(r": measured [^:]+: (\d+\.\d+)x faster", line)) else 0.0 for line in failing]
    assert gains == sorted(gains, reverse=True), summary
    assert set(ranked) == {f["rule_id"] for f in report["findings"] if f["status"] == "fail"}
    skip_unless(conditions, onednn=True)
    assert gains[0] > 2, summary
    # oneDNN is the one fix measured several times faster; the whole recommendation, which includes it, may measure more
    assert ranked[0] in ("PD-CPU-004", "PD-CFG-001") and "PD-CPU-004" in ranked[:2], summary


@pytest.mark.parametrize("columns", ["40", "80", "200"])
def test_the_snippet_is_printed_byte_for_byte_as_in_the_json(measured_cnn, columns):
    facts, report, _ = measured_cnn
    snippet = report["verification"]["recommendation"]["snippet"]
    assert len(max(snippet.splitlines(), key=len)) > 80  # the Config line with the model's paths is long
    for args in ((), ("-q",), ("-v",)):
        assert "\n" + snippet in text_report(facts, *args, columns=columns)


def test_fix_code_is_never_wrapped_nor_indented(measured_cnn):
    facts, report, _ = measured_cnn
    out = text_report(facts, "-v", columns="40")
    for finding in report["findings"]:
        if finding["status"] == "fail":
            for change in finding["fix"]["changes"]:
                assert "\n" + change["code"].rstrip("\n") + "\n" in out


def test_the_snippet_pasted_from_an_80_column_terminal_runs(measured_cnn, tmp_path):
    facts, report, _ = measured_cnn
    lines = text_report(facts).splitlines()
    first = lines.index("import paddle.inference as paddle_infer")
    last = next(i for i in range(first, len(lines)) if lines[i].startswith("predictor = "))
    pasted = tmp_path / "service.py"
    pasted.write_text("\n".join(lines[first:last + 1]) + "\nprint(predictor.get_input_names())\n")
    result = subprocess.run([sys.executable, str(pasted)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert list(report["verification"]["model"]["inputs"]) == json.loads(result.stdout.strip().splitlines()[-1].replace("'", '"'))


def test_each_input_verdict_and_enforced_rule_is_shown(measured_cnn):
    facts, report, _ = measured_cnn
    out = " ".join(text_report(facts, columns="200").split())
    (image,) = report["verification"]["model"]["inputs"].values()
    assert f"input {image['name']}: {image['dtype']}, declared ?x3x224x224 (dynamic: dim 0); measured 1x3x224x224" in out
    assert f"chosen by {image['chosen_by']}" in out and f"--shape {image['name']}:DIMS" in out and "--inputs" in out
    assert "enforced: PD-CPU-010" in out
    verdicts = {f["rule_id"]: f["verdict"] for f in report["findings"] if f["verdict"]}
    assert verdicts and all(f"{rule_id} " in out and f"[{verdict}]" in out for rule_id, verdict in verdicts.items())


def test_quiet_is_the_summary_and_verbose_shows_every_check(measured_cnn):
    facts, report, _ = measured_cnn
    quiet, default, verbose = (text_report(facts, *args, columns="200") for args in (("-q",), (), ("-v",)))
    assert "PD-PADDLE-001" not in quiet and len(quiet.splitlines()) <= SUMMARY_LINES
    assert "✓ pass PD-PADDLE-001..004" in default  # the installation, and no known problem of this Paddle breaks it
    passed = next(f for f in report["findings"] if f["rule_id"] == "PD-PADDLE-001")
    assert f"✓ pass  PD-PADDLE-001 {passed['severity']} {passed['message']}" in verbose
    assert len(verbose.splitlines()) > len(default.splitlines()) > len(quiet.splitlines())


def test_several_shapes_show_the_p50_of_each_next_to_the_mix(measured_cnn, tmp_path):
    facts, _, _ = measured_cnn
    data = json.loads(facts.read_text())
    verification = data["verification"]
    verification["model"]["inputs"]["image"]["shapes"] = [[1, 3, 224, 224], [4, 3, 224, 224]]
    verification["recommendation"]["baseline"]["sample_p50"] = [11.5, 40.25]
    verification["recommendation"]["recommended"]["sample_p50"] = [2.5, 9.75]
    several = tmp_path / "facts.json"
    several.write_text(json.dumps(data))
    out = text_report(several, columns="200")
    assert "measured 1x3x224x224, 4x3x224x224" in out
    assert "p50 on image 4x3x224x224: baseline 40.2 ms; recommended 9.8 ms" in out
    assert "p50 over the mix: baseline" in out
    markdown = run_doctor("--facts", str(several), "--format", "markdown").stdout
    assert "| image 4x3x224x224 | 40.25 | 9.75 |" in markdown


def test_markdown_is_a_job_summary_with_a_table_and_the_exact_snippet(measured_cnn):
    facts, report, _ = measured_cnn
    result = run_doctor("--facts", str(facts), "--format", "markdown")
    assert result.returncode == 1, result.stderr
    markdown = result.stdout
    assert markdown.startswith("# paddle-doctor ") and "| status | rule | severity | verdict | what fixing it measured |" in markdown
    snippet = report["verification"]["recommendation"]["snippet"]
    assert f"```python\n{snippet}```" in markdown
    failing = [f["rule_id"] for f in report["findings"] if f["status"] == "fail"]
    assert all(f"| ✗ FAIL | {rule_id} |" in markdown for rule_id in failing)
    assert run_doctor("--facts", str(facts), "--format", "markdown").stdout == markdown


def test_html_is_one_self_contained_page_with_charts(measured_cnn, tmp_path):
    facts, report, _ = measured_cnn
    page = tmp_path / "report.html"
    result = run_doctor("--facts", str(facts), "--format", "html", "--output", str(page))
    assert result.returncode == 1 and "wrote the html report" in result.stderr
    html = page.read_text()
    assert "<script src" not in html and "<link" not in html and "url(" not in html
    assert html.count("<svg") >= 4 and "recommendation latency" in html and "threads sweep" in html
    assert "fusion coverage" in html and 'class="copy"' in html
    snippet = report["verification"]["recommendation"]["snippet"].rstrip("\n")
    assert snippet.replace("'", "&#x27;") in html


RECORDED_CONTAINER = ("--root", str(fixture_root("intel-noavx2-v1-quota")), "--threads", "8")


def test_markdown_and_html_of_a_recorded_container_are_whole_and_self_contained(tmp_path):
    """The same formats without a measurement, from a recorded container (no Paddle: in the fast tier)."""
    report = report_json(run_doctor(*RECORDED_CONTAINER, "--json"))
    failing = [f["rule_id"] for f in report["findings"] if f["status"] == "fail"]
    assert failing
    markdown = run_doctor(*RECORDED_CONTAINER, "--format", "markdown")
    assert markdown.returncode == report["exit_code"], markdown.stderr
    assert markdown.stdout.startswith("# paddle-doctor ")
    assert "| status | rule | severity | verdict | what fixing it measured |" in markdown.stdout
    assert all(f"| ✗ FAIL | {rule_id} |" in markdown.stdout for rule_id in failing)
    page = tmp_path / "report.html"
    result = run_doctor(*RECORDED_CONTAINER, "--format", "html", "--output", str(page))
    assert result.returncode == report["exit_code"] and "wrote the html report" in result.stderr
    html = page.read_text()
    assert html.lower().startswith("<!doctype html>")
    assert "<script src" not in html and "<link" not in html and "url(" not in html
    assert all(rule_id in html for rule_id in failing)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")
def test_html_renders_in_headless_chromium_without_console_errors(measured_cnn, tmp_path):
    facts, _, _ = measured_cnn
    page = tmp_path / "report.html"
    run_doctor("--facts", str(facts), "--format", "html", "--output", str(page))
    shot = tmp_path / "shot.png"
    browser = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}",
               "--enable-logging=stderr", "--v=0"]
    result = subprocess.run([*browser, f"--screenshot={shot}", "--window-size=1000,1600", page.as_uri()],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    assert "CONSOLE" not in result.stderr and "Uncaught" not in result.stderr, result.stderr[-2000:]
    assert png_colours(shot.read_bytes()) > 16
    dom = subprocess.run([*browser, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert "recommendation latency" in dom and "<svg" in dom


@pytest.mark.slow
def test_progress_says_what_it_measures_and_the_budget_left_on_a_terminal(tmp_path):
    from paddle_doctor.verify.modelzoo import build_model

    model = build_model("cnn", "pir", tmp_path / "cnn")
    args = ["--model", str(model), "--pid", "none", "--budget", "4", "--threads", "2"]
    assert "budget left" in _on_a_terminal(args)
    assert "budget left" not in _on_a_terminal([*args, "--json"])


def _on_a_terminal(args: list[str]) -> str:
    """What the CLI writes to a pseudo-terminal, stdout and stderr together."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["COLUMNS"] = "120"
        os.execv(sys.executable, [sys.executable, "-m", "paddle_doctor", *args])
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode("utf-8", "replace")


def test_budget_left_says_seconds_left_or_over():
    from paddle_doctor.cli import budget_left

    assert budget_left(12.2, 40) == "28 s of the 40 s budget left"
    assert budget_left(43.0, 40) == "3 s over the 40 s budget"


def test_markdown_and_html_say_which_process_and_source_they_read_as_the_text_report_does():
    args = ("--root", str(FIXTURES / "processes" / "one-service"), "--pid", "auto", "--no-paddle", "--no-gpu")
    text = run_doctor(*args, env={"COLUMNS": "1000"}).stdout.splitlines()
    process = next(line for line in text if line.startswith("process 4242 (the only process with Paddle mapped"))
    source = next(line for line in text if line.startswith("source: "))
    assert "; 2 threads; " in process and source.startswith("source: 1 file read, 1 Config built ("), source
    for fmt in ("markdown", "html"):
        page = html.unescape(run_doctor(*args, "--format", fmt).stdout)
        assert "## Service" in page or "<h2>Service</h2>" in page
        assert process in page and source in page
        assert page.index(process) < page.index("INFER_THREADS=4 (/proc/4242/environ)") < page.index(source)
        assert "threads = 4 (source: " in page
