"""The predictor configuration as one typed value: variations, its JSON, the thread default that
every reader of the service's threads shares, and the Config calls graph coverage builds."""

import json

import pytest
from factories import make_facts, paddle_ok
from paddle_doctor.base.serde import DecodeError, from_data, to_data
from paddle_doctor.base.vocabulary import Layout, Precision
from paddle_doctor.facts import PADDLE_DEFAULT_THREADS, Facts, TensorRTSettings
from paddle_doctor.facts.budget import service_threads
from paddle_doctor.facts.loading import facts_from_data
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.verification import ArmResult, LayoutArm, ModelFacts, VerificationFacts
from paddle_doctor.verify.graph_probe import service_calls
from paddle_doctor.verify.layouts import service_layout
from paddle_doctor.verify.recommend import adopt

BASE = PredictorConfig(threads=4, onednn=False)


def test_bf16_turns_onednn_on_and_nothing_else_does():
    assert BASE.vary(precision=Precision.BF16) == PredictorConfig(threads=4, onednn=True, precision=Precision.BF16)
    assert BASE.vary(threads=2).onednn is False
    assert BASE.vary(precision="bf16").precision is Precision.BF16  # the value given as text is the enum member
    with pytest.raises(AttributeError):
        BASE.threads = 2  # frozen: a variation is a new configuration


def test_labels_name_only_what_differs():
    assert BASE.label() == "threads=4, oneDNN off, fp32, IR optim on, feed/fetch ops off, oneDNN cache default, memory optim off"
    assert BASE.vary(threads=2, onednn=True).label(BASE) == "threads=2, oneDNN on"
    assert BASE.label(BASE) == "same as baseline"


def test_adopting_a_winner_takes_only_the_settings_it_was_measured_changing():
    measured_from = BASE.vary(threads=8)
    winner = measured_from.vary(onednn=True)
    assert adopt(BASE.vary(ir_optim=False), winner, measured_from) == BASE.vary(ir_optim=False, onednn=True)


def test_the_optim_cache_settings_are_config_calls():
    saving = BASE.vary(optim_cache_dir="/tmp/c", save_optim_model=True)
    assert saving.config_calls()[-2:] == [("set_optim_cache_dir", ["/tmp/c"]), ("enable_save_optim_model", [True])]
    assert BASE.vary(optim_cache_dir="/tmp/c", use_optimized_model=True).config_calls()[-1] == ("use_optimized_model", [True])
    assert saving.key() != BASE.key() and BASE.vary(threads=4).key() == BASE.key()


def test_arms_round_trip_through_json_with_the_keys_of_a_configuration():
    arm = ArmResult("2 clones x 1 thread", BASE.vary(threads=1, delete_passes=("fc_fuse_pass",)), runs=3,
                    layout=LayoutArm(Layout.CLONE, 2, 1, 1, 2, True))
    data = to_data(arm)
    assert data["config"]["threads"] == 1 and data["config"]["delete_passes"] == ["fc_fuse_pass"]
    assert data["layout"] == {"layout": "clone", "instances": 2, "threads": 1, "processes": 1, "total_threads": 2,
                              "fits_budget": True}
    assert from_data(ArmResult, data) == arm


def test_a_recorded_configuration_with_a_precision_it_cannot_run_is_refused_by_name():
    data = to_data(BASE)
    data["precision"] = "fp64"
    with pytest.raises(DecodeError, match=r"PredictorConfig\.precision: is 'fp64'; expected one of 'fp32'"):
        from_data(PredictorConfig, data)


def test_the_verification_baseline_is_typed_in_recorded_facts():
    verification = VerificationFacts(ModelFacts("m", "pir", "m/inference.json", None, {}), 1.0, 0.03, 0.01, baseline=BASE)
    recorded = facts_from_data(json.loads(Facts(verification=verification).to_json()))
    assert recorded.verification.baseline == BASE


@pytest.mark.parametrize("threads", [None, 6])
def test_the_thread_default_is_the_same_for_every_reader(threads):
    """The CPU budget check, the serving layout and the measured baseline read one default."""
    facts = make_facts(threads=threads, concurrency=2)
    expected = threads if threads is not None else PADDLE_DEFAULT_THREADS
    assert service_threads(facts)[0] == expected
    assert service_layout(facts)[0].threads == expected
    assert PredictorConfig.of_service(facts).threads == expected


def test_the_gpu_calls_keep_the_device_neutral_ones_and_the_optim_cache():
    facts = make_facts(device="gpu", gpu_memory_pool_mb=512, ir_optim=False, delete_passes=["fc_fuse_pass"],
                       tensorrt=TensorRTSettings(enabled=True, precision=Precision.FP16),
                       paddle=paddle_ok(mkldnn_default_on=True))
    calls = service_calls(facts, optim_cache_dir="/tmp/c", save_optim_model=True)
    assert [method for method, _ in calls] == ["enable_use_gpu", "enable_tensorrt_engine", "switch_ir_optim",
                                               "switch_use_feed_fetch_ops", "delete_pass", "set_optim_cache_dir",
                                               "enable_save_optim_model"]
    assert calls[0] == ("enable_use_gpu", [512, 0]) and calls[1][1][3] == "Half"
    cpu = service_calls(make_facts(threads=3, onednn=True))
    assert cpu == PredictorConfig(threads=3, onednn=True).config_calls()


def test_the_service_is_said_to_take_a_lock_only_where_something_says_it_does():
    """One predictor whose serving layout nothing says is measured behind a lock, and its label says that is the
    measurement's, not the service's; a layout said as a lock is named so."""
    unsaid = service_layout(make_facts(threads=2, concurrency=2))[1]
    assert unsaid == "service: one predictor x 2 threads (how requests reach it is not said; measured behind a lock)"
    assert service_layout(make_facts(threads=2, concurrency=2, layout="lock"))[1] == "service: one predictor behind a lock x 2 threads"
