"""`paddle-doctor baseline` and `paddle-doctor healthcheck`: what a running container must keep true.

A recorded container tree is copied per test, a baseline recorded from it, then the cgroup files are
changed as a shrinking quota, rising throttling, a lowered memory limit or a lost cache would change
them. The healthcheck must answer 0 (healthy) or 1 (unhealthy) with one line, and nothing else.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import fixture_root, run_doctor
from gpu_helpers import GPU_ROOT, run_with_fake_nvml, service_config
from test_registry import install_plugin, install_waiting_plugin

ROOT = "amd-avx512bf16-v2-quota"  # cgroup v2, quota 1.5 CPUs, memory.max 2 GiB, throttled 3100 of 12000 periods
CACHE_MOUNT = "1600 1532 253:2 / /cache rw,relatime - ext4 /dev/vdb rw\n"
DRIVER_535 = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"


class Container:
    """A writable copy of a recorded container root, and its baseline file."""

    def __init__(self, tmp_path, name=ROOT):
        self.root = tmp_path / "root"
        shutil.copytree(fixture_root(name), self.root)
        self.baseline = tmp_path / "state" / "baseline.json"
        self.tmp = tmp_path

    def write(self, path: str, text: str) -> None:
        target = self.root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def cpu_stat(self, periods: int, throttled: int) -> None:
        self.write("/sys/fs/cgroup/cpu.stat", f"usage_usec 1\nnr_periods {periods}\nnr_throttled {throttled}\nthrottled_usec 5\n")

    def record(self, *args: str) -> subprocess.CompletedProcess:
        result = run_doctor("baseline", "--root", str(self.root), "--out", str(self.baseline), *args)
        assert result.returncode == 0, result.stderr
        return result

    def check(self, *args: str) -> subprocess.CompletedProcess:
        return run_doctor("healthcheck", "--baseline", str(self.baseline), *args)

    def detail(self, *args: str) -> dict:
        return json.loads(self.check("--json", *args).stdout)

    def with_gpu(self) -> None:
        """/dev/nvidia0 and driver 535.104.05, as the NVIDIA runtime gives a GPU container."""
        self.write("/dev/nvidia0", "")
        self.write("/proc/driver/nvidia/version", DRIVER_535)

    def with_cache(self, *names: str) -> str:
        """A cache volume mounted at /cache holding ``names`` (and a GPU); returns a TensorRT service config using it."""
        self.with_gpu()
        with open(self.root / "proc/self/mountinfo", "a") as handle:
            handle.write(CACHE_MOUNT)
        for name in names:
            self.write(f"/cache/paddle/{name}", "engine")
        config = self.tmp / "service.yaml"
        config.write_text("optim_cache_dir: /cache/paddle\ndevice: gpu\ntensorrt:\n  enabled: true\n  use_static: true\n")
        return str(config)


@pytest.fixture
def container(tmp_path) -> Container:
    return Container(tmp_path)


def line_of(result: subprocess.CompletedProcess) -> str:
    """The healthcheck's single stdout line; exit 0 exactly when it says healthy, 1 when unhealthy."""
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stdout
    assert result.returncode == (0 if lines[0].startswith("healthy: ") else 1), (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return lines[0]


def healthy(result) -> str:
    line = line_of(result)
    assert result.returncode == 0 and line.startswith("healthy: "), line
    return line


def finding(detail: dict, rule_id: str) -> dict:
    """The healthcheck's --json finding for one rule."""
    (found,) = [f for f in detail["findings"] if f["rule_id"] == rule_id]
    return found


def unhealthy(result) -> str:
    line = line_of(result)
    assert result.returncode == 1 and line.startswith("unhealthy: "), line
    return line


# ------------------------------------------------------------------ the baseline file


def test_baseline_records_the_invariants_and_pins_fast_checks(container):
    config = container.with_cache("trt_serialized_1a2b", "_optimized.pdmodel")
    result = container.record("--threads", "1", "--config", config)
    assert "cache /cache/paddle: 2 files, 1 TensorRT engines" in result.stdout
    data = json.loads(container.baseline.read_text())
    assert data["schema_version"] == 3 and data["kind"] == "paddle-doctor baseline"
    assert data["cpu"]["budget_cpus"] == 1.5 and data["cpu"]["threads"] == 1
    assert data["memory"]["limit_bytes"] == 2147483648
    assert data["throttling"] == {"nr_periods": 12000, "nr_throttled": 3100}
    assert data["cache"] == {"path": "/cache/paddle", "exists": True, "files": 2, "engines": 1,
                             "mountpoint": "/cache", "fstype": "ext4", "error": None, "lost_on_restart": None}
    assert data["gpu"] == {"kernel_driver": "535.104.05", "device_nodes": ["/dev/nvidia0"], "nvml_driver": None,
                           "devices": [], "boot_id": None}  # NVML is not asked under --root without --gpu
    assert data["paddle"]["status"] == "not_probed" and data["paddle"]["metadata_file"] is None
    pinned = {check["name"]: check["reference"] for check in data["checks"]}
    assert pinned["cpu_budget"] == "paddle_doctor.checks.cpu_budget:CHECK"
    assert {rule["id"] for rule in data["rules"]} >= {"PD-CPU-010", "PD-CPU-012", "PD-PADDLE-001"}
    assert not list(container.baseline.parent.glob(".*.tmp")), "the temporary file was left behind"


def test_a_cache_in_the_writable_layer_is_said_to_be_not_on_a_volume(container):
    container.write("/cache/paddle/trt_serialized_1a2b", "engine")
    config = container.tmp / "service.yaml"
    config.write_text("optim_cache_dir: /cache/paddle\n")
    assert "(not on a volume: overlay)" in container.record("--config", str(config)).stdout


@pytest.fixture(scope="module")
def live_baseline_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("live") / "baseline.json"
    result = run_doctor("baseline", "--out", str(path))
    assert result.returncode == 0, result.stderr
    return path


def test_baseline_of_the_live_container_records_the_paddle_build(live_baseline_file):
    """The real Paddle wheel: the METADATA file is found, so the healthcheck can read the build without importing Paddle."""
    # Paddle in a child: imported here it would set OMP_NUM_THREADS in this process, which later tests inherit
    imported = subprocess.run([sys.executable, "-c", "import paddle; print(paddle.__version__)"],
                              capture_output=True, text=True, timeout=120)
    paddle_record = json.loads(live_baseline_file.read_text())["paddle"]
    assert paddle_record["status"] == "ok"
    assert paddle_record["installed"] == f"{paddle_record['distribution']} {imported.stdout.strip()}"
    assert paddle_record["metadata_file"].endswith(".dist-info/METADATA")


def test_an_unwritable_baseline_path_is_a_usage_error(container, tmp_path):
    (tmp_path / "file").write_text("")
    result = run_doctor("baseline", "--root", str(container.root), "--out", str(tmp_path / "file" / "baseline.json"))
    assert result.returncode == 2
    assert "cannot write the baseline" in result.stderr and "Traceback" not in result.stderr


# ------------------------------------------------------------------ live invariants against the baseline


def test_unchanged_container_is_healthy(container):
    container.record("--threads", "1")
    line = healthy(container.check())
    assert line.startswith("healthy: cpu budget 1.5 >= 1 threads; 0 CPU quota periods since baseline, not throttled; ")


def checks_phrase(line: str) -> str:
    match = re.search(r"\d+ of \d+ fast checks apply here( \([^)]*\))?", line)
    assert match, line
    return match.group(0)


@pytest.mark.parametrize("service", [(), ("--config",)])
def test_the_baseline_and_the_healthcheck_count_the_fast_checks_alike(container, service):
    args = ("--config", container.with_cache("trt_serialized_a")) if service else ()
    recorded = container.record(*args).stdout
    line = healthy(container.check())
    assert checks_phrase(recorded) == checks_phrase(line), (recorded, line)
    from paddle_doctor.health.baselines import load_baseline

    pinned = len(load_baseline(str(container.baseline)).checks)
    assert f" of {pinned} fast checks apply here" in line
    if not service:  # a CPU service: the GPU service's checks are the ones that do not apply
        assert re.search(r"\(\d+ need a gpu service\)", line), line


def test_cpu_budget_shrinking_below_the_threads_is_unhealthy(container):
    container.write("/sys/fs/cgroup/cpu.max", "300000 100000\n")
    container.record("--threads", "3")
    container.write("/sys/fs/cgroup/cpu.max", "200000 100000\n")
    line = unhealthy(container.check())
    assert line == ("unhealthy: PD-HEALTH-001 cpu budget shrank from 3 to 2 CPUs (cgroup quota 200000/100000 µs), below 3 threads "
                    "(+1 more, see --json)")
    detail = container.detail()
    assert {f["rule_id"] for f in detail["findings"] if f["counts"]} == {"PD-HEALTH-001", "PD-CPU-010"}


def test_a_quota_shrinking_below_one_cpu_with_one_thread_is_not_a_thread_count_failure(container):
    """PD-CPU-010 passes one thread in half a CPU (the quota is PD-CPU-016's, a warning): the healthcheck agrees."""
    container.write("/sys/fs/cgroup/cpu.max", "200000 100000\n")
    container.record("--threads", "1")
    container.write("/sys/fs/cgroup/cpu.max", "50000 100000\n")
    line = healthy(container.check())
    assert line.startswith("healthy: cpu budget 0.5 < 1 threads (a quota below one CPU: PD-CPU-016) (was 2 at baseline);"), line


def test_cpu_budget_shrinking_but_still_enough_is_healthy(container):
    container.write("/sys/fs/cgroup/cpu.max", "300000 100000\n")
    container.record("--threads", "2")
    container.write("/sys/fs/cgroup/cpu.max", "250000 100000\n")
    assert healthy(container.check()).startswith("healthy: cpu budget 2.5 >= 2 threads (was 3 at baseline);")


@pytest.mark.parametrize(
    "periods, throttled, expected",
    [
        (13000, 3200, "unhealthy: PD-HEALTH-002 throttled in 10.0% of 1000 CPU periods since baseline (limit 5%)"),
        (13000, 3150, "unhealthy: PD-HEALTH-002 throttled in 5.0% of 1000 CPU periods since baseline (limit 5%)"),
        (13000, 3120, "healthy: cpu budget 1.5 >= 1 threads; throttled 2.0% of 1000 periods since baseline"),
        (12005, 3103, "healthy: cpu budget 1.5 >= 1 threads; 5 CPU quota periods since baseline, throttled in 3 of them"),
        (100, 0, "unhealthy: PD-HEALTH-002 throttling counters went backwards since the baseline (another cgroup); re-create the baseline"),
    ],
)
def test_throttling_is_judged_over_the_periods_since_the_baseline(container, periods, throttled, expected):
    container.record("--threads", "1")  # 3100 of 12000 periods throttled before: 25.8 %, in the past
    container.cpu_stat(periods, throttled)
    assert line_of(container.check()).startswith(expected)


def test_memory_limit_lowered_is_unhealthy_and_raised_is_not(container):
    container.record("--threads", "1")
    container.write("/sys/fs/cgroup/memory.max", "1073741824\n")
    assert unhealthy(container.check()) == "unhealthy: PD-HEALTH-003 memory limit lowered from 2.0 GiB to 1.0 GiB since baseline"
    container.write("/sys/fs/cgroup/memory.max", "max\n")
    healthy(container.check())
    memory = finding(container.detail(), "PD-HEALTH-003")
    assert (memory["status"], memory["message"], memory["counts"]) == ("pass", "memory limit unlimited (raised since baseline)", False)


def test_a_memory_limit_where_there_was_none_is_lowered(tmp_path):
    container = Container(tmp_path, "intel-avx512-v2-max")  # memory.max max
    container.record()
    container.write("/sys/fs/cgroup/memory.max", "536870912\n")
    assert unhealthy(container.check()) == "unhealthy: PD-HEALTH-003 memory limit lowered from unlimited to 512.0 MiB since baseline"


def test_cache_on_its_volume_is_healthy(container):
    config = container.with_cache("trt_serialized_1a2b", "trt_serialized_3c4d", "_optimized.pdmodel")
    container.record("--config", config)
    healthy(container.check())
    cache = finding(container.detail(), "PD-HEALTH-006")
    assert cache["status"] == "pass" and cache["message"] == "cache /cache/paddle: 3 files, 2 engines"


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda c: shutil.rmtree(c.root / "cache/paddle"),
         "unhealthy: PD-HEALTH-006 cache /cache/paddle is gone (baseline: 3 files, 2 engines)"),
        (lambda c: [p.unlink() for p in (c.root / "cache/paddle").glob("trt_serialized_*")],
         "unhealthy: PD-HEALTH-006 cache /cache/paddle lost its 2 TensorRT engines"),
        (lambda c: (c.root / "proc/self/mountinfo").write_text((c.root / "proc/self/mountinfo").read_text().replace(CACHE_MOUNT, "")),
         "unhealthy: PD-HEALTH-006 cache /cache/paddle is no longer on its volume (/cache, ext4); now on overlay"),
    ],
    ids=["gone", "engines-lost", "volume-gone"],
)
def test_cache_lost_is_unhealthy(container, change, expected):
    config = container.with_cache("trt_serialized_1a2b", "trt_serialized_3c4d", "_optimized.pdmodel")
    container.record("--config", config)
    change(container)
    assert unhealthy(container.check()) == expected


def test_a_service_config_that_drops_the_cache_asks_for_a_new_baseline(container):
    container.record("--config", container.with_cache("trt_serialized_1a2b"))
    other = container.tmp / "other.yaml"
    other.write_text("threads: 1\n")
    assert unhealthy(container.check("--config", str(other))) == (
        "unhealthy: PD-HEALTH-006 the service no longer uses cache /cache/paddle (its config changed since baseline); re-create the baseline")


def test_a_relative_cache_path_means_the_same_folder_from_another_working_directory(tmp_path):
    """The baseline resolves relative paths in the entrypoint's directory; HEALTHCHECK may start elsewhere."""
    service_dir, elsewhere = tmp_path / "srv", tmp_path / "elsewhere"
    (service_dir / "cache").mkdir(parents=True)
    (service_dir / "cache" / "_optimized.pdmodel").write_text("model")
    elsewhere.mkdir()
    (service_dir / "service.yaml").write_text("optim_cache_dir: cache\nsave_optim_model: true\nthreads: 1\n")
    doctor = [sys.executable, "-m", "paddle_doctor"]
    recorded = subprocess.run([*doctor, "baseline", "--no-paddle", "--no-gpu", "--config", "service.yaml", "--out", "../baseline.json"],
                              cwd=service_dir, capture_output=True, text=True, timeout=60)
    assert recorded.returncode == 0, recorded.stderr
    assert json.loads((tmp_path / "baseline.json").read_text())["service"]["optim_cache_dir"] == str(service_dir / "cache")
    checked = subprocess.run([*doctor, "healthcheck", "--baseline", "../baseline.json", "--json"],
                             cwd=elsewhere, capture_output=True, text=True, timeout=60)
    cache = finding(json.loads(checked.stdout), "PD-HEALTH-006")
    assert (cache["status"], cache["message"]) == ("pass", f"cache {service_dir / 'cache'}: 1 files, 0 engines")


def test_cache_emptied_is_unhealthy(container):
    config = container.with_cache("_optimized.pdmodel", "_optimized.pdiparams")
    container.record("--config", config)
    for path in (container.root / "cache/paddle").iterdir():
        path.unlink()
    assert unhealthy(container.check()) == "unhealthy: PD-HEALTH-006 cache /cache/paddle was emptied (baseline: 2 files)"


def gpu_container(tmp_path, device: str, *extra_nodes: str) -> Container:
    """The recorded T4 container (driver 470.82.01, /dev/nvidia0), its baseline taken with NVML answering."""
    container = Container(tmp_path, GPU_ROOT)
    for node in extra_nodes:
        container.write(node, "")
    config = service_config(tmp_path, {"device": device, "threads": 1})
    result = run_with_fake_nvml("baseline", "--root", str(container.root), "--gpu", "--config", config,
                                "--out", str(container.baseline), scenario="t4-driver-470")
    assert result.returncode == 0, result.stderr
    return container


def test_baseline_of_a_gpu_service_records_its_gpus_and_driver(tmp_path):
    container = gpu_container(tmp_path, "gpu")
    assert json.loads(container.baseline.read_text())["gpu"] == {
        "kernel_driver": "470.82.01", "device_nodes": ["/dev/nvidia0"], "nvml_driver": "470.82.01", "devices": ["0: Tesla T4"],
        "boot_id": None}  # the recorded root has no /proc/sys/kernel/random/boot_id
    healthy(container.check())
    detail = container.detail()
    assert (finding(detail, "PD-HEALTH-004")["status"], finding(detail, "PD-HEALTH-004")["message"]) == ("pass", "/dev/nvidia0 as at baseline")
    assert (finding(detail, "PD-HEALTH-005")["status"], finding(detail, "PD-HEALTH-005")["message"]) == ("pass", "driver 470.82.01 as at baseline")


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda c: (c.root / "dev/nvidia0").unlink(),
         "unhealthy: PD-HEALTH-004 the GPU service sees no GPU: no /dev/nvidiaN in the container (baseline: /dev/nvidia0)"),
        (lambda c: c.write("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19\n"),
         ("unhealthy: PD-HEALTH-005 NVIDIA driver changed from 470.82.01 to 535.104.05 since baseline: the container's CUDA libraries "
         "no longer match it; restart the container")),
        (lambda c: (c.root / "proc/driver/nvidia/version").unlink(),
         "unhealthy: PD-HEALTH-005 the NVIDIA kernel driver 470.82.01 is no longer loaded (/proc/driver/nvidia/version is gone)"),
    ],
    ids=["gpu-gone", "driver-upgraded", "driver-unloaded"],
)
def test_a_gpu_service_losing_its_gpu_or_driver_is_unhealthy(tmp_path, change, expected):
    container = gpu_container(tmp_path, "gpu")
    change(container)
    line = unhealthy(container.check())
    assert line == expected, line


def test_one_of_two_gpus_gone_is_unhealthy(tmp_path):
    container = gpu_container(tmp_path, "gpu", "/dev/nvidia1")
    healthy(container.check())
    (container.root / "dev/nvidia1").unlink()
    assert unhealthy(container.check()) == "unhealthy: PD-HEALTH-004 GPU gone since baseline: /dev/nvidia1 no longer present"


def test_a_gpu_service_that_sees_no_gpu_is_unhealthy(container, tmp_path):
    config = service_config(tmp_path, {"device": "gpu", "threads": 1})
    container.record("--config", config)  # recorded where the container had no GPU: nothing to lose, still wrong
    assert unhealthy(container.check()) == "unhealthy: PD-HEALTH-004 the GPU service sees no GPU: no /dev/nvidiaN in the container"


def test_the_driver_is_compared_only_within_one_boot_of_the_host(tmp_path):
    """A baseline baked at image build (another boot, another host) must not fail every healthcheck on a driver."""
    container = Container(tmp_path, GPU_ROOT)
    container.write("/proc/sys/kernel/random/boot_id", "0b5c4d2e-build-host\n")
    config = service_config(tmp_path, {"device": "gpu", "threads": 1})
    assert run_doctor("baseline", "--root", str(container.root), "--config", config, "--out", str(container.baseline)).returncode == 0
    container.write("/proc/driver/nvidia/version", DRIVER_535)
    container.write("/proc/sys/kernel/random/boot_id", "7f0e9a1c-serving-host\n")
    healthy(container.check())
    driver = finding(container.detail(), "PD-HEALTH-005")
    assert driver["status"] == "pass" and "the baseline is from another boot of the host" in driver["message"]
    container.write("/proc/sys/kernel/random/boot_id", "0b5c4d2e-build-host\n")  # same boot: the upgrade counts
    assert unhealthy(container.check()).startswith("unhealthy: PD-HEALTH-005 NVIDIA driver changed from 470.82.01 to 535.104.05")


def test_a_cpu_service_on_a_gpu_host_does_not_depend_on_the_gpu(tmp_path):
    container = gpu_container(tmp_path, "cpu")
    assert json.loads(container.baseline.read_text())["gpu"] is None
    (container.root / "dev/nvidia0").unlink()
    detail = container.detail()
    assert {finding(detail, rule)["status"] for rule in ("PD-HEALTH-004", "PD-HEALTH-005")} == {"skip"}
    assert finding(detail, "PD-HEALTH-004")["message"] == "the baseline records no GPU service"
    healthy(container.check())


def test_paddle_build_unchanged_then_changed(live_baseline_file, tmp_path):
    detail = json.loads(run_doctor("healthcheck", "--baseline", str(live_baseline_file), "--json").stdout)
    build = finding(detail, "PD-HEALTH-007")
    installed = json.loads(live_baseline_file.read_text())["paddle"]["installed"]
    assert (build["status"], build["message"]) == ("pass", f"{installed} as at baseline")

    metadata = tmp_path / "paddlepaddle-9.9.9.dist-info" / "METADATA"
    metadata.parent.mkdir()
    metadata.write_text("Metadata-Version: 2.1\nName: paddlepaddle\nVersion: 9.9.9\n\nlong description\n")
    edited = json.loads(live_baseline_file.read_text())
    edited["paddle"]["metadata_file"] = str(metadata)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(edited))
    line = unhealthy(run_doctor("healthcheck", "--baseline", str(baseline)))
    assert line.startswith(f"unhealthy: PD-HEALTH-007 Paddle build changed since baseline: was {installed}, now paddlepaddle 9.9.9")
    metadata.unlink()
    line = unhealthy(run_doctor("healthcheck", "--baseline", str(baseline)))
    assert f"now {metadata} is gone" in line


# ------------------------------------------------------------------ policy pinned in the baseline


def test_settings_given_to_the_baseline_apply_to_the_healthcheck(container, tmp_path):
    settings = tmp_path / "doctor.yaml"
    settings.write_text("fail_on: warning\n")
    container.record("--threads", "1", "--settings", str(settings))
    # PD-CPU-012 (warning): throttled in 25.8 % of all periods, which only fail_on warning counts
    assert unhealthy(container.check()).startswith("unhealthy: PD-CPU-012 the CPU quota throttled this container in 25.8% of periods")


def test_an_ignored_baseline_rule_no_longer_makes_it_unhealthy(container, tmp_path):
    settings = tmp_path / "doctor.yaml"
    settings.write_text("ignore: [PD-HEALTH-003]\n")
    container.record("--threads", "1", "--settings", str(settings))
    container.write("/sys/fs/cgroup/memory.max", "1073741824\n")
    healthy(container.check())
    assert "PD-HEALTH-003" not in {f["rule_id"] for f in container.detail()["findings"]}
    container.write("/sys/fs/cgroup/memory.max", "2147483648\n")
    container.record("--threads", "1")  # the same change, not ignored
    container.write("/sys/fs/cgroup/memory.max", "1073741824\n")
    assert unhealthy(container.check()).startswith("unhealthy: PD-HEALTH-003 memory limit lowered from 2.0 GiB to 1.0 GiB")


def test_only_fast_checks_are_pinned_and_run(container, tmp_path):
    install_plugin(tmp_path, '''
        """Plugin. Why: test. Fix: none."""
        from paddle_doctor.judge.findings import Finding, Status
        from paddle_doctor.judge.registry import Check

        def fail(facts):
            return [Finding("PD-PADDLE-001", Status.FAIL, "the slow plugin check ran")]

        CHECK = Check(name="slow_plugin", rules=("PD-PADDLE-001",), run=fail, fast=False)
    ''')
    plugin = {"PYTHONPATH": str(tmp_path)}
    result = run_doctor("baseline", "--root", str(container.root), "--out", str(container.baseline), env=plugin)
    assert result.returncode == 0, result.stderr
    assert "slow_plugin" not in container.baseline.read_text()
    assert line_of(run_doctor("healthcheck", "--root", str(container.root), env=plugin)).startswith("healthy: ")
    assert run_doctor("--root", str(container.root), "--json", env=plugin).returncode == 1  # `check` runs it


def test_a_pinned_check_that_cannot_be_loaded_asks_for_a_new_baseline(container, tmp_path):
    install_plugin(tmp_path, '''
        """Plugin. Why: test. Fix: none."""
        from paddle_doctor.judge.findings import passed
        from paddle_doctor.judge.registry import Check

        CHECK = Check(name="site_plugin", rules=("PD-CPU-013",), run=lambda facts: [passed("PD-CPU-013", "ok")])
    ''')
    result = run_doctor("baseline", "--root", str(container.root), "--out", str(container.baseline), env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert "thirdparty_check:CHECK" in container.baseline.read_text()
    line = unhealthy(container.check())  # without the plugin installed: what the baseline names is not imported
    assert "the baseline pins check 'site_plugin' as 'thirdparty_check:CHECK', which no installed package registers" in line
    assert line.endswith(f"re-create the baseline with 'paddle-doctor baseline --out {container.baseline}'")


# ------------------------------------------------------------------ without a baseline


@pytest.mark.parametrize(
    "threads, expected",
    [
        ("8", "unhealthy: PD-CPU-010 8 compute threads on a budget of 2 CPUs (cgroup quota 200000/100000 µs)"),
        ("2", "healthy: cpu budget 2 >= 2 threads; "),
    ],
)
def test_without_a_baseline_only_live_invariants_are_checked(threads, expected):
    result = run_doctor("healthcheck", "--root", str(fixture_root("intel-noavx2-v1-quota")), "--threads", threads)
    line = line_of(result)
    assert line.startswith(expected) and line.endswith("no baseline") == (threads == "2")


def test_json_detail_links_every_finding_to_its_docs(container):
    container.record("--threads", "1")
    detail = container.detail()
    assert detail["healthy"] is True and detail["line"].startswith("healthy: ")
    assert detail["budget_seconds"] == 2.0 and detail["baseline"] == str(container.baseline)
    assert detail["findings"] and all(f["docs"] == f"docs/rules.md#{f['rule_id'].lower()}" for f in detail["findings"])
    compared = {f["rule_id"]: f["status"] for f in detail["findings"] if f["rule_id"].startswith("PD-HEALTH-")}
    assert compared == {"PD-HEALTH-001": "pass", "PD-HEALTH-002": "pass", "PD-HEALTH-003": "pass", "PD-HEALTH-004": "skip",
                        "PD-HEALTH-005": "skip", "PD-HEALTH-006": "skip", "PD-HEALTH-007": "skip"}


# ------------------------------------------------------------------ every failure path exits 1


@pytest.mark.parametrize(
    "content, expected",
    [
        (None, "baseline file not found; record it with 'paddle-doctor baseline --out "),
        ("{not json", "not JSON (Expecting property name enclosed in double quotes: line 1 column 2)"),
        ('{"schema_version": "2', "not JSON (Unterminated string starting at: line 1 column 20)"),
        ("[1, 2]", "not a paddle-doctor baseline"),
        (json.dumps({"schema_version": 1, "kind": "something else"}), "not a paddle-doctor baseline"),
        (json.dumps({"schema_version": 99, "kind": "paddle-doctor baseline"}),
         "baseline schema_version is 99, this paddle-doctor reads 3; re-create the baseline with"),
        (json.dumps({"schema_version": 2, "kind": "paddle-doctor baseline"}),  # pins no PD-HEALTH check: never healthy by default
         "baseline schema_version is 2, this paddle-doctor reads 3; re-create the baseline with"),
        (b"\xff\xfe garbage", "cannot read baseline file"),
    ],
    ids=["missing", "not-json", "unterminated-string", "list", "other-kind", "other-schema", "previous-version", "not-utf8"],
)
def test_a_bad_baseline_is_unhealthy_naming_the_file_and_why(tmp_path, content, expected):
    path = tmp_path / "baseline.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    line = unhealthy(run_doctor("healthcheck", "--baseline", str(path)))
    assert line.startswith(f"unhealthy: {path}: ") and expected in line


def test_a_baseline_with_a_mistyped_field_asks_to_recreate_it(container):
    container.record()
    data = json.loads(container.baseline.read_text())
    data["cpu"]["threads"] = "two"
    container.baseline.write_text(json.dumps(data))
    line = unhealthy(container.check())
    assert "Baseline.cpu.threads: expected int, got 'two'" in line and "re-create the baseline" in line


def test_a_directory_as_baseline_is_unhealthy(tmp_path):
    line = unhealthy(run_doctor("healthcheck", "--baseline", str(tmp_path)))
    assert line.startswith(f"unhealthy: {tmp_path}: the baseline file is a folder, not a regular file; record it with")


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--bogus"], "unknown argument '--bogus'"),
        (["--budget"], "--budget needs a value"),
        (["--budget", "soon"], "--budget: invalid value 'soon'"),
        (["--budget=0"], "--budget: invalid value '0'"),
        (["--threads", "0"], "--threads: invalid value '0'"),
        (["extra"], "unknown argument 'extra'"),
    ],
)
def test_bad_arguments_are_unhealthy_not_exit_2(args, expected):
    line = unhealthy(run_doctor("healthcheck", *args))
    assert line.startswith("unhealthy: bad arguments: ") and expected in line


def test_a_missing_service_config_is_unhealthy(tmp_path):
    line = unhealthy(run_doctor("healthcheck", "--config", str(tmp_path / "service.yaml")))
    assert line == f"unhealthy: {tmp_path / 'service.yaml'}: service config file not found; see doctor/facts/service_config.py for the keys"


def test_help_exits_0_with_usage():
    result = run_doctor("healthcheck", "--help")
    assert result.returncode == 0 and result.stdout.startswith("usage: paddle-doctor healthcheck")


def test_past_its_budget_it_reports_what_did_not_finish(container, tmp_path):
    """A check that never returns (it waits on a FIFO no one writes) cannot hold the healthcheck.
    (A FIFO among the files the probes read no longer hangs: it is refused, tests/test_inputs_hostile.py.)"""
    never = tmp_path / "never-written"
    os.mkfifo(never)
    install_waiting_plugin(tmp_path, never)
    args = ("healthcheck", "--root", str(container.root), "--budget", "2")
    line = unhealthy(run_doctor(*args, env={"PYTHONPATH": str(tmp_path)}, timeout=60))
    assert line == "unhealthy: did not finish within 2 s: still running check waiting"
    detail = json.loads(run_doctor(*args, "--json", env={"PYTHONPATH": str(tmp_path)}, timeout=60).stdout)
    assert detail["unfinished"] == ["running check waiting"]
    assert detail["finished"][:3] == ["reading the service settings", "probing the container", "loading the checks"]


def test_an_internal_error_is_unhealthy(monkeypatch, capsys):
    from paddle_doctor.health import healthcheck

    def broken(args, progress):
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr(healthcheck, "evaluate", broken)
    with pytest.raises(SystemExit) as exit_:
        healthcheck.main([])
    assert exit_.value.code == 1
    assert capsys.readouterr().out == "unhealthy: internal error: RuntimeError: something nobody expected\n"


def test_a_check_that_raises_makes_it_unhealthy(container, tmp_path):
    install_plugin(tmp_path, '''
        """Plugin. Why: test. Fix: none."""
        from paddle_doctor.judge.registry import Check

        def explode(facts):
            raise KeyError("cgroup")

        CHECK = Check(name="exploding", rules=("PD-PADDLE-001",), run=explode)
    ''')
    line = unhealthy(run_doctor("healthcheck", "--root", str(container.root), env={"PYTHONPATH": str(tmp_path)}))
    assert line.startswith("unhealthy: PD-PADDLE-001 check 'exploding' raised KeyError: 'cgroup'")


# ------------------------------------------------------------------ lean start-up


LIST_MODULES_AT_EXIT = (
    "import atexit, os, sys\n"
    "def listed():\n"
    "    sys.stderr.write('MODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    "    sys.stderr.flush()\n"
    "leave = os._exit\n"
    "os._exit = lambda code: (listed(), leave(code))\n"
    "atexit.register(listed)\n"
    "from paddle_doctor.entry import main\n"
    "main(sys.argv[1:])\n"
)


def imported_modules(*args: str) -> set[str]:
    """Every module a healthy healthcheck had loaded when it exited, however it exited (the healthcheck
    leaves through os._exit, skipping atexit): sys.modules, so imports by any route count."""
    result = subprocess.run([sys.executable, "-c", LIST_MODULES_AT_EXIT, *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("healthy: "), (result.stdout, result.stderr[-2000:])
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("MODULES ")]
    return set(line.split()[1:])


def test_healthcheck_with_a_baseline_never_imports_paddle_click_rich_or_yaml(container):
    container.record("--threads", "1")
    modules = imported_modules("healthcheck", "--baseline", str(container.baseline))
    assert "paddle_doctor.health.healthcheck" in modules and "paddle_doctor.checks.cpu_budget" in modules
    heavy = {m for m in modules if m.split(".")[0] in ("paddle", "click", "rich", "yaml", "numpy")}
    assert heavy == set()
    assert "importlib.metadata" not in modules and "concurrent.futures" not in modules and "subprocess" not in modules
    # nor what only a measurement needs: the verification and graph facts, the measuring code
    measured_sections = ("paddle_doctor.facts.verification", "paddle_doctor.facts.graph")
    measuring = {m for m in modules if m.startswith((*measured_sections, "paddle_doctor.verify", "paddle_doctor.graph"))}
    assert measuring == set()
    # nor the known problems' entries and their matching: told by Paddle's version, which the healthcheck does not probe
    assert "paddle_doctor.checks.known_issues" in modules and "paddle_doctor.judge.known_issues" not in modules


def test_healthcheck_without_a_baseline_never_imports_paddle_click_or_rich():
    modules = imported_modules("healthcheck", "--root", str(fixture_root(ROOT)))
    assert "paddle_doctor.judge.rules" in modules
    assert {m for m in modules if m.split(".")[0] in ("paddle", "click", "rich")} == set()
