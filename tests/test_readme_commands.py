"""README.md's shell commands run as written. Each ```sh block is marked by the last comment before it
(after the block before it): `<!-- readme-test: runs, exit N -->` runs it here, from a folder holding the
checkout's files, and its last command must exit N (the others 0; `exit 0|1` where the machine it runs on decides); `<!-- readme-test: slow -->` runs it
from a clean copy of the checkout (its tracked files), in the slow tier; `<!-- readme-test: not run: WHY -->`
says why it is not run here. A block without a mark fails."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO

MARK = re.compile(r"<!-- readme-test: (?:(?P<runs>runs, exit (?P<exit>\d+(?:\|\d+)*))|(?P<slow>slow)|not run: (?P<why>[^>]+?)) -->")
FENCE = re.compile(r"^```(?P<language>\w*)\n(?P<body>.*?)^```$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    line: int  # of its opening fence in README.md
    commands: tuple[str, ...]  # its lines, a trailing backslash joining the next
    mark: re.Match[str] | None
    shown: str | None  # the output block right after it, where there is one

    @property
    def exit_codes(self) -> set[int]:
        assert self.mark is not None and self.mark["exit"] is not None
        return {int(code) for code in self.mark["exit"].split("|")}


def commands_of(body: str) -> tuple[str, ...]:
    joined = re.sub(r"\\\n\s*", " ", body)
    return tuple(line for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def readme_blocks() -> list[Block]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    fences = list(FENCE.finditer(text))
    blocks, end = [], 0
    for index, fence in enumerate(fences):
        if fence["language"] == "sh":
            marks = list(MARK.finditer(text, end, fence.start()))
            after = fences[index + 1] if index + 1 < len(fences) else None
            shown = after["body"] if after is not None and after["language"] == "" and not text[fence.end():after.start()].strip() else None
            blocks.append(Block(text.count("\n", 0, fence.start()) + 1, commands_of(fence["body"]), marks[-1] if marks else None, shown))
        end = fence.end()
    return blocks


BLOCKS = readme_blocks()
RUNS = [block for block in BLOCKS if block.mark is not None and block.mark["runs"]]
SLOW = [block for block in BLOCKS if block.mark is not None and block.mark["slow"]]


def in_the_checkout(folder: Path) -> Path:
    """A folder whose entries are the checkout's (links), so that what a command writes lands there."""
    folder.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in {".git", ".venv"}:
            (folder / entry.name).symlink_to(entry)
    return folder


def environment(home: Path) -> dict[str, str]:
    """This interpreter's scripts first on the PATH (where `paddle-doctor` is), a home of the test's own."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PADDLE_DOCTOR_", "COLUMNS"))}
    home.mkdir(exist_ok=True)
    return {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"), "COLUMNS": "100"}


def test_every_shell_block_of_the_readme_is_marked_and_some_run():
    assert BLOCKS, "README.md has no ```sh block"
    unmarked = [block.line for block in BLOCKS if block.mark is None]
    assert unmarked == [], f"README.md's ```sh blocks at lines {unmarked} say neither how this test runs them nor why not"
    assert RUNS and SLOW
    assert all(block.commands for block in BLOCKS)
    assert any("paddle-doctor demo" in command for block in SLOW for command in block.commands)  # the quick start
    assert any("--root tests/fixtures/roots/" in command for block in RUNS for command in block.commands)  # the example


@pytest.mark.parametrize("block", RUNS, ids=[f"line-{block.line}" for block in RUNS])
def test_the_readme_command_runs_as_written(block, tmp_path):
    folder = in_the_checkout(tmp_path / "checkout")
    env = environment(tmp_path / "home")
    for number, command in enumerate(block.commands, 1):
        result = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
        expected = block.exit_codes if number == len(block.commands) else {0}
        assert result.returncode in expected, f"README.md:{block.line} `{command}` exited {result.returncode}:\n{result.stderr[-3000:]}"
        assert "Traceback" not in result.stderr, result.stderr[-3000:]
    if block.shown is not None:  # the output the README shows: each of its problem lines is what the command prints
        printed = result.stdout.splitlines()
        problems = [line for line in block.shown.splitlines() if line.startswith("✗ FAIL")]
        assert problems and all(line in printed for line in problems), (problems, printed)
    written = [word for command in block.commands for word in command.split() if word.endswith((".json", ".xml", ".sarif"))]
    assert all((folder / name).is_file() and (folder / name).stat().st_size for name in written), written


@pytest.mark.slow
@pytest.mark.parametrize("block", SLOW, ids=[f"line-{block.line}" for block in SLOW])
def test_the_slow_readme_command_runs_as_written_from_a_clean_copy(block, tmp_path):
    """The quick start: a venv, the install and the demo, from the checkout's tracked files alone."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    copy = tmp_path / "clone"
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    env = environment(tmp_path / "home")
    env["PATH"] = os.pathsep.join(part for part in env["PATH"].split(os.pathsep) if part != str(Path(sys.executable).parent))
    for command in block.commands:
        result = subprocess.run(["bash", "-c", command], cwd=copy, env=env, capture_output=True, text=True, timeout=1800)
        # the demo's report finds problems (exit 1); an install or a doctor that fails exits otherwise
        assert result.returncode in (0, 1), f"README.md:{block.line} `{command}` exited {result.returncode}:\n{result.stderr[-3000:]}"
        if "paddle-doctor demo" in command:
            assert "Recommended configuration" in result.stdout and "the demo model is kept in" in result.stderr, result.stderr[-3000:]
