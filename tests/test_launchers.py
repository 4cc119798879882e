"""The service's code is found as its launcher finds it, from the live process's command line: ``gunicorn
app:app``, ``uvicorn pkg.mod:create_app --factory``, ``python -m pkg``, ``celery -A proj worker``,
``python -m hypercorn`` with PYTHONPATH, and console scripts (their entry point from the distribution's
entry_points.txt, or the script's own import), on the service interpreter's sys.path (its working directory,
PYTHONPATH, the venv's site-packages under --root); where it is not found, one line says why. The launcher's
settings (gunicorn's command line, GUNICORN_CMD_ARGS, its configuration file; uvicorn's, hypercorn's and
celery's workers) are settings with an origin, the workers the service's instances where no live tree says
more. On a recorded /proc tree (tests/fixtures/launchers: processes 41-51 under /srv, a venv at /venv)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, report_json, run_doctor
from paddle_doctor.facts.launcher import Launcher, LauncherKnob
from paddle_doctor.probes.context import ProbeContext
from paddle_doctor.probes.process import open_service_process
from paddle_doctor.source.launchers import config_settings

ROOT = FIXTURES / "launchers"
SITE = "/venv/lib/python3.10/site-packages"
NO_PROBES = ("--no-paddle", "--no-gpu")
GUNICORN_SERVICE = FIXTURES / "processes" / "gunicorn-service"


def launcher_of(pid: int, root: Path = ROOT):
    facts, _ = open_service_process(ProbeContext(root), pid, 0)
    assert facts.launcher is not None
    return facts, facts.launcher


def settings_of(launcher) -> dict[str, tuple[object, str]]:
    return {str(setting.name): (setting.value, setting.detail) for setting in launcher.settings}


def source_of(pid: int, root: Path = ROOT) -> dict:
    return report_json(run_doctor("--root", str(root), "--pid", str(pid), "--json", *NO_PROBES))["service"]


@pytest.mark.parametrize(("pid", "launcher", "target", "entry", "threads"), [
    (41, Launcher.GUNICORN, "app:app", "/srv/app.py", 4),
    (42, Launcher.UVICORN, "api.main:create_app", "/srv/api/main.py", 3),
    (43, Launcher.MODULE, "pkg", "/srv/pkg/__main__.py", 2),
    (44, Launcher.CELERY, "proj", "/srv/proj/celery.py", 7),
    (45, Launcher.CONSOLE_SCRIPT, "serve = shop.cli:main", f"{SITE}/shop/cli.py", 6),
    (46, Launcher.CONSOLE_SCRIPT, "legacy = legacy_tool.run:main", f"{SITE}/legacy_tool/run.py", 5),
    (48, Launcher.HYPERCORN, "extra_app:app", "/srv/libs/extra_app.py", 9),
])
def test_each_launcher_leads_to_the_file_of_the_services_code_and_its_config_is_read(pid, launcher, target, entry, threads):
    facts, found = launcher_of(pid)
    assert (found.launcher, found.target, found.entry, found.reason) == (launcher, target, entry, None)
    assert (facts.script, facts.script_source) == (entry, found.entry_source)
    assert found.entry_source.startswith(f"/proc/{pid}/cmdline")
    service = source_of(pid)
    assert service["source"]["files"][0] == str(ROOT / entry.lstrip("/"))
    said = {setting["name"]: setting for setting in service["settings"]}
    assert said["threads"]["value"] == threads and said["threads"]["origin"] == "source", said


def test_a_console_script_is_followed_by_its_distributions_entry_point_or_its_own_import():
    _, listed = launcher_of(45)
    assert f"its entry point in {SITE}/shop-1.0.dist-info/entry_points.txt" in listed.entry_source
    _, wrapped = launcher_of(46)
    assert "the script's own import" in wrapped.entry_source  # legacy_tool has no entry_points.txt
    _, gunicorn = launcher_of(41)
    assert f"gunicorn, its entry point in {SITE}/gunicorn-23.0.0.dist-info/entry_points.txt" in gunicorn.entry_source


def test_the_module_is_looked_for_on_the_services_sys_path_its_cwd_pythonpath_and_site_packages():
    _, hypercorn = launcher_of(48)  # PYTHONPATH=/srv/libs in its environ
    assert hypercorn.search == ["/srv", "/srv/libs", SITE]
    _, gunicorn = launcher_of(41)
    assert gunicorn.search == ["/srv", SITE]


@pytest.mark.parametrize(("pid", "reason"), [
    (47, (f"gunicorn's application missing:app (/proc/47/cmdline: gunicorn, its entry point in {SITE}/gunicorn-23.0.0.dist-info/"
         f"entry_points.txt): the module missing is not found on the service's sys.path (/srv, {SITE})")),
    (49, "the interpreter runs code given on its command line (-c), not a file (/proc/49/cmdline)"),
])
def test_a_target_that_cannot_be_resolved_says_why_and_no_file_is_guessed(pid, reason):
    facts, found = launcher_of(pid)
    assert (found.entry, facts.script, found.reason) == (None, None, reason)
    result = run_doctor("--root", str(ROOT), "--pid", str(pid), "--json", *NO_PROBES)
    source = report_json(result)["service"]["source"]
    assert (source["status"], source["reason"], source["files"]) == ("not_read", reason, [])
    assert f"paddle-doctor: no source from process {pid}: {reason}" in result.stderr


def test_gunicorn_retitled_by_setproctitle_still_names_its_app_and_its_files_settings():
    _, found = launcher_of(50)  # 'gunicorn: master [app:app]'
    assert (found.launcher, found.target, found.entry) == (Launcher.GUNICORN, "app:app", "/srv/app.py")
    assert "its command-line options are not read" in found.reason
    assert settings_of(found)["workers"] == (2, "/srv/gunicorn.conf.py:4 workers = 2")


def test_gunicorns_settings_come_from_the_command_line_over_its_variable_over_its_configuration_file():
    _, found = launcher_of(41)  # -w 3; GUNICORN_CMD_ARGS=--threads 8; ./gunicorn.conf.py: workers 2, threads 4, gthread
    assert settings_of(found) == {
        "workers": (3, "-w 3, the command line (/proc/41/cmdline)"),
        "threads": (8, "--threads 8, GUNICORN_CMD_ARGS in /proc/41/environ"),
        "worker_class": ("gthread", '/srv/gunicorn.conf.py:6 worker_class = "gthread"'),
        "preload_app": (False, "/srv/gunicorn.conf.py:7 preload_app = False"),
    }
    assert found.config_files == ["/srv/gunicorn.conf.py"]


def test_a_configuration_file_given_with_c_is_read_and_an_expression_is_a_setting_without_a_value():
    _, found = launcher_of(47)  # -c conf/prod.py: workers = multiprocessing.cpu_count() * 2 + 1
    assert found.config_files == ["/srv/conf/prod.py"]
    assert settings_of(found) == {
        "workers": (None, "/srv/conf/prod.py:3 workers = multiprocessing.cpu_count() * 2 + 1: an expression the doctor does not evaluate"),
        "worker_class": ("sync", '/srv/conf/prod.py:4 worker_class = "sync"'),
    }
    instances = {setting["name"]: setting for setting in source_of(47)["settings"]}["instances"]
    assert (instances["value"], instances["origin"]) == (None, "launcher")  # said, never a guessed 1


@pytest.mark.parametrize(("pid", "workers"), [
    (42, (2, "--workers 2, the command line (/proc/42/cmdline)")),  # over WEB_CONCURRENCY=5
    (51, (1, "uvicorn's default: no worker count is set (nor WEB_CONCURRENCY in /proc/51/environ)")),
    (44, (3, "-c 3, the command line (/proc/44/cmdline)")),
    (48, (2, "-w 2, the command line (/proc/48/cmdline)")),
])
def test_uvicorn_hypercorn_and_celery_say_their_workers(pid, workers):
    _, found = launcher_of(pid)
    assert settings_of(found)["workers"] == workers


def test_celery_without_a_concurrency_is_the_hosts_cpus_not_a_guess(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(ROOT, root, symlinks=True)
    (root / "proc" / "44" / "cmdline").write_bytes(b"/venv/bin/python3\0/venv/bin/celery\0--app=proj\0worker\0")
    _, found = launcher_of(44, root)
    assert found.entry == "/srv/proj/celery.py"
    value, detail = settings_of(found)["workers"]
    assert value is None and detail.startswith("celery's default, the host's CPUs")


def test_the_launchers_workers_are_the_services_instances_with_their_origin():
    service = source_of(41)
    instances = {setting["name"]: setting for setting in service["settings"]}["instances"]
    assert instances == {"name": "instances", "value": 3, "origin": "launcher",
                         "detail": "gunicorn's workers: -w 3, the command line (/proc/41/cmdline)"}
    # the recorded tree holds process 41 alone: no live workers say otherwise, and that is said
    assert service["source"]["launcher"]["live"].startswith("the process tree shows no other worker of its program")


def test_gunicorns_configuration_file_is_read_as_source_its_post_fork_hook_leads_to_the_config():
    source = source_of(41)["source"]
    assert source["files"] == [str(ROOT / "srv" / "app.py"), str(ROOT / "srv" / "gunicorn.conf.py")]
    predictor = source["predictors"][0]
    assert (predictor["function"], predictor["caller"]) == ("build", "post_fork")


def test_with_source_alone_the_folders_gunicorn_conf_gives_the_workers_against_the_budget():
    """--source without a live tree (--pid none): the workers of gunicorn.conf.py are the instances judged."""
    result = run_doctor("--root", str(GUNICORN_SERVICE), "--pid", "none", "--source", str(ROOT / "srv" / "app.py"), "--json", *NO_PROBES)
    report = report_json(result)
    said = {setting["name"]: setting for setting in report["service"]["settings"]}
    assert (said["instances"]["value"], said["instances"]["origin"]) == (2, "launcher")
    assert said["instances"]["detail"].endswith("gunicorn.conf.py:4 workers = 2")
    assert report["service"]["source"]["files"] == [str(ROOT / "srv" / "app.py"), str(ROOT / "srv" / "gunicorn.conf.py")]
    over = next(finding for finding in report["findings"] if finding["rule_id"] == "PD-CPU-010")
    assert over["status"] == "fail" and over["message"].startswith("8 compute threads on a budget of 2 CPUs"), over


def test_the_launchers_workers_are_checked_against_the_live_workers(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(GUNICORN_SERVICE, root, symlinks=True)
    shutil.copytree(ROOT / "srv", root / "srv", dirs_exist_ok=True)  # the service's code at its cwd; its command line says --workers 2
    service = source_of(7, root)
    assert service["source"]["launcher"]["live"] == ("the live deployment runs 2 workers, as --workers 2, "
                                                     "the command line (/proc/8/cmdline) says")
    (root / "proc" / "8" / "cmdline").write_bytes(b"/usr/local/bin/python3.10\0/usr/local/bin/gunicorn\0--workers\x003\0app:app\0")
    (root / "proc" / "7" / "cmdline").write_bytes((root / "proc" / "8" / "cmdline").read_bytes())
    (root / "proc" / "9" / "cmdline").write_bytes((root / "proc" / "8" / "cmdline").read_bytes())
    result = run_doctor("--root", str(root), "--pid", "7", "--json", *NO_PROBES)
    live = report_json(result)["service"]["source"]["launcher"]["live"]
    assert live.startswith("the live deployment runs 2 workers (gunicorn: master 7 and 2 workers (8, 9)") and "not the 3 of --workers 3" in live
    assert f"paddle-doctor: warning: {live}" in result.stderr


def test_a_configuration_file_keeps_literal_values_only():
    text = "workers = 4\nthreads: int = 2\npreload_app = True\nworker_class = 'uvicorn.workers.UvicornWorker'\nthreads = '8'\n"
    found = {str(setting.name): setting.value for setting in config_settings("/srv/gunicorn.conf.py", text)}
    assert found == {"workers": 4, "threads": None, "worker_class": "uvicorn.workers.UvicornWorker", "preload_app": True}
    broken = config_settings("/srv/gunicorn.conf.py", "workers = (\n")
    assert broken[0].name == LauncherKnob.WORKERS and broken[0].value is None and "cannot parse" in broken[0].detail


SPAWN_ARGV = ["/venv/bin/python3", "-c", "from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)",
              "--multiprocessing-fork"]


def copied_process(root: Path, pid: int, like: int, parent: int, argv: list[str], ticks: int, paddle: bool = True) -> None:
    """Process ``pid``, a copy of ``like`` with its own parent, command line and start time (and no Paddle mapped with ``paddle`` False)."""
    folder = root / "proc" / str(pid)
    shutil.copytree(root / "proc" / str(like), folder, symlinks=True)
    shutil.move(folder / "task" / str(like), folder / "task" / str(pid))
    (folder / "cmdline").write_bytes("\0".join(argv).encode() + b"\0")
    fields = (folder / "stat").read_text().partition(") ")[2].split(" ")
    fields[1], fields[19] = str(parent), str(ticks)
    (folder / "stat").write_text(f"{pid} (python3) {' '.join(fields)}")
    if not paddle:
        (folder / "maps").write_text("55d0c0000000-55d0c0001000 r--p 00000000 00:2f 1048601   /usr/local/bin/python3.10\n")


def test_spawned_workers_run_the_code_their_masters_command_line_names(tmp_path):
    """uvicorn --workers 2 spawns its workers (``python -c 'from multiprocessing.spawn import spawn_main...'``): the
    worker read in depth names no code, its master's command line does."""
    root = tmp_path / "root"
    shutil.copytree(ROOT, root, symlinks=True)
    copied_process(root, 60, 42, 1, ["/venv/bin/python3", "/venv/bin/uvicorn", "api.main:create_app", "--factory", "--workers", "2"],
                   120400, paddle=False)
    copied_process(root, 61, 42, 60, SPAWN_ARGV, 120500)
    copied_process(root, 62, 42, 60, SPAWN_ARGV, 120501)
    facts, found = launcher_of(60, root)
    assert facts.pid == 61  # the master maps no Paddle: its first worker is read in depth
    assert (found.launcher, found.entry) == (Launcher.UVICORN, "/srv/api/main.py")
    assert found.entry_source.startswith("/proc/60/cmdline: uvicorn")
    service = source_of(61, root)
    assert service["source"]["files"][0] == str(root / "srv" / "api" / "main.py")
    assert service["source"]["launcher"]["live"] == ("the live deployment runs 2 workers, as --workers 2, "
                                                     "the command line (/proc/60/cmdline) says")


@pytest.mark.parametrize(("argv", "target", "entry", "first"), [
    (["/venv/bin/python3", "-m", "gunicorn", "api.main:create_app()"], "api.main:create_app()", "/srv/api/main.py", "/srv"),
    (["/venv/bin/python3", "/venv/bin/gunicorn", "--pythonpath", "libs", "--bind=:8000", "extra_app"], "extra_app",
     "/srv/libs/extra_app.py", "/srv"),
    (["/venv/bin/python3", "/venv/bin/uvicorn", "--app-dir", "libs", "extra_app:app"], "extra_app:app", "/srv/libs/extra_app.py",
     "/srv/libs"),
])
def test_the_launchers_own_options_put_folders_on_the_services_sys_path(tmp_path, argv, target, entry, first):
    root = tmp_path / "root"
    shutil.copytree(ROOT, root, symlinks=True)
    (root / "proc" / "51" / "cmdline").write_bytes("\0".join(argv).encode() + b"\0")
    _, found = launcher_of(51, root)
    assert (found.target, found.entry, found.reason, found.search[0]) == (target, entry, None, first)


def test_a_fifo_or_a_file_too_large_in_the_launchers_place_is_not_read(tmp_path):
    """The service's files are untrusted: a FIFO named gunicorn.conf.py would block a reader, a huge entry_points.txt fill its memory."""
    import os

    root = tmp_path / "root"
    shutil.copytree(ROOT, root, symlinks=True)
    (root / "srv" / "gunicorn.conf.py").unlink()
    os.mkfifo(root / "srv" / "gunicorn.conf.py")
    listing = root / "venv" / "lib" / "python3.10" / "site-packages" / "shop-1.0.dist-info" / "entry_points.txt"
    listing.write_text("[console_scripts]\nserve = shop.cli:main\n" + "#" * (3 * 1024 * 1024))
    _, gunicorn = launcher_of(41, root)
    assert gunicorn.config_files == [] and settings_of(gunicorn)["workers"][0] == 3 and gunicorn.entry == "/srv/app.py"
    _, serve = launcher_of(45, root)  # the listing is not read; the script's own import still leads to the code
    assert (serve.entry, "the script's own import" in serve.entry_source) == (f"{SITE}/shop/cli.py", True)


@pytest.mark.parametrize("argv", [
    ["/venv/bin/python3", "/venv/bin/gunicorn", "a./etc/passwd:app"],
    ["/venv/bin/python3", "-m", "../../etc/x"],
    ["/venv/bin/python3", "/venv/bin/gunicorn", "--pythonpath", "../../../../..", "os:app"],
])
def test_a_target_naming_a_path_out_of_the_services_folders_is_no_module(tmp_path, argv):
    """A command line is untrusted: a target that is not a dotted name, or a folder above /, never leads out of the root."""
    root = tmp_path / "root"
    shutil.copytree(ROOT, root, symlinks=True)
    (tmp_path / "os.py").write_text("# outside the root\n")
    (root / "proc" / "51" / "cmdline").write_bytes("\0".join(argv).encode() + b"\0")
    _, found = launcher_of(51, root)
    assert found.entry is None and found.reason, found
    assert all(folder.startswith("/") for folder in found.search)


def test_workers_a_configuration_file_computes_are_not_judged_as_one(tmp_path):
    """gunicorn.conf.py's ``workers = multiprocessing.cpu_count() * 2 + 1``, with no live tree: the instances are
    not known, so the CPU budget and the core binding skip, saying why, instead of judging one instance."""
    service = tmp_path / "srv"
    shutil.copytree(ROOT / "srv", service)
    conf = service / "gunicorn.conf.py"
    conf.write_text(conf.read_text().replace("workers = 2\n", "import multiprocessing\nworkers = multiprocessing.cpu_count() * 2 + 1\n"))
    report = report_json(run_doctor("--root", str(GUNICORN_SERVICE), "--pid", "none", "--source", str(service / "app.py"),
                                    "--json", *NO_PROBES))
    found = {finding["rule_id"]: finding for finding in report["findings"]}
    for rule in ("PD-CPU-010", "PD-CPU-011", "PD-CPU-014"):
        assert found[rule]["status"] == "skip", found[rule]
        assert found[rule]["message"].startswith("the service's number of instances is not known: "), found[rule]
        assert found[rule]["message"].endswith("; give --instances")
    given = report_json(run_doctor("--root", str(GUNICORN_SERVICE), "--pid", "none", "--source", str(service / "app.py"),
                                   "--instances", "2", "--json", *NO_PROBES))
    assert {f["rule_id"]: f["status"] for f in given["findings"]}["PD-CPU-010"] == "fail"


def test_a_launcher_file_linked_out_of_the_root_is_read_as_the_container_sees_it(tmp_path):
    """/srv/gunicorn.conf.py, a link to an absolute path: the link is followed under --root (where that path
    holds the container's file), never to the machine the doctor runs on."""
    root = tmp_path / "root"
    shutil.copytree(GUNICORN_SERVICE, root, symlinks=True)
    shutil.copytree(ROOT / "srv", root / "srv", dirs_exist_ok=True)
    host = tmp_path / "host" / "secret.py"  # on the doctor's machine, not in the container
    host.parent.mkdir()
    host.write_text("threads = 3\n")
    conf = root / "srv" / "gunicorn.conf.py"
    conf.unlink()
    conf.symlink_to(host)
    settings = source_of(7, root)["source"]["launcher"]["settings"]
    assert not any(setting["value"] == 3 for setting in settings), settings
    (root / str(host.parent).lstrip("/")).mkdir(parents=True)
    (root / str(host).lstrip("/")).write_text("threads = 5\n")  # the container's own file at that path
    settings = source_of(7, root)["source"]["launcher"]["settings"]
    assert any(setting["name"] == "threads" and setting["value"] == 5 for setting in settings), settings
