"""Record files in a fixture tree as a service's recorder leaves them: the service user's own."""

from __future__ import annotations

import os
from pathlib import Path


def owned_by(uid: int, folder: Path) -> None:
    """``folder`` and the files in it made the user's own, as the recorder of a service of that user makes them
    (the doctor reads a record only where no other user could have written it; under --root the numbers are the tree's)."""
    for path in (folder, *folder.iterdir()):
        os.chown(path, uid, uid)
