"""paddle_doctor.verify.stages: timing a service's pre-processing, inference and post-processing apart."""

import threading

import pytest
from paddle_doctor.verify.stages import StageTimer


class FakeClock:
    """time.perf_counter for the stages module, advanced by the stages themselves."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now

    def spend(self, ms):
        self.now += ms / 1000.0


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr("paddle_doctor.verify.stages.time", fake)
    return fake


def test_each_stage_gets_its_percentiles_and_share(clock):
    timer = StageTimer()
    preprocess = timer.wrap("preprocess", lambda request: clock.spend(30) or request)

    @timer.stage("postprocess")
    def postprocess(outputs):
        clock.spend(10)
        return outputs

    for request in range(10):
        x = preprocess(request)
        with timer.stage("inference"):
            clock.spend(60 if request < 9 else 150)
        assert postprocess(x) == request
    rows = {row.name: row for row in timer.summary()}
    assert [row.name for row in timer.summary()] == ["preprocess", "inference", "postprocess"]
    assert rows["preprocess"].count == 10 and rows["preprocess"].p50_ms == pytest.approx(30)
    assert rows["inference"].p50_ms == pytest.approx(60) and rows["inference"].p99_ms > 140
    assert rows["inference"].share == pytest.approx(690 / 1090)
    assert sum(row.share for row in rows.values()) == pytest.approx(1.0)
    assert "preprocess" in timer.report() and "63.3%" in timer.report()


def test_a_stage_that_raises_is_still_timed(clock):
    timer = StageTimer()
    with pytest.raises(ValueError), timer.stage("decode"):
        clock.spend(5)
        raise ValueError("bad image")
    (row,) = timer.summary()
    assert row.count == 1 and row.total_ms == pytest.approx(5)


def test_stages_from_many_threads_are_all_counted():
    timer = StageTimer()

    def serve():
        for _ in range(200):
            with timer.stage("inference"):
                pass

    threads = [threading.Thread(target=serve) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert timer.summary()[0].count == 1600


def test_empty_and_reset():
    timer = StageTimer()
    assert timer.report() == "no stage was timed" and timer.summary() == []
    timer.record("inference", 3.0)
    timer.reset()
    assert timer.summary() == []
