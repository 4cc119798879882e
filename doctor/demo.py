"""Where ``paddle-doctor demo`` keeps its model: the report's recommended snippet loads it from there,
so the folder outlives the run (``--out DIR``, else the user's cache folder, else a temporary folder
that is kept too), and a folder holding anything but a demo model is never written into."""

from __future__ import annotations

import os
from pathlib import Path

DEMO_FILES = frozenset({"inference.json", "inference.pdiparams"})


class DemoFolderError(ValueError):
    """The folder named for the demo model holds other files."""


def default_folder() -> Path | None:
    """$XDG_CACHE_HOME/paddle-doctor/demo, else ~/.cache/paddle-doctor/demo where the home folder exists."""
    home = Path(os.path.expanduser("~"))
    cache = os.environ.get("XDG_CACHE_HOME") or (str(home / ".cache") if home.is_dir() else None)
    return Path(cache) / "paddle-doctor" / "demo" if cache else None


def demo_folder(out: str | None) -> Path:
    """The folder to build the demo model in, created; --out is refused when it holds anything else."""
    if out is not None:
        folder = Path(out)
        others = sorted(entry.name for entry in folder.iterdir() if entry.name not in DEMO_FILES) if folder.is_dir() else []
        if others:
            raise DemoFolderError(f"--out {out} holds files other than a demo model ({', '.join(others[:3])}"
                                  f"{', ...' if len(others) > 3 else ''}); name an empty or new folder")
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    cache = default_folder()
    try:
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
            if os.access(cache, os.W_OK):
                return cache
    except OSError:
        pass
    import tempfile

    return Path(tempfile.mkdtemp(prefix="paddle-doctor-demo-"))  # no writable cache folder (a service user without a home)
