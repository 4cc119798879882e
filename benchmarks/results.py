"""Where a benchmark's figures live: ``benchmarks/results/<name>.json``, written by the benchmark that
measured them, with the machine, the date, the commit and how busy the machine was, so that a figure
is never copied by hand and always says where it came from. ``python benchmarks/results.py`` renders
them all as ``benchmarks/README.md``'s table of results."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
README = Path(__file__).resolve().parent / "README.md"
START, END = "<!-- results:start (written by `python benchmarks/results.py`) -->", "<!-- results:end -->"


def machine() -> dict[str, Any]:
    """The machine the figures come from: CPU model, CPUs this process may use, load average, Python."""
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor() or "unknown")
    return {"cpu": model, "cpus": len(os.sched_getaffinity(0)), "load_average": [round(n, 2) for n in os.getloadavg()],
            "python": platform.python_version()}


def commit() -> str | None:
    """The checkout's commit, with ``+changes`` where the working tree differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).parent).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                               cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return f"{head}+changes" if dirty else head


def write(name: str, summary: list[str], figures: dict[str, Any]) -> Path:
    """The results of benchmark ``name``: ``summary`` lines for the table, and every figure it printed."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    document = {"benchmark": name, "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()) + " UTC", "commit": commit(),
                "machine": machine(), "summary": summary, "figures": figures}
    path.write_text(json.dumps(document, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return path


def table() -> str:
    """Every benchmark's summary, with where and when it was measured."""
    lines = ["| benchmark | measured | figures |", "|---|---|---|"]
    for path in sorted(RESULTS.glob("*.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        where = (f"{result['date']}, {result['commit']}, {result['machine']['cpu']} ({result['machine']['cpus']} CPUs, "
                 f"load {result['machine']['load_average'][0]})")
        lines.append(f"| [`{result['benchmark']}.py`]({result['benchmark']}.py) | {where} | {'<br>'.join(result['summary'])} |")
    return "\n".join(lines) + "\n"


def render() -> None:
    """``benchmarks/README.md`` with its table of results written anew between its markers."""
    text = README.read_text(encoding="utf-8")
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    README.write_text(f"{head}{START}\n{table()}{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    render()
    sys.stdout.write(f"wrote {README}\n")
