#!/usr/bin/env python3
"""Cost of `paddle-doctor healthcheck --baseline PATH`, measured side by side in one run.

The doctor is built into a wheel from this checkout and installed into a fresh virtual environment
(as a Dockerfile installs it), unless ``--venv DIR`` names one that already has the wheel installed.
Every side runs with that venv's Python, in a clean environment (no PYTHONPATH, recording off).
``--before DIR`` adds the healthcheck of another venv's wheel (an earlier commit's, with a baseline
recorded by it) as one more side of the same rounds: a change measured before and after at once.

The baseline is recorded from a recorded container tree (``--root``, by default one of the test
suite's fixture roots, so that every machine measures the same checks on the same files) or from
this container (``--root /``).

Targets:
  CPU time (user + system) of one healthcheck                             <= 60 ms   (issue 21)
  wall(paddle-doctor healthcheck --baseline B) / wall(python -c pass)     <= 4       (issue 6)
  peak RSS of the healthcheck process                                     <= 40 MB
  --count healthchecks in a row leave no files and no processes behind

The CPU time is what a Docker HEALTHCHECK takes from the container's own CPU quota every probe
period: the child's user + system seconds as the kernel accounts them (``os.wait4``), so the load of
other work on the machine does not count, as it does in the wall time. Each round runs every side
once, in an order that rotates from round to round, so drift on a noisy machine hits all sides
alike; medians are compared. A third side imports only the standard-library modules the data model
is built on: the floor under any healthcheck that reads its baseline into that model.

The figures are written to benchmarks/results/healthcheck.json (``benchmarks/results.py`` renders the table).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_CPU_MS, TARGET_RATIO, TARGET_RSS_MB = 60.0, 4.0, 40.0
INTERVAL_S = 30  # the example Dockerfile's HEALTHCHECK --interval
FIXTURE_ROOT = REPO / "tests" / "fixtures" / "roots" / "amd-avx512bf16-v2-quota"
STDLIB_FLOOR = "import dataclasses, json, pathlib, threading, typing"
WHERE_INSTALLED = "import paddle_doctor, sys; sys.stdout.write(paddle_doctor.__file__)"


@dataclass
class Side:
    """One command measured: its wall seconds, CPU seconds (user + system), peak RSS (MB) and exit codes."""

    label: str
    argv: list[str]
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    codes: set[int] = field(default_factory=set)

    def measure(self, **where) -> int:
        start = time.perf_counter()
        child = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **where)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = code = os.waitstatus_to_exitcode(status)
        self.wall.append(time.perf_counter() - start)
        self.cpu.append(usage.ru_utime + usage.ru_stime)
        self.rss.append(usage.ru_maxrss / 1024)
        self.codes.add(code)
        return code

    def line(self) -> str:
        cpu, wall = statistics.median(self.cpu) * 1000, statistics.median(self.wall) * 1000
        return (f"{self.label:<56} CPU median {cpu:6.1f} ms (min {min(self.cpu) * 1000:5.1f})   "
                f"wall median {wall:6.1f} ms (min {min(self.wall) * 1000:5.1f})")


def clean_environment() -> dict[str, str]:
    """This environment without what would change what the children import."""
    return {name: value for name, value in os.environ.items()
            if name not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PADDLE_DOCTOR_RECORD", "VIRTUAL_ENV")}


def install_fresh(folder: Path, env: dict[str, str]) -> Path:
    """A new venv at ``folder`` with the wheel built from this checkout installed; its Python."""
    dist = folder / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
                           capture_output=True, text=True, env=env)
    if built.returncode != 0:
        sys.exit(f"building the wheel failed: {built.stderr.strip()[-2000:]}")
    (wheel,) = dist.glob("paddle_doctor-*.whl")
    venv.create(folder / "venv", with_pip=True)
    python = folder / "venv" / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True, env=env)
    if installed.returncode != 0:
        sys.exit(f"installing {wheel.name} failed: {installed.stderr.strip()[-2000:]}")
    return python


def interleaved(sides: list[Side], rounds: int) -> None:
    for round_ in range(rounds):
        shift = round_ % len(sides)
        for side in sides[shift:] + sides[:shift]:
            side.measure(env=clean_environment())


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


def leftovers(healthcheck: Side, count: int, work: Path) -> None:
    """``count`` healthchecks in a private working and temporary directory, watched with /dev/shm."""
    private_tmp = work / "tmp"
    private_tmp.mkdir()
    where = {"cwd": work, "env": {**clean_environment(), "TMPDIR": str(private_tmp)}}
    watched = (work, Path("/dev/shm"))
    before_files, before_procs = listing(*watched), doctor_processes()
    start = time.perf_counter()
    outcomes = [healthcheck.measure(**where) for _ in range(count)]
    elapsed = time.perf_counter() - start
    new_files = sorted(listing(*watched) - before_files)
    new_procs = sorted(set(doctor_processes()) - set(before_procs))
    print(f"{count} healthchecks in a row: {elapsed:.1f} s, {outcomes.count(0)} healthy, {outcomes.count(1)} unhealthy, "
          f"other exit codes {sorted(set(outcomes) - {0, 1}) or 'none'}")
    print(f"  new files in the working directory, TMPDIR and /dev/shm: {len(new_files)} {new_files[:5] if new_files else ''}")
    print(f"  paddle-doctor healthcheck processes still running: {len(new_procs)} {new_procs[:5] if new_procs else ''}")


def verdict(ok: bool) -> str:
    return "OK" if ok else "OVER"


def installed_python(venv_dir: Path, env: dict[str, str], work: Path) -> Path:
    """The venv's Python, refused unless paddle_doctor is an installed wheel there."""
    python = venv_dir / "bin" / "python"
    module = subprocess.run([str(python), "-c", WHERE_INSTALLED], capture_output=True, text=True, env=env, cwd=work).stdout
    if "site-packages" not in Path(module).parts:
        sys.exit(f"{python}: paddle_doctor is not an installed wheel there ({module or 'not importable'})")
    return python


def healthcheck_side(label: str, python: Path, root: str, env: dict[str, str], work: Path) -> Side:
    """The healthcheck of the doctor installed with ``python``, against a baseline it records of ``root``."""
    doctor = str(python.with_name("paddle-doctor"))
    baseline = work / f"baseline-{label}.json"
    recorded = subprocess.run([doctor, "baseline", "--root", str(Path(root).resolve()), "--threads", "1", "--out", str(baseline)],
                              capture_output=True, text=True, env=env, cwd=work)
    if recorded.returncode != 0:
        sys.exit(f"{doctor} baseline failed: {recorded.stderr.strip()}")
    return Side(f"paddle-doctor healthcheck --baseline B ({label})", [doctor, "healthcheck", "--baseline", str(baseline)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=41, help="interleaved timing rounds [default: %(default)s]")
    parser.add_argument("--count", type=int, default=1000, help="healthchecks in a row for the leftovers check; 0 skips it")
    parser.add_argument("--root", default=str(FIXTURE_ROOT), help="container tree to record the baseline from [default: %(default)s]")
    parser.add_argument("--venv", type=Path, help="a venv with the paddle-doctor wheel installed [default: a fresh one]")
    parser.add_argument("--before", type=Path, help="a venv with another paddle-doctor wheel, measured in the same rounds")
    args = parser.parse_args()
    env = clean_environment()
    with tempfile.TemporaryDirectory(prefix="hc-bench-") as folder:
        work = Path(folder)
        python = installed_python(args.venv, env, work) if args.venv else install_fresh(work, env)
        healthcheck = healthcheck_side("this wheel", python, args.root, env, work)
        bare = Side("python -c pass", [str(python), "-c", "pass"])
        floor = Side(f"python -c '{STDLIB_FLOOR}'", [str(python), "-c", STDLIB_FLOOR])
        sides = [healthcheck, bare, floor]
        if args.before:
            sides.append(healthcheck_side("before", installed_python(args.before, env, work), args.root, env, work))
        interleaved(sides, 1)  # warm the page cache for all sides
        for side in sides:
            side.wall, side.cpu, side.rss, side.codes = [], [], [], set()
        interleaved(sides, args.rounds)

        print(f"{python}, Python {sys.version.split()[0]} here")
        print(f"root {args.root}, {args.rounds} rounds, sides interleaved; healthcheck exit codes seen: {sorted(healthcheck.codes)}")
        for side in sides:
            print(side.line())
        cpu, cpu_bare, cpu_floor = (statistics.median(side.cpu) for side in (healthcheck, bare, floor))
        wall, wall_bare = statistics.median(healthcheck.wall), statistics.median(bare.wall)
        print(f"healthcheck CPU per probe: {cpu * 1000:.1f} ms (target <= {TARGET_CPU_MS:g} ms) {verdict(cpu * 1000 <= TARGET_CPU_MS)}; "
              f"every {INTERVAL_S} s, {cpu / INTERVAL_S * 100:.2f} % of one CPU")
        print(f"ratio healthcheck / python -c pass: CPU {cpu / cpu_bare:.2f}, wall {wall / wall_bare:.2f} "
              f"(target wall <= {TARGET_RATIO:g}) {verdict(wall / wall_bare <= TARGET_RATIO)}")
        print(f"  the standard-library floor: CPU {cpu_floor / cpu_bare:.2f}; the healthcheck over that floor: {(cpu - cpu_floor) * 1000:.1f} ms CPU")
        if args.before:
            before = statistics.median(sides[-1].cpu)
            print(f"before: healthcheck CPU per probe {before * 1000:.1f} ms, CPU {before / cpu_bare:.2f} x python -c pass; "
                  f"this wheel takes {(before - cpu) * 1000:.1f} ms less ({(1 - cpu / before) * 100:.0f} %)")
        peak = max(healthcheck.rss)
        print(f"healthcheck peak RSS: {peak:.1f} MB (target <= {TARGET_RSS_MB:g} MB) {verdict(peak <= TARGET_RSS_MB)}")
        if args.count:
            leftovers(healthcheck, args.count, work)
    print(f"wrote {written(args, sides)}")


def written(args: argparse.Namespace, sides: list[Side]) -> Path:
    """The figures of every side, in benchmarks/results/healthcheck.json (``benchmarks/results.py`` renders the table)."""
    from results import write

    healthcheck, bare, floor = sides[:3]
    cpu, cpu_floor, cpu_bare = (statistics.median(side.cpu) * 1000 for side in (healthcheck, floor, bare))
    summary = [(f"CPU per probe {cpu:.1f} ms (target <= {TARGET_CPU_MS:g} ms) {verdict(cpu <= TARGET_CPU_MS)}; "
                f"the standard-library floor {cpu_floor:.1f} ms, {cpu / cpu_floor:.2f}x it; python -c pass {cpu_bare:.1f} ms; "
                f"peak RSS {max(healthcheck.rss):.1f} MB")]
    if len(sides) > 3:
        before = statistics.median(sides[3].cpu) * 1000
        summary.append(f"before (--before): CPU per probe {before:.1f} ms, {before / cpu_floor:.2f}x the floor, in the same rounds")
    figures = {"root": args.root, "rounds": args.rounds, "target_cpu_ms": TARGET_CPU_MS,
               "sides": {side.label: {"cpu_ms_median": round(statistics.median(side.cpu) * 1000, 2),
                                      "cpu_ms_min": round(min(side.cpu) * 1000, 2),
                                      "wall_ms_median": round(statistics.median(side.wall) * 1000, 2),
                                      "peak_rss_mb": round(max(side.rss), 1), "exit_codes": sorted(side.codes)} for side in sides}}
    return write("healthcheck", summary, figures)


if __name__ == "__main__":
    main()
