"""The recorder of runs a test may ask for: the C one where its module was built with the package.
Where it was not (no compiler or Python headers at the install), a test of the C recorder skips,
saying why; where ``PADDLE_DOCTOR_RECORD_NATIVE=require`` demands it (``scripts/test`` sets it where a
compiler is at hand), the test fails instead."""

from __future__ import annotations

import os

import pytest
from paddle_doctor.base.vocabulary import Recorder
from paddle_doctor.recorder.live import chosen_runs
from paddle_doctor.recorder.location import NATIVE, REQUIRE, native_required


def needs_c_recorder() -> None:
    """Returns where the C recorder is built; else skips the test, or fails it where it is demanded."""
    chosen = chosen_runs({NATIVE: REQUIRE})
    if chosen.recorder is Recorder.NATIVE:
        return
    if native_required(os.environ):
        pytest.fail(str(chosen.unmet), pytrace=False)
    pytest.skip(f"the recorder's C module is not built here ({NATIVE}={REQUIRE} makes this a failure)")
