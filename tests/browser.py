"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe): a page
loaded at a given viewport (a phone's, emulated as mobile, or a desktop's), JavaScript evaluated in
it, and a full-page screenshot. Each browser lives within a ``with`` block and a time limit."""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import struct
import subprocess
import time
import zlib
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
REPLY_TIMEOUT_S = 60.0


class Browser:
    def __init__(self, profile: Path):
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        # the protocol runs on the browser's fds 3 (commands in) and 4 (replies out)
        self._process = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_browser} 4>&{from_browser}', CHROMIUM, "--headless", "--no-sandbox",
             "--disable-gpu", "--remote-debugging-pipe", f"--user-data-dir={profile}", "--hide-scrollbars", "about:blank"],
            pass_fds=(to_browser, from_browser), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser), os.close(from_browser)
        self._buffer, self._next_id, self._events = b"", 0, []

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.send("Browser.close")
        except (OSError, TimeoutError):
            pass
        try:
            self._process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._read), os.close(self._write)

    def send(self, method: str, session: str | None = None, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        reply = self._wait(lambda m: m.get("id") == self._next_id)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def _wait(self, wanted) -> dict:
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while True:
            for index, message in enumerate(self._events):
                if wanted(message):
                    return self._events.pop(index)
            while b"\0" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._read], [], [], left)[0]:
                    raise TimeoutError("no reply from the browser")
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    raise OSError("the browser closed its pipe")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            self._events.append(json.loads(raw))

    def open(self, url: str, width: int, height: int, mobile: bool) -> str:
        """A new tab showing ``url`` at a ``width`` x ``height`` viewport, loaded; returns its session."""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send("Emulation.setDeviceMetricsOverride", session, width=width, height=height, deviceScaleFactor=1, mobile=mobile)
        self.send("Page.enable", session)
        self.send("Page.navigate", session, url=url)
        self._wait(lambda m: m.get("method") == "Page.loadEventFired" and m.get("sessionId") == session)
        return session

    def evaluate(self, session: str, expression: str):
        result = self.send("Runtime.evaluate", session, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"in the page: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, session: str, path: Path) -> None:
        data = self.send("Page.captureScreenshot", session, format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    """One browser for a test module (skips where Chromium is not installed)."""
    if CHROMIUM is None:
        pytest.skip("no chromium installed (apt-get install chromium)")
    with Browser(tmp_path_factory.mktemp("chromium")) as browser:
        yield browser


def png_colours(png: bytes) -> int:
    """How many distinct bytes the decoded pixel rows of a PNG hold (1 or 2: a blank page)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    data, offset = b"", 8
    while offset < len(png):
        length, kind = struct.unpack(">I4s", png[offset:offset + 8])
        if kind == b"IDAT":
            data += png[offset + 8:offset + 8 + length]
        offset += 12 + length
    return len(set(zlib.decompress(data)))
