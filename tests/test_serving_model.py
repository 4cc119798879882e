"""How requests reach a shared predictor, as PD-SRC-005 and PD-LOAD-001 judge it from the source and the
launcher: Flask's app.run() is threaded unless threaded=False; its app.run() under the main block does not
run when gunicorn imports the app, whose worker class and threads decide; FastAPI runs a plain def route in
a thread pool, an async def route on its event loop unless it hands the call to threads. Each verdict says
where its serving model was read, and the two rules agree (tests/fixtures/serving: its README)."""

from __future__ import annotations

import os
import shutil
import textwrap
from dataclasses import replace

import pytest
from conftest import FIXTURES, report_json, run_doctor
from factories import make_facts
from paddle_doctor.base.vocabulary import SourcePatternKind
from paddle_doctor.checks import shared_predictor, source_shared_predictor
from paddle_doctor.judge.findings import Status
from paddle_doctor.source import read_source
from paddle_doctor.source.launchers import Service, folder_launcher, launched

SERVING = FIXTURES / "serving"
SHARED, ONE_AT_A_TIME = SourcePatternKind.SHARED_PREDICTOR_THREADS, SourcePatternKind.ONE_REQUEST_AT_A_TIME
NO_PROBES = ("--pid", "none", "--no-paddle", "--no-gpu")


def read(path, launcher=None):
    """The source at ``path`` as --source reads it: with the gunicorn.conf.py of its folder, where it has one."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    return read_source([str(path)], launcher=launcher if launcher is not None else folder_launcher([str(folder)]))


def serving(source) -> list[tuple[SourcePatternKind, int, str]]:
    return [(pattern.kind, pattern.location.line, pattern.detail) for pattern in source.patterns
            if pattern.kind in (SHARED, ONE_AT_A_TIME)]


# each fixture: what the serving model is, and the words that say where it was read
CASES = {
    "flask_default.py": (SHARED, ["app.run() at line 19, with no threaded=", "threaded is its default since Flask 1.0"]),
    "flask_unthreaded.py": (ONE_AT_A_TIME, ["app.run(threaded=False) at line 19", "one request at a time"]),
    "gunicorn_sync": (ONE_AT_A_TIME, ["gunicorn's sync workers, one request at a time in each",
                                      'gunicorn.conf.py:3 worker_class = "sync"', "threads 1, gunicorn's default",
                                      'its app.run() at line 19, under if __name__ == "__main__":, does not run']),
    "gunicorn_gthread": (SHARED, ["gunicorn's gthread workers, 4 threads in each", "gunicorn.conf.py:4 threads = 4",
                                  'gunicorn.conf.py:3 worker_class = "gthread"']),
    "fastapi_def.py": (SHARED, ["FastAPI's thread pool, which runs the plain def route predict() (line 18)"]),
    "fastapi_async.py": (ONE_AT_A_TIME, ["FastAPI's event loop, one request at a time in each process",
                                         "async route predict() (line 18) hands nothing to threads"]),
    "fastapi_executor.py": (SHARED, ["the async route predict() (line 20)", "loop.run_in_executor() at line 22"]),
    "fastapi_threadpool.py": (SHARED, ["the async route predict() (line 19)", "run_in_threadpool() at line 20"]),
}


@pytest.mark.parametrize("fixture", sorted(CASES))
def test_the_serving_model_is_read_with_where_it_is_decided(fixture):
    kind, words = CASES[fixture]
    ((found, line, detail),) = serving(read(SERVING / fixture))
    assert (found, line) == (kind, 10 if fixture == "fastapi_executor.py" else 9 if fixture == "fastapi_threadpool.py" else 8)
    for said in words:
        assert said in detail, (said, detail)
    assert "threaded by default" not in detail


@pytest.mark.parametrize("fixture", sorted(CASES))
def test_pd_src_005_and_pd_load_001_agree_and_say_the_serving_model(fixture):
    kind, words = CASES[fixture]
    report = report_json(run_doctor("--source", str(SERVING / fixture), "--json", *NO_PROBES))
    found = {finding["rule_id"]: finding for finding in report["findings"]}
    source, load = found["PD-SRC-005"], found["PD-LOAD-001"]
    expected = "fail" if kind == SHARED else "pass"
    assert (source["status"], load["status"]) == (expected, expected), (source, load)
    if kind == SHARED:
        assert words[0] in source["observed"] and words[0] in load["observed"]
    else:
        assert words[0] in source["message"]
    assert "behind a lock" not in load["message"]


def test_a_layout_said_to_be_a_lock_does_not_pass_where_the_code_takes_none():
    report = report_json(run_doctor("--source", str(SERVING / "flask_default.py"), "--layout", "lock", "--json", *NO_PROBES))
    found = {finding["rule_id"]: finding for finding in report["findings"]}
    assert found["PD-SRC-005"]["status"] == "fail"
    load = found["PD-LOAD-001"]
    assert load["status"] == "fail" and "though the layout given is 'lock'" in load["message"]


def test_gunicorn_workers_share_their_predictor_across_threads_in_each_worker_process():
    facts = make_facts(instances=2)
    facts = replace(facts, service_source=read(SERVING / "gunicorn_gthread"))
    (finding,) = shared_predictor.check(facts)
    assert finding.status == Status.FAIL and "in each of its 2 instances" in finding.message
    facts = replace(facts, service_source=read(SERVING / "gunicorn_sync"))
    (finding,) = shared_predictor.check(facts)
    assert finding.status == Status.PASS and finding.message == "concurrent requests reach worker processes with a predictor each"
    (finding,) = source_shared_predictor.check(facts)
    assert finding.status == Status.PASS and "gunicorn's sync workers, one request at a time in each" in finding.message


# ------------------------------------------------------------------ gunicorn as its command line starts it


def gunicorn(tmp_path, *arguments, environ=None):
    """The launcher of ``gunicorn ARGUMENTS app:app`` started in ``tmp_path``, where app.py is the Flask app."""
    shutil.copy(SERVING / "flask_default.py", tmp_path / "app.py")
    service = Service("/proc/77", str(tmp_path), environ or {}, None)
    return launched(service, ["/venv/bin/python3", "/venv/bin/gunicorn", *arguments, "app:app"])


@pytest.mark.parametrize(("arguments", "environ", "kind", "said"), [
    ((), {}, ONE_AT_A_TIME, ("gunicorn's sync workers, one request at a time in each (worker_class sync, gunicorn's default; "
                            "threads 1, gunicorn's default)")),
    (("-w", "2", "-k", "sync"), {}, ONE_AT_A_TIME, "-k sync, the command line (/proc/77/cmdline)"),
    (("--threads", "4"), {}, SHARED, ("gunicorn's sync workers, which gunicorn runs as gthread with threads above 1, 4 threads "
                                     "in each (worker_class sync, gunicorn's default; --threads 4, the command line (/proc/77/cmdline))")),
    (("-k", "gthread"), {"GUNICORN_CMD_ARGS": "--threads 2"}, SHARED, "--threads 2, GUNICORN_CMD_ARGS in /proc/77/environ"),
    (("-k", "gthread"), {}, ONE_AT_A_TIME, "gunicorn's gthread workers, one request at a time in each"),
    (("-k", "gevent"), {}, SHARED, "gunicorn's gevent workers, many requests at once in each"),
])
def test_gunicorns_worker_class_and_threads_decide_for_a_flask_app_it_imports(tmp_path, arguments, environ, kind, said):
    launcher = gunicorn(tmp_path, *arguments, environ=environ)
    assert launcher.entry == str(tmp_path / "app.py")
    ((found, _, detail),) = serving(read(tmp_path / "app.py", launcher))
    assert found == kind and said in detail, detail
    assert "does not run when gunicorn imports the app" in detail


def test_an_unguarded_app_run_runs_under_any_launcher_and_a_guarded_one_runs_as_a_script(tmp_path):
    (tmp_path / "app.py").write_text((SERVING / "flask_unthreaded.py").read_text().replace('if __name__ == "__main__":\n    ', ""))
    launcher = launched(Service("/proc/77", str(tmp_path), {}, None), ["/venv/bin/python3", "/venv/bin/gunicorn", "app:app"])
    ((found, _, detail),) = serving(read(tmp_path / "app.py", launcher))
    assert found == ONE_AT_A_TIME and detail.startswith("one predictor, reached by app.run(threaded=False) at line 18")
    script = launched(Service("/proc/77", str(SERVING), {}, None), ["/venv/bin/python3", "flask_default.py"])
    ((found, _, detail),) = serving(read(SERVING / "flask_default.py", script))
    assert found == SHARED and "app.run() at line 19" in detail


def test_a_worker_class_gunicorn_reads_from_an_expression_is_no_verdict(tmp_path):
    (tmp_path / "gunicorn.conf.py").write_text('import os\nworker_class = os.environ.get("WORKER", "sync")\n')
    shutil.copy(SERVING / "flask_default.py", tmp_path / "app.py")
    source = read(tmp_path)
    assert serving(source) == []
    (finding,) = source_shared_predictor.check(replace(make_facts(), service_source=source))
    assert finding.status == Status.PASS and finding.message == "no predictor is shared among threads unprotected"


# ------------------------------------------------------------------ Flask's own server


def flask_app(tmp_path, run: str | None) -> str:
    code = textwrap.dedent("""\
        import os

        from flask import Flask
        from paddle import inference

        app = Flask(__name__)
        predictor = inference.create_predictor(inference.Config("/m/inference.json", "/m/inference.pdiparams"))


        @app.route("/predict", methods=["POST"])
        def predict():
            predictor.run()
            return {}
        """) + (f"\n\nif __name__ == \"__main__\":\n    {run}\n" if run else "")
    path = tmp_path / "app.py"
    path.write_text(code)
    return str(path)


@pytest.mark.parametrize(("run", "kind", "said"), [
    ("app.run(threaded=True)", SHARED, "app.run(threaded=True) at line 17: Flask's server runs each request in a thread of its own"),
    ("app.run(processes=4)", ONE_AT_A_TIME, "app.run(processes=4) at line 17: Flask's server forks a process for each request"),
    (None, SHARED, "the Flask app (line 6), whose server neither the source nor a launcher shows: `flask run` serves it in threads"),
])
def test_flask_app_run_threaded_and_processes(tmp_path, run, kind, said):
    ((found, _, detail),) = serving(read_source([flask_app(tmp_path, run)]))
    assert found == kind and said in detail, detail


def test_threaded_from_an_expression_is_no_verdict(tmp_path):
    assert serving(read_source([flask_app(tmp_path, 'app.run(threaded=os.environ.get("THREADED") == "1")')])) == []


def test_a_thread_maker_in_the_code_wins_over_an_unthreaded_server(tmp_path):
    path = flask_app(tmp_path, "app.run(threaded=False)")
    with open(path, "a") as file:
        file.write("\nfrom concurrent.futures import ThreadPoolExecutor\n\nPOOL = ThreadPoolExecutor(4)\n")
    ((found, _, detail),) = serving(read_source([path]))
    assert found == SHARED and detail.startswith("one predictor is used by a ThreadPoolExecutor (line 21)")
