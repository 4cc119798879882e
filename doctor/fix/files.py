"""The files a fix reads and writes: read once with a fingerprint, edited in memory, shown as a unified diff,
written all or none (each atomically, only if unchanged since read and still parsing), and their VCS state."""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import re
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..base.inputs import MiB, Refused, open_regular
from .text import FixRefused, TextEdit

FIX_BYTES = 1 * MiB  # the largest file a fix edits: real source and configuration files are far smaller
CONTEXT_LINES = 3
SECTION_CHARS = 100  # the most of the rule ids of a hunk's edits its @@ line shows
GIT_SECONDS = 5
HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
NO_NEWLINE = "\\ No newline at end of file\n"


@dataclass(frozen=True)
class ReadFile:
    """A file as the fix read it: its text (newlines as they are) and its fingerprint at that moment;
    ``target`` is the real path written to (a symbolic link's resolved target)."""

    path: str
    text: str
    sha256: str
    mtime_ns: int
    size: int
    target: str


@dataclass(frozen=True)
class Patch:
    """One file's read text and the edits the fix makes to it."""

    read: ReadFile
    edits: tuple[TextEdit, ...]


def read_file(path: str, project_roots: Sequence[str]) -> ReadFile:
    """The file at ``path`` with its fingerprint; FixRefused for a link out of the project, a file that is not
    regular, larger than FIX_BYTES or not UTF-8."""
    target = os.path.realpath(path)
    if target != os.path.abspath(path) and not any(_inside(target, os.path.realpath(root)) for root in project_roots):
        roots = ", ".join(project_roots) or "none given"
        raise FixRefused(f"{path}: is a symbolic link to {target}, outside the project's folders ({roots}); "
                         "the fix edits only files inside them")
    data, status = _read(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FixRefused(f"{path}: is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); "
                         "the fix edits only UTF-8 files") from None
    return ReadFile(path, text, hashlib.sha256(data).hexdigest(), status.st_mtime_ns, status.st_size, target)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _read(path: str) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file of at most FIX_BYTES and its status as opened; FixRefused otherwise."""
    hint = f"the fix edits only regular files of at most {FIX_BYTES // MiB} MiB"
    try:
        with open_regular(path, FIX_BYTES) as handle:
            status = os.fstat(handle.fileno())
            data = handle.read(FIX_BYTES + 1)
    except Refused as exc:
        raise FixRefused(f"{path}: {exc}; {hint}") from None
    except OSError as exc:
        raise FixRefused(f"{path}: cannot be read ({exc.strerror or exc}); {hint}") from None
    if len(data) > FIX_BYTES:  # grown since it was opened
        raise FixRefused(f"{path}: is larger than {FIX_BYTES // MiB} MiB; {hint}")
    return data, status


def line_of(text: str, offset: int) -> int:
    """The 1-based line of ``text`` that ``offset`` is on."""
    return text.count("\n", 0, offset) + 1


def effective_edits(read: ReadFile, edits: Iterable[TextEdit]) -> list[TextEdit]:
    """The edits that change the text, in order of offset, identical ones made one (their whys joined);
    FixRefused naming the file, the line and both whys when two of them conflict."""
    merged: dict[tuple[int, int, str], TextEdit] = {}
    for edit in edits:
        if edit.end > len(read.text):
            raise FixRefused(f"{read.path}: an edit ({edit.why}) ends at offset {edit.end}, past the file's end "
                             f"({len(read.text)} characters); expected edits of the text as read")
        if read.text[edit.start:edit.end] == edit.replacement:
            continue
        key = (edit.start, edit.end, edit.replacement)
        same = merged.get(key)
        if same is None:
            merged[key] = edit
        elif edit.why and edit.why not in same.why.split("; "):
            merged[key] = TextEdit(same.start, same.end, same.replacement, f"{same.why}; {edit.why}" if same.why else edit.why)
    ordered = sorted(merged.values(), key=lambda e: (e.start, e.end))
    for before, after in zip(ordered, ordered[1:]):
        overlap = after.start < before.end
        both_insert = before.start == before.end == after.start == after.end
        if overlap or both_insert:
            raise FixRefused(f"{read.path}: line {line_of(read.text, after.start)}: two fixes change the same text "
                             f"({before.why or 'an edit'!r} and {after.why or 'an edit'!r}); expected edits that do not overlap")
    return ordered


def patched_text(read: ReadFile, edits: Iterable[TextEdit]) -> str:
    """The file's text with ``edits`` applied; FixRefused when two of them conflict."""
    text = read.text
    for edit in reversed(effective_edits(read, edits)):
        text = text[:edit.start] + edit.replacement + text[edit.end:]
    return text


def shown_path(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` when under it, else absolute."""
    absolute, folder = os.path.abspath(path), os.path.abspath(cwd)
    return os.path.relpath(absolute, folder) if _inside(absolute, folder) and absolute != folder else absolute


def _lines(text: str) -> list[str]:
    """The lines of ``text`` split at ``\\n`` only (as diff and patch do), each with its end."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def _one_line(why: str) -> str:
    return " ".join(why.split())


def unified_diff(patches: Sequence[Patch], cwd: str) -> str:
    """The patches as one unified diff (``patch -p1``, ``git apply``), each file's edits named in comment lines
    above it and in its hunks' ``@@`` lines; empty when nothing changes."""
    return "".join(_file_diff(patch, cwd) for patch in patches)


def _file_diff(patch: Patch, cwd: str) -> str:
    read = patch.read
    edits = effective_edits(read, patch.edits)
    after = patched_text(read, edits)
    if after == read.text:
        return ""
    name = shown_path(read.path, cwd)
    shown = _header_name("", name).rstrip("\t")
    lines = list(dict.fromkeys(f"# {shown}:{line_of(read.text, edit.start)}  {_one_line(edit.why)}".rstrip() + "\n" for edit in edits))
    edit_lines = [line_of(read.text, edit.start) for edit in edits]
    hunks: list[list[str]] = []
    diff = difflib.unified_diff(_lines(read.text), _lines(after), _header_name("a/", name), _header_name("b/", name),
                                n=CONTEXT_LINES)
    for line in diff:
        if line.startswith("@@"):
            hunks.append([line])
        elif hunks:
            hunks[-1].append(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}")
        else:
            lines.append(line)
    owner = [_nearest_hunk(line, hunks) for line in edit_lines]
    for index, hunk in enumerate(hunks):
        whys = " ".join(dict.fromkeys(_one_line(e.why).split(" ", 1)[0] for e, h in zip(edits, owner) if h == index and e.why))
        section = f" {whys[:SECTION_CHARS]}" if whys else ""
        lines.append(hunk[0].rstrip("\n") + section + "\n")
        lines.extend(hunk[1:])
    return "".join(lines)


def _header_name(prefix: str, name: str) -> str:
    """The name on a ``---``/``+++`` line as git writes it: C-quoted when it holds a quote, a backslash or a
    control character, followed by a tab when it holds a space (patch ends the name there)."""
    whole = prefix + name
    if any(c in '"\\' or ord(c) < 32 or ord(c) == 127 for c in whole):
        escapes = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
        whole = '"' + "".join(escapes.get(c, f"\\{ord(c):03o}" if ord(c) < 32 or ord(c) == 127 else c) for c in whole) + '"'
    return whole + ("\t" if " " in whole else "")


def _nearest_hunk(line: int, hunks: list[list[str]]) -> int:
    """The index of the hunk whose original lines hold ``line``, else the nearest one."""
    def distance(index: int) -> int:
        match = HUNK_HEADER.match(hunks[index][0])
        assert match is not None  # difflib writes every @@ line so
        first = int(match.group(1))
        last = first + int(match.group(2) if match.group(2) is not None else 1) - 1
        return 0 if first <= line <= last else min(abs(line - first), abs(line - last))
    return min(range(len(hunks)), key=distance)


def write_all(patches: Sequence[Patch]) -> list[str]:
    """Every changed file written atomically, or none: FixRefused before writing when one changed since it was
    read, may not be written, or would not parse; the paths written."""
    changed = [(patch.read, text) for patch in patches if (text := patched_text(patch.read, patch.edits)) != patch.read.text]
    for read, text in changed:
        _check_unchanged(read)
        _check_writable(read)
        _check_parses(read, text)
    staged: list[tuple[ReadFile, str]] = []
    try:
        for read, text in changed:
            staged.append((read, _stage(read, text)))
    except OSError as exc:
        for _, temporary in staged:
            _remove(temporary)
        raise FixRefused(f"{read.path}: cannot write beside it ({exc.strerror or exc}); nothing was written") from None
    return _replace_all(staged)


def _replace_all(staged: list[tuple[ReadFile, str]]) -> list[str]:
    """Each staged file moved onto its target; when one fails, those already moved get their text back."""
    done: list[ReadFile] = []
    for index, (read, temporary) in enumerate(staged):
        try:
            os.replace(temporary, read.target)
        except OSError as exc:
            for _, left in staged[index:]:
                _remove(left)
            restored = [r.path for r in done if _restore(r)]
            lost = [r.path for r in done if r.path not in restored]
            said = f"; restored {', '.join(restored)}" if restored else ""
            said += f"; COULD NOT restore {', '.join(lost)}" if lost else ""
            raise FixRefused(f"{read.path}: cannot be replaced ({exc.strerror or exc}){said}; "
                             "the other files were not written") from None
        done.append(read)
    return [read.path for read in done]


def _check_unchanged(read: ReadFile) -> None:
    """FixRefused unless the file is as it was read: the same target, status and bytes."""
    again = f"{read.path}: changed since paddle-doctor read it; run fix again"
    if os.path.realpath(read.path) != read.target:
        raise FixRefused(f"{again} (it now leads to another file)")
    try:
        data, status = _read(read.target)
    except FixRefused:
        raise FixRefused(again) from None
    if (status.st_mtime_ns, status.st_size) != (read.mtime_ns, read.size) or hashlib.sha256(data).hexdigest() != read.sha256:
        raise FixRefused(again)


def _check_writable(read: ReadFile) -> None:
    """FixRefused unless this user may replace the file: write it, and create and rename in its folder."""
    if not os.access(read.target, os.W_OK) or not os.stat(read.target).st_mode & 0o222:  # root may write any file: its mode says
        raise FixRefused(f"{read.path}: is read-only; expected a file you may write "
                         "(run as its owner or change its permissions)")
    folder = os.path.dirname(read.target)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FixRefused(f"{read.path}: its folder {folder} is read-only for this user; the fix writes a new "
                         "file beside it and renames it over the old one")


def _check_parses(read: ReadFile, text: str) -> None:
    """FixRefused when the patched text of a Python or YAML file does not parse."""
    kinds = {os.path.splitext(path)[1] for path in (read.path, read.target)}
    where: str | None = None
    if ".py" in kinds:
        try:
            compile(text, read.path, "exec", dont_inherit=True)
        except SyntaxError as exc:
            where = f"line {exc.lineno}: {exc.msg}" if exc.lineno else exc.msg
        except ValueError as exc:  # a NUL character, before 3.11.4
            where = str(exc)
    elif kinds & {".yaml", ".yml"}:
        import yaml

        try:
            for _ in yaml.safe_load_all(text):
                pass
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            where = f"line {mark.line + 1}: {problem}" if mark is not None else problem
    if where is not None:
        raise FixRefused(f"{read.path}: the patched file would not parse: {where}; nothing was written")


def _stage(read: ReadFile, text: str) -> str:
    """``text`` written to a new file beside the target, with the original's permission bits (and owner,
    where this user may set it); its path."""
    status = os.stat(read.target)
    folder, name = os.path.split(read.target)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".paddle-doctor")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        if (status.st_uid, status.st_gid) != (os.geteuid(), os.getegid()):
            with contextlib.suppress(OSError):  # root writing a service user's file keeps it theirs
                os.chown(temporary, status.st_uid, status.st_gid)
        os.chmod(temporary, stat.S_IMODE(status.st_mode))
    except BaseException:
        _remove(temporary)
        raise
    return temporary


def _restore(read: ReadFile) -> bool:
    """The file's text as it was read put back (best effort); whether that worked."""
    try:
        os.replace(_stage(read, read.text), read.target)
    except OSError:
        return False
    return True


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def vcs_state(paths: Sequence[str]) -> str | None:
    """A one-line warning naming the files that have uncommitted changes or are under no version control
    (or that git cannot tell about); None when each is committed and unchanged."""
    found: dict[str, list[str]] = {}
    for path in paths:
        state = _git_state(path)
        if state == "no git":
            return "cannot tell whether the files are committed (git is not installed); review the diff before --write"
        if state:
            found.setdefault(state, []).append(path)
    if not found:
        return None
    return "; ".join(f"{', '.join(names)}: {state}" for state, names in found.items()) + "; review the diff before --write"


def _git_state(path: str) -> str:
    """What git says of one file in words ("" when committed and unchanged; "no git" without git)."""
    folder, name = os.path.split(os.path.realpath(path))
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(["git", "-C", folder, "status", "--porcelain", "--ignored", "--", name],
                              capture_output=True, text=True, env=env, timeout=GIT_SECONDS, check=False)
    except FileNotFoundError:
        return "no git"
    except subprocess.TimeoutExpired:
        return f"cannot tell whether committed (git status took over {GIT_SECONDS} s)"
    except OSError as exc:
        return f"cannot tell whether committed (git: {exc.strerror or exc})"
    if done.returncode != 0:
        if "not a git repository" in done.stderr:
            return "not under version control"
        first = done.stderr.strip().splitlines()[0] if done.stderr.strip() else f"exit status {done.returncode}"
        return f"cannot tell whether committed (git: {first})"
    code = done.stdout[:2]
    if not done.stdout:
        return ""
    if code == "??":
        return "not under version control (untracked in git)"
    if code == "!!":
        return "not under version control (ignored by git)"
    return "uncommitted changes"
