#!/usr/bin/env python3
"""What reading the service's process adds to a plain run, measured side by side in one run.

Target (issue 13): wall(paddle-doctor --json --pid PID) - wall(paddle-doctor --json --pid none) <= 1.5 s

A service from tests/fixtures/services (imports Paddle, builds its Config, waits) runs in the
background; runs are interleaved (without, with, without, with, ...) so drift on a noisy machine
hits both sides alike, and medians are compared. Most of the difference is the ~1 s sample of the
process's per-thread CPU time; the rest is reading /proc/PID and the service's source.

The figures are written to benchmarks/results/pid_probe.json (``benchmarks/results.py`` renders the table).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SERVICE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "services" / "env_helper.py"
TARGET_S = 1.5


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return seconds


def start_service() -> subprocess.Popen:
    env = {**os.environ, "SERVICE_SECONDS": "600"}
    service = subprocess.Popen([sys.executable, str(SERVICE)], env=env, stdout=subprocess.PIPE, text=True)
    if service.stdout.readline().strip() != "ready":
        service.kill()
        sys.exit("the service did not start")
    return service


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    service = start_service()
    try:
        doctor = [sys.executable, "-m", "paddle_doctor", "--json", "--no-gpu"]
        timed(doctor + ["--pid", "none"])  # warm the page cache for both sides
        plain, with_pid = [], []
        for _ in range(args.rounds):
            plain.append(timed(doctor + ["--pid", "none"]))
            with_pid.append(timed(doctor + ["--pid", str(service.pid)]))
    finally:
        service.kill()
        service.wait()
    p, w = statistics.median(plain), statistics.median(with_pid)
    print(f"rounds: {args.rounds} (interleaved)")
    print(f"paddle-doctor --json --pid none   median {p:.3f} s  (min {min(plain):.3f}, max {max(plain):.3f})")
    print(f"paddle-doctor --json --pid PID    median {w:.3f} s  (min {min(with_pid):.3f}, max {max(with_pid):.3f})")
    print(f"added by --pid: {w - p:.3f} s   (target <= {TARGET_S} s) {'OK' if w - p <= TARGET_S else 'OVER'}; ratio {w / p:.2f}")
    print(f"wrote {written(args.rounds, plain, with_pid)}")


def written(rounds: int, plain: list[float], with_pid: list[float]) -> Path:
    """The figures printed, in benchmarks/results/pid_probe.json (``benchmarks/results.py`` renders the table)."""
    from results import write

    p, w = statistics.median(plain), statistics.median(with_pid)
    summary = [(f"added by --pid {w - p:.3f} s (target <= {TARGET_S:g} s) {'OK' if w - p <= TARGET_S else 'OVER'}; "
               f"--pid PID {w:.3f} s vs --pid none {p:.3f} s, ratio {w / p:.2f} (medians of {rounds})")]
    figures = {"rounds": rounds, "target_added_s": TARGET_S, "added_s": round(w - p, 4), "ratio": round(w / p, 3),
               "sides": {label: {"wall_s_median": round(statistics.median(times), 4), "wall_s_min": round(min(times), 4),
                                 "wall_s_max": round(max(times), 4)}
                         for label, times in (("paddle-doctor --json --pid none", plain), ("paddle-doctor --json --pid PID", with_pid))}}
    return write("pid_probe", summary, figures)


if __name__ == "__main__":
    main()
