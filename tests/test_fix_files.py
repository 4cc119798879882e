"""The files ``paddle-doctor fix`` reads and writes: each refusal (nothing written), the diff as git apply and
patch take it (the patched bytes exactly), atomic writes keeping mode bits, newlines and links, and VCS state."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from nonroot import NOBODY, needs_root, shared_tmp  # noqa: F401 (a fixture)
from paddle_doctor.fix.files import (
    FIX_BYTES,
    FixRefused,
    Patch,
    patched_text,
    read_file,
    unified_diff,
    vcs_state,
    write_all,
)
from paddle_doctor.fix.text import TextEdit

SERVICE = "import paddle\n\nconfig = paddle.inference.Config('m')\nconfig.set_cpu_math_library_num_threads(8)\n"
CONFIG = "server:\n  port: 8080\n  threads: 8\n"


def changing(text: str, old: str, new: str, why: str) -> TextEdit:
    """The edit replacing the one ``old`` in ``text`` with ``new``."""
    start = text.index(old)
    assert text.count(old) == 1
    return TextEdit(start, start + len(old), new, why)


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def patch_of(path: Path, roots: list[Path], *edits: tuple[str, str, str]) -> Patch:
    """The file at ``path`` read and its edits, each ``(old, new, why)``."""
    read = read_file(str(path), [str(root) for root in roots])
    return Patch(read, tuple(changing(read.text, *edit) for edit in edits))


def snapshot(*paths: Path) -> list[tuple[bytes, int, int]]:
    return [(path.read_bytes(), path.stat().st_mtime_ns, stat.S_IMODE(path.stat().st_mode)) for path in paths]


def two_files(tmp_path: Path) -> tuple[Path, Path]:
    return write(tmp_path / "service.py", SERVICE), write(tmp_path / "config.yaml", CONFIG)


# reading


def test_a_file_is_read_with_its_newlines_and_fingerprint(tmp_path):
    path = tmp_path / "crlf.py"
    path.write_bytes(b"a = 1\r\nb = 2\r\n")
    read = read_file(str(path), [str(tmp_path)])
    assert read.text == "a = 1\r\nb = 2\r\n"
    assert (read.path, read.target, read.size, read.mtime_ns) == (str(path), str(path), 14, path.stat().st_mtime_ns)
    assert read.sha256 == hashlib.sha256(b"a = 1\r\nb = 2\r\n").hexdigest()


def _link_out(tmp_path: Path, bad: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    write(outside, "x = 1\n")
    bad.symlink_to(outside)


def _folder(tmp_path: Path, bad: Path) -> None:
    bad.mkdir()


def _fifo(tmp_path: Path, bad: Path) -> None:
    os.mkfifo(bad)


def _too_large(tmp_path: Path, bad: Path) -> None:
    bad.write_bytes(b"#" * (FIX_BYTES + 1))


def _latin1(tmp_path: Path, bad: Path) -> None:
    bad.write_bytes(b"a = 1\nname = '\xe9t\xe9'\n")


@pytest.mark.parametrize("make, message", [
    (_link_out, r"bad\.py: is a symbolic link to .*-outside\.py, outside the project's folders \(.*\); the fix edits only files inside them$"),
    (_folder, r"bad\.py: is a folder, not a regular file; the fix edits only regular files of at most 1 MiB$"),
    (_fifo, r"bad\.py: is a FIFO \(named pipe\), not a regular file; the fix edits only regular files of at most 1 MiB$"),
    (_too_large, r"bad\.py: is larger than 1 MiB, the most the doctor reads of such a file; the fix edits only regular files of at most 1 MiB$"),
    (_latin1, r"bad\.py: is not UTF-8 text \(byte 0xe9 on line 2\); the fix edits only UTF-8 files$"),
], ids=["link out of the project", "folder", "fifo", "too large", "not utf-8"])
def test_a_file_the_fix_does_not_read_is_refused(tmp_path, make, message):
    good = write(tmp_path / "service.py", SERVICE)
    before = snapshot(good)
    bad = tmp_path / "bad.py"
    make(tmp_path, bad)
    read_file(str(good), [str(tmp_path)])
    with pytest.raises(FixRefused, match=message):
        read_file(str(bad), [str(tmp_path)])
    assert snapshot(good) == before


def test_a_missing_file_is_refused_in_one_line(tmp_path):
    with pytest.raises(FixRefused, match=r"gone\.py: cannot be read \(No such file or directory\)"):
        read_file(str(tmp_path / "gone.py"), [str(tmp_path)])


# applying edits


def test_edits_are_applied_from_the_end_and_duplicates_made_one(tmp_path):
    read = read_file(str(write(tmp_path / "a.py", "x = 1\ny = 2\n")), [str(tmp_path)])
    threads = TextEdit(4, 5, "10", "PD-A one")
    edits = [TextEdit(10, 11, "20", "PD-B two"), threads, TextEdit(4, 5, "10", "PD-C same"),
             TextEdit(0, 0, "# tuned\n", "PD-D insert"), TextEdit(4, 4, "", "no-op")]
    assert patched_text(read, edits) == "# tuned\nx = 10\ny = 20\n"
    assert patched_text(read, [TextEdit(4, 4, "(", "before"), TextEdit(4, 5, "3", "replace"), TextEdit(5, 5, ")", "after")]) \
        == "x = (3)\ny = 2\n"


@pytest.mark.parametrize("first, second", [
    (TextEdit(10, 11, "20", "PD-B threads"), TextEdit(8, 11, "y = 3", "PD-C whole")),
    (TextEdit(10, 10, "1", "PD-B append"), TextEdit(10, 10, "2", "PD-C append")),
    (TextEdit(6, 11, "y = 3", "PD-B span"), TextEdit(9, 9, " ", "PD-C inside")),
], ids=["overlapping spans", "two inserts at one offset", "insert inside a span"])
def test_conflicting_edits_are_refused_naming_the_line_and_both_whys(tmp_path, first, second):
    path = write(tmp_path / "a.py", "x = 1\ny = 2\n")
    read = read_file(str(path), [str(tmp_path)])
    with pytest.raises(FixRefused, match=r"a\.py: line 2: two fixes change the same text \('PD-[BC] [a-z]+' and 'PD-[BC] [a-z]+'\); expected edits that do not overlap$"):
        patched_text(read, [first, second])


# the diff


def test_the_diff_names_each_edit_and_its_hunk(tmp_path):
    service, config = two_files(tmp_path)
    patches = [patch_of(service, [tmp_path], ("(8)", "(2)", "PD-CPU-010 threads 8 -> 2")),
               patch_of(config, [tmp_path], ("threads: 8", "threads: 2", "PD-CPU-010 threads 8 -> 2"),
                        ("port: 8080", "port: 8080", "unchanged")),
               patch_of(write(tmp_path / "same.py", "x = 1\n"), [tmp_path])]
    assert unified_diff(patches, str(tmp_path)) == (
        "# service.py:4  PD-CPU-010 threads 8 -> 2\n"
        "--- a/service.py\n"
        "+++ b/service.py\n"
        "@@ -1,4 +1,4 @@ PD-CPU-010\n"
        " import paddle\n"
        " \n"
        " config = paddle.inference.Config('m')\n"
        "-config.set_cpu_math_library_num_threads(8)\n"
        "+config.set_cpu_math_library_num_threads(2)\n"
        "# config.yaml:3  PD-CPU-010 threads 8 -> 2\n"
        "--- a/config.yaml\n"
        "+++ b/config.yaml\n"
        "@@ -1,3 +1,3 @@ PD-CPU-010\n"
        " server:\n"
        "   port: 8080\n"
        "-  threads: 8\n"
        "+  threads: 2\n")
    assert unified_diff([patches[2]], str(tmp_path)) == ""
    elsewhere = unified_diff(patches[:1], str(tmp_path / "sub"))
    assert f"# {service}:4  " in elsewhere and f"--- a/{service}\n+++ b/{service}\n" in elsewhere


def test_each_hunk_names_the_rules_of_only_its_own_edits_cut_to_100_characters(tmp_path):
    text = "".join(f"line{n} = {n}\n" for n in range(1, 31))
    path = write(tmp_path / "long.py", text)
    long_rule = "PD-X" + "-LONG" * 30
    patch = patch_of(path, [tmp_path], ("line2 = 2", "line2 = 20", "PD-A two"), ("line3 = 3", "line3 = 30", f"{long_rule} reason"),
                     ("line4 = 4", "line4 = 40", "PD-A again"), ("line25 = 25", "line25 = 250", "PD-B twenty-five"))
    headers = [line for line in unified_diff([patch], str(tmp_path)).splitlines() if line.startswith("@@")]
    assert headers == ["@@ -1,7 +1,7 @@ " + f"PD-A {long_rule}"[:100], "@@ -22,7 +22,7 @@ PD-B"]


NO_FINAL_NEWLINE = "".join(f"v{n} = {n}\n" for n in range(1, 12)) + "last = 0"
CASES = {
    "lf": ("a.py", "import os\n\nthreads = 8\nport = 1\n", [("threads = 8", "threads = 2", "PD-1 threads")]),
    "crlf": ("c.yaml", "a: 1\r\nthreads: 8\r\nb: 2\r\nc: 3\r\nd: 4\r\n", [("threads: 8", "threads: 2", "PD-1 threads"),
                                                                        ("d: 4", "d: 5\r\ne: 6", "PD-2 add")]),
    "no final newline, last line changed": ("n.py", NO_FINAL_NEWLINE, [("last = 0", "last = 1", "PD-1 last")]),
    "no final newline, changed far above": ("n.py", NO_FINAL_NEWLINE, [("v1 = 1", "v1 = 9", "PD-1 first")]),
    "final newline added": ("n.py", "a = 1\nb = 2", [("b = 2", "b = 3\n", "PD-1 end")]),
    "final newline removed": ("n.py", "a = 1\nb = 2\n", [("b = 2\n", "b = 3", "PD-1 end")]),
    "insert at the end": ("e.py", "a = 1\n", [("a = 1\n", "a = 1\nimport os\n", "PD-1 append")]),
    "two hunks, unicode": ("u.py", "# é\n" + "".join(f"x{n} = 'ü'\n" for n in range(20)),
                           [("x1 = 'ü'", "x1 = 'ö'", "PD-1 one"), ("x18 = 'ü'", "x18 = 'ß'", "PD-2 two")]),
    "a name with a space": ("my service.py", "a = 1\n", [("a = 1", "a = 2", "PD-1 a")]),
    "a name with a quote and a tab": ('say "hi"\tnow.py', "a = 1\n", [("a = 1", "a = 2", "PD-1 a")]),
    "a form feed and a lone CR": ("f.py", "a = 1\f\nb = 2\rc = 3\nd = 4\n", [("d = 4", "d = 5", "PD-1 d")]),
}


def _apply(tool: str, folder: Path, diff: str) -> None:
    """``diff`` checked and then applied in ``folder`` by git apply or patch; AssertionError with what it said."""
    commands = {"git": [["git", "apply", "--check", "-"], ["git", "apply", "-"]],
                "patch": [["patch", "-p1", "--dry-run", "--batch"], ["patch", "-p1", "--batch", "--no-backup-if-mismatch"]]}
    for command in commands[tool]:
        done = subprocess.run(command, cwd=folder, input=diff.encode("utf-8"), capture_output=True, timeout=10)
        assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()


@pytest.mark.parametrize("tool", ["git", "patch"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_diff_applies_and_yields_the_patched_bytes(tmp_path, tool, case):
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    name, text, edits = CASES[case]
    original = tmp_path / "original"
    original.mkdir()
    patch = patch_of(write(original / name, text), [original], *edits)
    other = write(original / "other.py", "x = 1\n")
    patches = [patch, patch_of(other, [original], ("x = 1", "x = 2", "PD-9 other"))]
    diff = unified_diff(patches, str(original))
    repository = tmp_path / "repository"
    shutil.copytree(original, repository)
    if tool == "git":
        subprocess.run(["git", "init", "-q", str(repository)], check=True, timeout=10)
    _apply(tool, repository, diff)
    assert (repository / name).read_bytes() == patched_text(patch.read, patch.edits).encode("utf-8")
    assert (repository / "other.py").read_bytes() == b"x = 2\n"


# writing


def test_write_all_keeps_mode_bits_and_newlines_and_a_second_diff_is_empty(tmp_path):
    service = tmp_path / "service.py"
    service.write_bytes(SERVICE.replace("\n", "\r\n").encode())
    config = write(tmp_path / "config.yaml", CONFIG)
    service.chmod(0o750)
    config.chmod(0o600)
    patches = [patch_of(service, [tmp_path], ("(8)", "(2)", "PD-1")), patch_of(config, [tmp_path], ("threads: 8", "threads: 2", "PD-1"))]
    assert write_all(patches) == [str(service), str(config)]
    assert service.read_bytes() == SERVICE.replace("(8)", "(2)").replace("\n", "\r\n").encode()
    assert config.read_text() == CONFIG.replace("threads: 8", "threads: 2")
    assert (stat.S_IMODE(service.stat().st_mode), stat.S_IMODE(config.stat().st_mode)) == (0o750, 0o600)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml", "service.py"]  # no temporary file left
    again = [Patch(read_file(str(path), [str(tmp_path)]), patch.edits) for path, patch in zip((service, config), patches)]
    assert unified_diff(again, str(tmp_path)) == ""
    assert write_all(again) == []


def test_a_link_inside_the_project_is_written_through_and_kept(tmp_path):
    (tmp_path / "conf").mkdir()
    real = write(tmp_path / "conf" / "real.yaml", CONFIG)
    link = tmp_path / "config.yaml"
    link.symlink_to(Path("conf") / "real.yaml")
    patch = patch_of(link, [tmp_path], ("threads: 8", "threads: 2", "PD-1"))
    assert patch.read.target == str(real)
    assert write_all([patch]) == [str(link)]
    assert link.is_symlink() and os.readlink(link) == os.path.join("conf", "real.yaml")
    assert real.read_text() == CONFIG.replace("threads: 8", "threads: 2")


def _changed(bad: Path, patch: Patch) -> None:
    write(bad, CONFIG.replace("8080", "9090"))


def _same_bytes_touched(bad: Path, patch: Patch) -> None:
    os.utime(bad, ns=(patch.read.mtime_ns + 10**9, patch.read.mtime_ns + 10**9))


def _retargeted(bad: Path, patch: Patch) -> None:
    bad.unlink()
    write(bad.with_name("elsewhere.yaml"), CONFIG)
    bad.symlink_to("elsewhere.yaml")


def _removed(bad: Path, patch: Patch) -> None:
    bad.unlink()


def _unchanged(bad: Path, patch: Patch) -> None:
    pass


CHANGED = r"config\.yaml: changed since paddle-doctor read it; run fix again"


@pytest.mark.parametrize("config_edit, after_read, message", [
    (("threads: 8", "threads: 2", "PD-1"), _changed, CHANGED + "$"),
    (("threads: 8", "threads: 2", "PD-1"), _same_bytes_touched, CHANGED + "$"),
    (("threads: 8", "threads: 2", "PD-1"), _retargeted, CHANGED + r" \(it now leads to another file\)$"),
    (("threads: 8", "threads: 2", "PD-1"), _removed, CHANGED + "$"),
    (("threads: 8", "threads: [2", "PD-1 bad"), _unchanged,
     r"config\.yaml: the patched file would not parse: line 4: expected ',' or '\]', but got '<stream end>'; nothing was written$"),
    (("port: 8080\n", "port: 8080\n---\n- a\nb: 1\n", "PD-1 second document"), _unchanged,
     r"config\.yaml: the patched file would not parse: line 5: .*; nothing was written$"),
], ids=["changed", "touched", "link retargeted", "removed", "yaml does not load", "second yaml document does not load"])
def test_a_refusal_of_the_second_file_writes_neither(tmp_path, config_edit, after_read, message):
    service, config = two_files(tmp_path)
    patches = [patch_of(service, [tmp_path], ("(8)", "(2)", "PD-1")), patch_of(config, [tmp_path], config_edit)]
    after_read(config, patches[1])
    before = snapshot(*(path for path in (service, config) if path.exists()))
    with pytest.raises(FixRefused, match=message):
        write_all(patches)
    assert snapshot(*(path for path in (service, config) if path.exists())) == before


def test_a_python_file_that_would_not_parse_is_refused_and_nothing_written(tmp_path):
    config, service = write(tmp_path / "config.yaml", CONFIG), write(tmp_path / "service.py", SERVICE)
    patches = [patch_of(config, [tmp_path], ("threads: 8", "threads: 2", "PD-1")),
               patch_of(service, [tmp_path], ("(8)", "(2", "PD-1 broken"))]
    before = snapshot(config, service)
    with pytest.raises(FixRefused, match=r"service\.py: the patched file would not parse: line 4: '\(' was never closed; nothing was written$"):
        write_all(patches)
    assert snapshot(config, service) == before


def test_a_python_file_with_a_nul_character_would_not_parse(tmp_path):
    patch = patch_of(write(tmp_path / "service.py", SERVICE), [tmp_path], ("(8)", "(8\0)", "PD-1 nul"))
    with pytest.raises(FixRefused, match=r"service\.py: the patched file would not parse: source code string cannot contain null bytes; "):
        write_all([patch])
    assert (tmp_path / "service.py").read_text() == SERVICE


def test_a_conflict_refuses_writing_anything(tmp_path):
    service, config = two_files(tmp_path)
    read = read_file(str(config), [str(tmp_path)])
    clash = [changing(read.text, "threads: 8", "threads: 2", "PD-1 two"), changing(read.text, "8\n", "4\n", "PD-2 four")]
    patches = [patch_of(service, [tmp_path], ("(8)", "(2)", "PD-1")), Patch(read, tuple(clash))]
    before = snapshot(service, config)
    with pytest.raises(FixRefused, match=r"config\.yaml: line 3: two fixes change the same text \('PD-1 two' and 'PD-2 four'\)"):
        write_all(patches)
    with pytest.raises(FixRefused, match="line 3"):
        unified_diff(patches, str(tmp_path))
    assert snapshot(service, config) == before


def test_a_read_only_file_is_refused_and_nothing_written(tmp_path):  # by root too: its mode says read-only
    service, config = two_files(tmp_path)
    config.chmod(0o444)
    patches = [patch_of(service, [tmp_path], ("(8)", "(2)", "PD-1")), patch_of(config, [tmp_path], ("threads: 8", "threads: 2", "PD-1"))]
    before = snapshot(service, config)
    with pytest.raises(FixRefused, match=r"config\.yaml: is read-only; expected a file you may write"):
        write_all(patches)
    assert snapshot(service, config) == before


READ_ONLY_AS_NOBODY = """
import sys
from paddle_doctor.fix.files import FixRefused, Patch, read_file, write_all
from paddle_doctor.fix.text import TextEdit
folder = sys.argv[1]
patches = []
for name, old, new in (("service.py", "(8)", "(2)"), ("config.yaml", "threads: 8", "threads: 2")):
    read = read_file(f"{folder}/{name}", [folder])
    start = read.text.index(old)
    patches.append(Patch(read, (TextEdit(start, start + len(old), new, "PD-1"),)))
try:
    write_all(patches)
except FixRefused as exc:
    print(exc)
"""


@needs_root
def test_a_read_only_file_is_refused_for_another_user_and_nothing_written(shared_tmp):
    shared_tmp.chmod(0o777)
    service, config = two_files(shared_tmp)
    os.chown(service, NOBODY, NOBODY)
    config.chmod(0o444)
    before = snapshot(service, config)
    argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-c", READ_ONLY_AS_NOBODY, str(shared_tmp)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert done.stdout.startswith(f"{config}: is read-only; expected a file you may write"), done.stdout + done.stderr
    assert snapshot(service, config) == before


def test_a_failed_replace_puts_back_the_files_already_written(tmp_path, monkeypatch):
    service, config = two_files(tmp_path)
    patches = [patch_of(service, [tmp_path], ("(8)", "(2)", "PD-1")), patch_of(config, [tmp_path], ("threads: 8", "threads: 2", "PD-1"))]
    real_replace = os.replace

    def replace(source, target):
        if os.fspath(target) == str(config):
            raise OSError(28, "No space left on device")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(FixRefused, match=r"config\.yaml: cannot be replaced \(No space left on device\); restored .*service\.py; "
                                         r"the other files were not written$"):
        write_all(patches)
    assert (service.read_text(), config.read_text()) == (SERVICE, CONFIG)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml", "service.py"]


# version control


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   check=True, capture_output=True, timeout=10)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_vcs_state_names_files_not_committed(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    repository = tmp_path / "repository"
    repository.mkdir()
    clean, dirty, untracked, ignored = (write(repository / name, "x = 1\n") for name in ("clean.py", "dirty.py", "new.py", "skip.py"))
    write(repository / ".gitignore", "skip.py\n")
    _git(repository, "init", "-q")
    _git(repository, "add", "clean.py", "dirty.py", ".gitignore")
    _git(repository, "commit", "-q", "-m", "x")
    write(dirty, "x = 2\n")
    outside = write(tmp_path / "loose.py", "x = 1\n")
    assert vcs_state([str(clean)]) is None
    assert vcs_state([str(clean), str(dirty), str(untracked), str(ignored), str(outside)]) == (
        f"{dirty}: uncommitted changes; {untracked}: not under version control (untracked in git); "
        f"{ignored}: not under version control (ignored by git); {outside}: not under version control; review the diff before --write")


def test_vcs_state_without_git_cannot_tell_and_says_so_once(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    paths = [str(write(tmp_path / "a.py", "x\n")), str(write(tmp_path / "b.py", "y\n"))]
    assert vcs_state(paths) == "cannot tell whether the files are committed (git is not installed); review the diff before --write"

