"""Finding the .py files under a folder without blocking or looping: the search never enters
/proc, /sys or /dev (nor a mount of theirs elsewhere), follows no link to a folder, enters no folder
twice and stops at a deadline. Shared by ``--source FOLDER`` and the scan of a package for a word
(``imports.mentions``)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

from .module import OutOfTime

SKIPPED_FOLDERS = {"__pycache__", "site-packages", "node_modules", "venv"}
SYSTEM_FOLDERS = ("/proc", "/sys", "/dev")  # kernel file systems: no service source, and entries without end


class Search:
    """One search over folders: the folders already listed and the kernel file systems' devices."""

    def __init__(self, deadline: float | None = None):
        self.deadline = deadline
        self.system = system_devices()
        self.seen: set[tuple[int, int]] = set()  # (device, inode) of the folders listed

    def python_files(self, folder: str) -> Iterator[str]:
        """Depth first as ``os.walk`` goes (a folder's files, then each of its folders), each folder
        listed only when the files before it have been read; OutOfTime past the deadline."""
        pending = [folder]
        while pending:
            directory = pending.pop()
            try:
                status = os.stat(directory)
            except OSError:
                continue
            if (status.st_dev, status.st_ino) in self.seen or status.st_dev in self.system:
                continue
            self.seen.add((status.st_dev, status.st_ino))
            files, folders = [], []
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        if self.deadline is not None and time.monotonic() > self.deadline:
                            raise OutOfTime()
                        if entry.is_dir():
                            if not entry.is_symlink() and not entry.name.startswith(".") and entry.name not in SKIPPED_FOLDERS:
                                folders.append(entry.path)
                        elif entry.name.endswith(".py"):
                            files.append(entry.path)
            except OSError:
                continue
            yield from sorted(files)
            pending.extend(sorted(folders, reverse=True))


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
