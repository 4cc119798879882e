"""The record written: a snapshot of the recorder's state as a :class:`Record`, written atomically
(a temporary file in the same folder, renamed) and owner-only (0600, in a 0700 folder that must
be the service user's own, not a link, and written by no one else), every few seconds by a daemon
thread and at exit; the runs noted since the last snapshot are folded into it first
(:meth:`~.live.Process.fold`), and sooner, without a write, when the service runs many. A write
that fails is remembered in the record's ``errors`` and said once on stderr, never raised. The
service's arguments are redacted (``--api-key=<redacted>``): the record outlives the process. The
first write also sweeps the folder of what processes gone long ago left (:func:`sweep`): writes cut
short, and records."""

from __future__ import annotations

import atexit
import json
import os
import re
import stat
import sys
import tempfile
import threading
import time
from pathlib import Path

from .. import __version__
from ..base.serde import to_data
from ..facts.environment import noted
from ..facts.recorded import CallingThreads, InputsSeen, Record, RecordedPredictor, RunStats, Sharing, TensorSeen
from .live import MAX_EVENTS, Callers, LivePredictor, Process, percentile_ns
from .location import interval_s, own_start_ticks, record_folder, record_name, settings_problems, start_ticks_of

MAX_ARGV = 32
MAX_TEXT = 300
STALE_PARTIAL_S = 60.0  # no write takes this long: a partial file this old was cut short
# 24 times the longest interval: a live process's record is never this old, even one of another PID
# namespace sharing the folder (its PID means another process here), and the record of a service gone is
# there a day for a person to read after a crash (the doctor reads the records of live processes only)
STALE_RECORD_S = 86400.0
LEFT_BEHIND = re.compile(r"(?P<partial>\.)?(?P<pid>[0-9]+)-(?P<ticks>[0-9]+)\.json(?(partial)\..+\.tmp)")


def run_stats(live: LivePredictor) -> RunStats:
    latency, gaps = list(live.latency), list(live.gaps)
    shapes = sorted(dict(live.shapes).items(), key=lambda item: -item[1])
    first = live.first_run_ns
    runs = (sum(latency) + 1) if first is not None else 0

    def ms(share: float, counts: list[int]) -> float | None:
        value = percentile_ns(counts, share)
        return round(value / 1e6, 6) if value is not None else None

    return RunStats(
        runs=runs, first_run_ms=round(first / 1e6, 6) if first is not None else None,
        p50_ms=ms(0.5, latency), p90_ms=ms(0.9, latency), p99_ms=ms(0.99, latency),
        busy_s=round(live.busy_ns / 1e9, 6),
        span_s=round(max(0, live.last_end_ns - live.first_start_ns) / 1e9, 6) if first is not None else 0.0,
        gap_p50_ms=ms(0.5, gaps), peak_concurrency=live.peak,
        shapes=[InputsSeen([TensorSeen(list(shape), dtype) for shape, dtype in key], count) for key, count in shapes],
        shapes_not_kept=live.shapes_not_kept,
    )


def calling(callers: Callers) -> CallingThreads:
    return CallingThreads(list(callers.kept), len(callers.others))


def sharing(live: LivePredictor) -> Sharing:
    return Sharing(calling(live.run_threads), calling(live.copy_threads), calling(live.output_threads), live.crossed)


def paddle_version() -> str | None:
    version = getattr(sys.modules.get("paddle"), "__version__", None)
    return str(version)[:MAX_TEXT] if version else None


def snapshot(process: Process) -> Record:
    """The record of ``process`` now, its runs folded in first (by one thread at a time: the writer's lock)."""
    process.fold()
    errors = list(process.errors)
    not_counted = process.runs.not_counted
    if not_counted:
        errors.append(f"{not_counted} runs not counted: more than {MAX_EVENTS} ran between two folds")
    predictors = [RecordedPredictor(id=live.number, built_by=live.built_by, config=live.config, model=live.model,
                                    origin=live.site, runs=run_stats(live), clone_of=live.clone_of,
                                    pool_size=live.pool_size, built=live.built, alive=live.alive,
                                    input_names=list(live.input_names), sharing=sharing(live))
                  for live in list(process.predictors)]
    return Record(pid=os.getpid(), start_ticks=own_start_ticks(), argv=redacted_argv(sys.argv),
                  paddle_version=paddle_version(), doctor_version=__version__, written_at=round(time.time(), 3),
                  predictors=predictors, predictors_not_kept=process.not_kept, peak_concurrent_runs=process.peak_runs,
                  peak_concurrent_threads=process.peak_threads, errors=errors, recorder=process.recorder,
                  environment=noted_environment(process.environment))


def noted_environment(environment: dict[str, str] | None) -> dict[str, str] | None:
    """The variables noted at the first import of paddle as the record keeps them: the thread variables
    and FLAGS_*, bounded (:func:`~..facts.environment.noted`), each value redacted."""
    if environment is None:
        return None
    from ..base.redact import redact  # on the writer's thread, not as the service imports Paddle

    return {name: redact(name, value) for name, value in noted(environment).items()}


def redacted_argv(argv: list[str]) -> list[str]:
    """The service's arguments as the record keeps them: each redacted, then cut to :data:`MAX_TEXT`
    (of a longer one, the part redacted reaches a secret's length past it: what a cut halves is not kept)."""
    from ..base.redact import redact_arguments  # on the writer's thread at its first write, not as the service imports Paddle

    return redact_arguments([str(arg) for arg in argv[:MAX_ARGV]], MAX_TEXT)


def own_folder(folder: Path) -> None:
    """``folder``, created 0700 when missing; refused unless it is a real folder of this user's that
    no one else may write in (another could put a link where the record goes, or take it away)."""
    try:
        folder.mkdir(mode=0o700, parents=True)
    except FileExistsError:  # a folder (said below if it is not one of this user's alone), or a file
        pass
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise OSError(f"{folder} is not a folder")
    if info.st_uid != os.geteuid():
        raise OSError(f"{folder} belongs to uid {info.st_uid}, not to this process's {os.geteuid()}")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise OSError(f"{folder} may be written by others (mode {stat.S_IMODE(info.st_mode):o}); expected a folder only its owner writes in (0700)")


def write_owner_only(path: Path, text: str) -> None:
    handle, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(partial, path)
    except BaseException:
        try:
            os.unlink(partial)
        except OSError:
            pass
        raise


def sweep(folder: Path, now: float) -> None:
    """Removes what processes gone left in ``folder``: a partial file (a write cut short) older than
    :data:`STALE_PARTIAL_S`, a record not written for :data:`STALE_RECORD_S`, where no process of its
    PID and start ticks runs. One of a live process, a fresh one, or any other file is left."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        left = LEFT_BEHIND.fullmatch(name)
        if left is None:
            continue
        path = folder / name
        try:
            stale_s = STALE_PARTIAL_S if left["partial"] else STALE_RECORD_S
            if now - os.lstat(path).st_mtime < stale_s or start_ticks_of(left["pid"]) == int(left["ticks"]):
                continue
            path.unlink()
        except OSError:
            continue


class Writer:
    """Writes ``process``'s record every ``interval`` seconds from a daemon thread, and at exit, once
    started; the folder is made absolute as it is made, against the service's working directory (it
    may change it later), and what is wrong with the recorder's variables, or the C recorder demanded
    and not built, is said (kept in the record, and on stderr). A child forked from the service writes
    its own (:meth:`forked`)."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.folder = Path(os.path.abspath(record_folder(os.environ, os.geteuid())))
        self.interval, _ = interval_s(os.environ)
        for problem in settings_problems(os.environ):
            process.failed(problem)
            say(problem)
        if process.unmet is not None:  # the C recorder demanded and not built: in the record's errors already
            say(process.unmet)
        self.said = False
        self.swept = False
        self.started = False
        self.written = threading.Event()
        self.lock = threading.Lock()

    def start(self) -> None:
        """Writes now, then every interval, and at exit (the hook starts it at the first predictor)."""
        self.started = True
        atexit.register(self.write)
        self._write_from_a_thread(first_in_s=0.0)

    def forked(self) -> None:
        """In the child of a fork: a record of its own, of its own runs (the parent's forgotten), with
        locks of its own (the parent's writer may have held its lock as it forked) and a thread of its
        own (fork copies none); at exit the parent's ``atexit`` writes it. Its first write waits one
        interval: a child that goes on to run another program (``os.spawnv``, ``pty.fork``) leaves
        no record of the parent's predictors under its PID."""
        self.process.forked()
        self.lock = threading.Lock()
        self.written = threading.Event()
        if self.started:
            self._write_from_a_thread(first_in_s=self.interval)

    def _write_from_a_thread(self, first_in_s: float) -> None:
        due = time.monotonic() + first_in_s
        threading.Thread(target=self._loop, args=(due,), name="paddle-doctor-record", daemon=True).start()

    def _loop(self, due: float) -> None:
        wake = self.process.wake
        while True:
            now = time.monotonic()
            if now >= due:
                self.write()
                due = now + self.interval
            else:
                self.fold()
            wake.wait(max(0.0, due - time.monotonic()))
            wake.clear()

    def fold(self) -> None:
        """The runs waiting folded in, without a write (the service runs many between two writes)."""
        if not self.lock.acquire(timeout=2.0):
            return
        try:
            self.process.fold()
        except Exception as exc:
            self.process.failed(f"folding the runs: {exc!r}"[:MAX_TEXT])
        finally:
            self.lock.release()

    def write(self) -> None:
        if not self.lock.acquire(timeout=2.0):  # a write stuck on a slow disk: the next one, or none
            return
        try:
            record = snapshot(self.process)
            path = self.folder / record_name(record.pid, record.start_ticks)
            own_folder(self.folder)
            write_owner_only(path, json.dumps(to_data(record), separators=(",", ":")) + "\n")
            self.written.set()
            if not self.swept:
                self.swept = True
                sweep(self.folder, time.time())
        except Exception as exc:  # a failed write is recorded, never raised into the service
            self._failed(exc)
        finally:
            self.lock.release()

    def _failed(self, exc: Exception) -> None:
        message = f"cannot write the record in {self.folder}: {getattr(exc, 'strerror', None) or exc}"[:MAX_TEXT]
        if not self.process.errors or self.process.errors[-1] != message:
            self.process.failed(message)
        if not self.said:
            self.said = True
            say(message)


def say(message: str) -> None:
    """One line on the service's stderr, never raised."""
    try:
        sys.stderr.write(f"paddle-doctor record: {message}\n")
    except Exception:  # a closed stderr
        pass
