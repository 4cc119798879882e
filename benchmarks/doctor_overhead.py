#!/usr/bin/env python3
"""Cost of a plain `paddle-doctor --json` (no model), measured side by side in one run.

Targets (issue: foundation):
  wall(paddle-doctor --json) / wall(python -c "import paddle")  <= 1.5
  peak RSS of the doctor's own process (not its Paddle child)    <= 60 MB

Runs are interleaved (doctor, import, doctor, import, ...) so drift on a noisy machine hits both
sides alike; medians are compared.

The figures are written to benchmarks/results/doctor_overhead.json (``benchmarks/results.py`` renders the table).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_RATIO, TARGET_RSS_MB = 1.5, 60.0
OWN_RSS = (
    "import resource, runpy, sys\n"
    "sys.argv = ['paddle-doctor', '--json']\n"
    "try:\n"
    "    runpy.run_module('paddle_doctor', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    "sys.stderr.write('MAXRSS_KB %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
)


def timed(argv: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    return time.perf_counter() - start, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    python = sys.executable
    timed([python, "-c", "import paddle"])  # warm the page cache for both sides
    doctor, imports, rss = [], [], []
    for _ in range(args.rounds):
        seconds, stderr = timed([python, "-c", OWN_RSS])
        doctor.append(seconds)
        rss.extend(int(line.split()[1]) for line in stderr.splitlines() if line.startswith("MAXRSS_KB"))
        imports.append(timed([python, "-c", "import paddle"])[0])
    d, i = statistics.median(doctor), statistics.median(imports)
    peak_mb = max(rss) / 1024
    print(f"rounds: {args.rounds} (interleaved)")
    print(f"paddle-doctor --json        median {d:.3f} s  (min {min(doctor):.3f}, max {max(doctor):.3f})")
    print(f'python -c "import paddle"   median {i:.3f} s  (min {min(imports):.3f}, max {max(imports):.3f})')
    print(f"ratio doctor / import paddle: {d / i:.2f}   (target <= 1.50) {verdict(d / i <= TARGET_RATIO)}")
    print(f"doctor's own peak RSS: {peak_mb:.1f} MB   (target <= 60 MB) {verdict(peak_mb <= TARGET_RSS_MB)}")
    print(f"wrote {written(args.rounds, doctor, imports, peak_mb)}")


def verdict(ok: bool) -> str:
    return "OK" if ok else "OVER"


def written(rounds: int, doctor: list[float], imports: list[float], peak_mb: float) -> Path:
    """The figures printed, in benchmarks/results/doctor_overhead.json (``benchmarks/results.py`` renders the table)."""
    from results import write

    d, i = statistics.median(doctor), statistics.median(imports)
    summary = [(f"wall paddle-doctor --json / python -c \"import paddle\" {d / i:.2f} (target <= {TARGET_RATIO:g}) "
               f"{verdict(d / i <= TARGET_RATIO)}; {d:.3f} s vs {i:.3f} s (medians of {rounds})"),
               f"the doctor's own peak RSS {peak_mb:.1f} MB (target <= {TARGET_RSS_MB:g} MB) {verdict(peak_mb <= TARGET_RSS_MB)}"]
    figures = {"rounds": rounds, "target_ratio": TARGET_RATIO, "target_rss_mb": TARGET_RSS_MB, "ratio": round(d / i, 3),
               "peak_rss_mb": round(peak_mb, 1),
               "sides": {label: {"wall_s_median": round(statistics.median(times), 4), "wall_s_min": round(min(times), 4),
                                 "wall_s_max": round(max(times), 4)}
                         for label, times in (("paddle-doctor --json", doctor), ('python -c "import paddle"', imports))}}
    return write("doctor_overhead", summary, figures)


if __name__ == "__main__":
    main()
