"""Finding models on disk, reading their inputs without Paddle, and rejecting what does not fit."""

import pytest
from paddle_doctor.graph.program import ProgramError, read_program
from paddle_doctor.verify.model import (
    ModelError,
    feed_plan,
    input_specs,
    locate_model,
    parse_shape_option,
)


def specs_of(path):
    return input_specs(read_program(locate_model(path).program))


def test_formats_are_found_from_directory_prefix_and_file(models):
    assert locate_model(models["cnn-pir"]).format == "pir"
    assert locate_model(models["cnn-pdmodel"]).format == "pdmodel"
    assert locate_model(models["sequence-legacy"]).format == "legacy"
    assert locate_model(models["cnn-pir"] / "inference").program.endswith("inference.json")
    assert locate_model(models["cnn-pdmodel"] / "inference.pdmodel").params.endswith("inference.pdiparams")


def test_pir_and_protobuf_give_the_same_inputs(models):
    assert specs_of(models["cnn-pir"]) == specs_of(models["cnn-pdmodel"])
    (image,) = specs_of(models["cnn-pir"])
    assert (image.name, image.dtype, image.shape) == ("image", "float32", [-1, 3, 224, 224])


def test_embedding_rows_bound_integer_inputs(models):
    (ids,) = specs_of(models["encoder-pir"])
    assert (ids.dtype, ids.shape, ids.vocab) == ("int64", [-1, 128], 18000)
    plan = feed_plan([ids], {}, batch_size=1)
    assert plan["input_ids"] == {"dtype": "int64", "shape": [1, 128], "low": 0, "high": 18000}


def test_lod_inputs_get_a_valid_lod(models):
    (words,) = specs_of(models["sequence-legacy"])
    assert (words.lod_level, words.vocab) == (1, 1000)
    plan = feed_plan([words], {}, batch_size=1)["words"]
    assert plan["shape"] == [16] and plan["lod"] == [[0, 8, 16]]


def test_shape_overrides_and_batch_size(models):
    specs = specs_of(models["cnn-pir"])
    assert feed_plan(specs, {}, batch_size=4)["image"]["shape"] == [4, 3, 224, 224]
    assert feed_plan(specs, {"image": [2, 3, 224, 224]}, 1)["image"]["shape"] == [2, 3, 224, 224]


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"image": [1, 3, 32]}, "input 'image': expects float32 of shape [-1, 3, 224, 224] (-1 = any), given [1, 3, 32]"),
        ({"image": [1, 4, 224, 224]}, "given [1, 4, 224, 224]"),
        ({"pixels": [1, 3, 224, 224]}, "the model has no input 'pixels'"),
    ],
)
def test_inputs_that_do_not_fit_are_named(models, overrides, message):
    with pytest.raises(ModelError) as error:
        feed_plan(specs_of(models["cnn-pir"]), overrides, 1)
    assert message in str(error.value)


@pytest.mark.parametrize("text", ["image", "image:", "image:1xa", ":1x3", "image:0x3"])
def test_bad_shape_options(text):
    with pytest.raises(ModelError) as error:
        parse_shape_option(text)
    assert "expected NAME:DIMxDIM" in str(error.value)


def test_missing_model(tmp_path):
    with pytest.raises(ModelError, match="no such file or directory"):
        locate_model(tmp_path / "nope" / "model")
    with pytest.raises(ModelError, match="no Paddle model found"):
        locate_model(tmp_path)


def test_missing_or_empty_params_name_the_file(models, tmp_path):
    (tmp_path / "inference.json").write_bytes((models["cnn-pir"] / "inference.json").read_bytes())
    with pytest.raises(ModelError, match=r"inference.pdiparams: parameters file missing"):
        locate_model(tmp_path)
    (tmp_path / "inference.pdiparams").write_bytes(b"")
    with pytest.raises(ModelError, match=r"inference.pdiparams: parameters file is empty"):
        locate_model(tmp_path)


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("x.json", b'{"hello": 1}', "not a Paddle PIR program"),
        ("x.json", b'{"base_code": {"magic": "pir", "version": 99}, "program": {"regions": [{"blocks": []}]}}',
         "PIR program version 99"),
        ("x.pdmodel", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "not a Paddle ProgramDesc"),
        ("x.pdmodel", b"", "the file is empty"),
    ],
)
def test_programs_that_are_not_paddle_programs(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ProgramError) as error:
        read_program(path)
    assert str(error.value).startswith(str(path)) and message in str(error.value)


def test_truncated_protobuf_program(models, tmp_path):
    data = (models["cnn-pdmodel"] / "inference.pdmodel").read_bytes()
    path = tmp_path / "inference.pdmodel"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ProgramError, match="truncated or another format"):
        read_program(path)
