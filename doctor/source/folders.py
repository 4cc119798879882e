"""Finding the .py files under a folder without blocking or looping: the search never enters
/proc, /sys or /dev (nor a mount of theirs elsewhere), follows no link to a folder, enters no folder
twice and stops at a deadline. Shared by ``--source FOLDER`` and the scan of a package for a word
(``imports.mentions``)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator

from .module import OutOfTime

SKIPPED_FOLDERS = {"__pycache__", "site-packages", "node_modules", "venv"}
SYSTEM_FOLDERS = ("/proc", "/sys", "/dev")  # kernel file systems: no service source, and entries without end


Unreadable = Callable[[str, OSError], None]  # told of a path the search could not look at, and why


def ignored(path: str, exc: OSError) -> None:
    """What a search that reports nothing is told."""


class Search:
    """One search over folders: the folders already listed and the kernel file systems' devices;
    ``unreadable`` is told of each folder that cannot be listed and each entry whose kind cannot
    be told (a link to itself), and the search goes on past it."""

    def __init__(self, deadline: float | None = None, unreadable: Unreadable = ignored):
        self.deadline = deadline
        self.unreadable = unreadable
        self.system = system_devices()
        self.seen: set[tuple[int, int]] = set()  # (device, inode) of the folders listed

    def python_files(self, folder: str) -> Iterator[str]:
        """Depth first as ``os.walk`` goes (a folder's files, then each of its folders), each folder
        listed only when the files before it have been read; OutOfTime past the deadline."""
        pending = [folder]
        while pending:
            files, folders = self._listed(pending.pop())
            yield from sorted(files)
            pending.extend(sorted(folders, reverse=True))

    def _listed(self, directory: str) -> tuple[list[str], list[str]]:
        """A folder's .py files and the folders in it to search; none for a folder listed before, a
        kernel file system's, or one that cannot be listed."""
        files: list[str] = []
        folders: list[str] = []
        try:
            status = os.stat(directory)
            if (status.st_dev, status.st_ino) in self.seen or status.st_dev in self.system:
                return [], []
            self.seen.add((status.st_dev, status.st_ino))
            with os.scandir(directory) as entries:
                for entry in entries:
                    if self.deadline is not None and time.monotonic() > self.deadline:
                        raise OutOfTime()
                    self._sort(entry, files, folders)
        except OSError as exc:
            self.unreadable(directory, exc)
            return [], []
        return files, folders

    def _sort(self, entry: os.DirEntry, files: list[str], folders: list[str]) -> None:
        searched = not entry.name.startswith(".") and entry.name not in SKIPPED_FOLDERS
        try:
            if entry.is_dir():
                if searched and not entry.is_symlink():
                    folders.append(entry.path)
            elif entry.name.endswith(".py"):
                files.append(entry.path)
        except OSError as exc:  # a link to itself: what it is cannot be told
            if searched or entry.name.endswith(".py"):
                self.unreadable(entry.path, exc)


def system_devices() -> set[int]:
    """The devices of /proc, /sys and /dev where each is a file system of its own (not the root's)."""
    root = os.stat("/").st_dev
    devices = set()
    for folder in SYSTEM_FOLDERS:
        try:
            device = os.stat(folder).st_dev
        except OSError:
            continue
        if device != root:
            devices.add(device)
    return devices
