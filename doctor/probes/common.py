"""Reading helpers shared by the probes: a failed read is recorded as a ProbeIssue, never raised."""

from __future__ import annotations

import json

from ..base.inputs import Refused, parse_json
from ..facts import CANNOT_READ, ProbeIssue
from .context import ProbeContext


class Reader:
    """Reads files under a ProbeContext and keeps the issues it met."""

    def __init__(self, ctx: ProbeContext):
        self.ctx = ctx
        self.issues: list[ProbeIssue] = []

    def note(self, probe: str, path: str | None, reason: str) -> None:
        self.issues.append(ProbeIssue(probe, path, reason))

    def unreadable(self, probe: str, path: str, exc: OSError) -> None:
        """The one way a path that is there but cannot be read (permissions, a symlink loop) is recorded."""
        self.note(probe, path, f"{CANNOT_READ}{exc.strerror or exc}")

    def text(self, probe: str, path: str, required: bool = True) -> str | None:
        """The file's text, or None; a missing file is an issue only if ``required``."""
        try:
            return self.ctx.read_text(path)
        except FileNotFoundError:
            if required:
                self.note(probe, path, "file not found")
        except UnicodeDecodeError:
            self.note(probe, path, "not text (cannot decode as UTF-8)")
        except OSError as exc:
            self.unreadable(probe, path, exc)
        return None

    def path_test(self, probe: str, path: str, test: str = "exists") -> bool | None:
        """``Path.exists()`` / ``is_file()`` / ``is_dir()`` under the root, or None (noted) when the
        path cannot be looked at (a folder on the way this user may not enter, a symlink loop)."""
        try:
            return getattr(self.ctx.path(path), test)()
        except OSError as exc:
            self.unreadable(probe, path, exc)
            return None

    def integer(self, probe: str, path: str, required: bool = True) -> int | None:
        text = self.text(probe, path, required)
        if text is None:
            return None
        try:
            return int(text.strip())
        except ValueError:
            self.note(probe, path, f"expected an integer, found {text.strip()[:40]!r}")
            return None


def tagged_lines(stdout: str, tags: tuple[str, ...]) -> dict[str, dict]:
    """A child probe's ``TAG {json}`` lines, by tag; lines that are not JSON objects are passed over."""
    found = {}
    for line in stdout.splitlines():
        tag, _, body = line.partition(" ")
        if tag in tags:
            try:
                payload = parse_json(body, tag)
            except (json.JSONDecodeError, Refused):
                continue
            if isinstance(payload, dict):
                found[tag] = payload
    return found


def last_line(text: str) -> str:
    return (text.strip().splitlines() or ["no output"])[-1]
