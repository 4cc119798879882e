#!/usr/bin/env python3
"""Cost of `paddle-doctor healthcheck --baseline PATH`, measured side by side in one run.

The baseline is recorded from a recorded container tree (``--root``, by default one of the test
suite's fixture roots, so that every machine measures the same checks on the same files) or from
this container (``--root /``).

Targets (issue 6):
  wall(paddle-doctor healthcheck --baseline B) / wall(python -c pass)   <= 4
  peak RSS of the healthcheck process                                   <= 40 MB
  --count healthchecks in a row leave no files and no processes behind

Runs are interleaved (healthcheck, pass, healthcheck, pass, ...) so drift on a noisy machine hits
both sides alike; medians are compared. Both sides use this interpreter. The package is
byte-compiled first, as `pip install` does: with PYTHONDONTWRITEBYTECODE set, an editable install
would otherwise compile every module from source on every run.

The ratio depends on the interpreter's own start-up: in a development venv (editable install,
whose finder `site` loads at every start) `python -c pass` takes about twice as long as in a venv
with the wheel installed, while the healthcheck's own cost (the imports of the data model and the
checks, then the probing) stays the same. Run this script with the Python of either venv. A third
side, interleaved with the other two, imports only the standard-library modules the data model is
built on (dataclasses, typing, json, pathlib, threading): the floor under any healthcheck that
reads its baseline into that model, printed as a ratio of its own.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import paddle_doctor
import paddle_doctor.checks

TARGET_RATIO, TARGET_RSS_MB = 4.0, 40.0
INTERVAL_S = 30  # the example Dockerfile's HEALTHCHECK --interval
FIXTURE_ROOT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "roots" / "amd-avx512bf16-v2-quota"
STDLIB_FLOOR = "import dataclasses, json, pathlib, threading, typing"


def doctor_command() -> list[str]:
    script = Path(sys.executable).with_name("paddle-doctor")
    return [str(script)] if script.exists() else [sys.executable, "-m", "paddle_doctor"]


def run(argv: list[str], **where) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS in MB, exit code, CPU seconds: user + system) of one child, from wait4."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **where)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, child.returncode, usage.ru_utime + usage.ru_stime


def listing(*folders: Path) -> set[str]:
    return {str(path) for folder in folders for path in folder.rglob("*")}


def doctor_processes() -> list[str]:
    """Command lines of running paddle-doctor processes other than this one."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "healthcheck" in cmdline and ("paddle-doctor" in cmdline or "paddle_doctor" in cmdline):
            found.append(f"{entry.name}: {cmdline.strip()}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=21, help="interleaved timing rounds")
    parser.add_argument("--count", type=int, default=1000, help="healthchecks in a row for the leftovers check")
    parser.add_argument("--root", default=str(FIXTURE_ROOT), help="container tree to record the baseline from [default: %(default)s]")
    args = parser.parse_args()
    for package in (paddle_doctor, paddle_doctor.checks):
        compileall.compile_dir(Path(package.__file__).parent, quiet=1)
    doctor = doctor_command()
    with tempfile.TemporaryDirectory(prefix="hc-bench-") as folder:
        work = Path(folder)
        baseline = work / "baseline.json"
        recorded = subprocess.run([*doctor, "baseline", "--root", args.root, "--threads", "1", "--out", str(baseline)], capture_output=True, text=True)
        if recorded.returncode != 0:
            sys.exit(f"paddle-doctor baseline failed: {recorded.stderr.strip()}")
        healthcheck = [*doctor, "healthcheck", "--baseline", str(baseline)]
        bare, floor = [sys.executable, "-c", "pass"], [sys.executable, "-c", STDLIB_FLOOR]
        run(healthcheck), run(bare), run(floor)  # warm the page cache for all sides
        checks, passes, floors, rss, cpu, codes = [], [], [], [], [], set()
        for _ in range(args.rounds):
            seconds, peak, code, used = run(healthcheck)
            checks.append(seconds), rss.append(peak), cpu.append(used), codes.add(code)
            passes.append(run(bare)[0])
            floors.append(run(floor)[0])
        h, p, f = statistics.median(checks), statistics.median(passes), statistics.median(floors)
        editable = "site-packages" not in Path(paddle_doctor.__file__).parts
        print(f"{sys.executable} ({'editable install' if editable else 'installed wheel'}), root {args.root}, "
              f"rounds: {args.rounds} (interleaved); healthcheck exit codes seen: {sorted(codes)}")
        print(f"paddle-doctor healthcheck   median {h * 1000:6.1f} ms  (min {min(checks) * 1000:.1f}, max {max(checks) * 1000:.1f})")
        print(f"python -c pass              median {p * 1000:6.1f} ms  (min {min(passes) * 1000:.1f}, max {max(passes) * 1000:.1f})")
        print(f"python -c '{STDLIB_FLOOR}'  median {f * 1000:6.1f} ms  (min {min(floors) * 1000:.1f}, max {max(floors) * 1000:.1f})")
        print(f"ratio healthcheck / python start: {h / p:.2f}   (target <= {TARGET_RATIO:g}) {'OK' if h / p <= TARGET_RATIO else 'OVER'}")
        print(f"  of which the standard-library floor: {f / p:.2f}; the healthcheck over that floor: {(h - f) * 1000:.1f} ms")
        used = statistics.median(cpu)
        print(f"healthcheck CPU time (user + system) median {used * 1000:.1f} ms: every {INTERVAL_S} s, "
              f"{used / INTERVAL_S * 100:.2f} % of one CPU")
        peak = max(rss)
        print(f"healthcheck peak RSS: {peak:.1f} MB   (target <= {TARGET_RSS_MB:g} MB) {'OK' if peak <= TARGET_RSS_MB else 'OVER'}")

        # The children run in a private working and temporary directory, watched with /dev/shm.
        private_tmp = work / "tmp"
        private_tmp.mkdir()
        where = {"cwd": work, "env": {**os.environ, "TMPDIR": str(private_tmp)}}
        watched = (work, Path("/dev/shm"))
        before_files, before_procs = listing(*watched), doctor_processes()
        start = time.perf_counter()
        outcomes = [run(healthcheck, **where)[2] for _ in range(args.count)]
        elapsed = time.perf_counter() - start
        new_files = sorted(listing(*watched) - before_files)
        new_procs = sorted(set(doctor_processes()) - set(before_procs))
        print(f"{args.count} healthchecks in a row: {elapsed:.1f} s, {outcomes.count(0)} healthy, {outcomes.count(1)} unhealthy, "
              f"other exit codes {sorted(set(outcomes) - {0, 1}) or 'none'}")
        print(f"  new files in the working directory, TMPDIR and /dev/shm: {len(new_files)} {new_files[:5] if new_files else ''}")
        print(f"  paddle-doctor healthcheck processes still running: {len(new_procs)} {new_procs[:5] if new_procs else ''}")


if __name__ == "__main__":
    main()
