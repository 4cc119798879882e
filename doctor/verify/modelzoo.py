"""Small models built with ``paddle.jit.save`` for the demo, the tests and the benchmarks.

Nothing is downloaded. Each build runs in a child interpreter because the program format is
chosen by ``FLAGS_enable_pir_api`` before Paddle is imported:

- ``cnn``: a conv-bn-relu CNN on 1x3x224x224 images;
- ``cnn_custom_op``: the same CNN with ``paddle.sin`` between the second conv (with its bias)
  and its batch_norm. It stands for a custom operator: an op that no fusion pass accepts in that
  position (no conv+bn pass looks through it, and no conv+activation pass knows ``sin``), which
  is exactly what a user's custom op does to the chain; real custom ops need a C++ build;
- ``cnn_extra_consumer``: the same CNN where the second conv's output (after its bias) is also
  added to that block's output, so the intermediate value has a consumer outside conv+bn+relu;
- ``encoder``: an ERNIE-Tiny-shaped encoder (4 layers, hidden 312, 12 heads, FFN 1248,
  vocab 18000, int64 ids, sequence 128);
- ``sequence``: embedding -> sequence_conv -> sequence_pool -> fc on a LoD int64 input, saved
  in the legacy ``__model__`` directory format with one file per parameter;
- ``recognizer``: a text-line recogniser shaped like an OCR one, input ``1x3x48xW`` with a
  dynamic width (``InputSpec([None, 3, 48, None])``): conv-bn-relu blocks, the height pooled
  away, a per-column classifier;
- ``detector``: a text detector shaped like an OCR one, input ``Nx3xHxW`` with every image
  dimension dynamic (``InputSpec([None, 3, None, None])``): conv-bn-relu blocks down by 4, a 1x1
  conv to a probability map, upsampled back.

Formats: ``pir`` (inference.json + .pdiparams), ``pdmodel`` (inference.pdmodel + .pdiparams;
the CNN only: Paddle 3.3's old-IR export fails inside MultiHeadAttention), ``legacy``
(``__model__`` + parameter files; the sequence model only).

    python -m paddle_doctor.verify.modelzoo cnn pir OUT_DIR
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..base import children
from ..base.paddle_home import paddle_child_env
from ..base.vocabulary import ModelFormat

BUILDS = {"cnn": ("pir", "pdmodel"), "cnn_custom_op": ("pir",), "cnn_extra_consumer": ("pir",), "encoder": ("pir",),
          "sequence": ("legacy",), "recognizer": ("pir",), "detector": ("pir",)}
BROKEN_BLOCK = 1
ENCODER = {"layers": 4, "hidden": 312, "heads": 12, "ffn": 1248, "vocab": 18000, "seq": 128}
SEQUENCE_VOCAB = 1000


def build_model(kind: str, fmt: str, out_dir: str | Path, python: str = sys.executable, timeout: float = 300) -> Path:
    """Build one model in a child interpreter; returns the directory."""
    if fmt not in BUILDS.get(kind, ()):
        raise ValueError(f"no {fmt} build of {kind!r}; builds: {BUILDS}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(paddle_child_env(), FLAGS_enable_pir_api="1" if fmt == ModelFormat.PIR else "0", GLOG_minloglevel="2")
    builder = children.spawn([python, "-m", "paddle_doctor.verify.modelzoo", kind, fmt, str(out)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, stderr = builder.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"building the {kind} model took longer than {timeout:g} s") from None
    finally:
        children.end(builder)  # killed with its process group on a stop signal, like every child
    if builder.returncode != 0:
        raise RuntimeError(f"building the {kind} model failed: {stderr.strip().splitlines()[-1:]}")
    return out


def _cnn(variant: str = "cnn"):
    import paddle
    from paddle import nn

    class ConvBnReluNet(nn.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = nn.LayerList([
                nn.LayerList([nn.Conv2D(c_in, c_out, 3, stride=stride, padding=1), nn.BatchNorm2D(c_out), nn.ReLU()])
                for c_in, c_out, stride in ((3, 16, 1), (16, 32, 2), (32, 32, 2), (32, 64, 2))
            ])
            self.pool = nn.AdaptiveAvgPool2D(1)
            self.head = nn.Linear(64, 10)

        def forward(self, image):
            hidden = image
            for number, (conv, norm, act) in enumerate(self.blocks):
                convolved = conv(hidden)
                broken = number == BROKEN_BLOCK
                hidden = act(norm(paddle.sin(convolved) if broken and variant == "cnn_custom_op" else convolved))
                if broken and variant == "cnn_extra_consumer":
                    hidden = hidden + convolved
            return self.head(paddle.flatten(self.pool(hidden), 1))

    return ConvBnReluNet(), [paddle.static.InputSpec([None, 3, 224, 224], "float32", "image")]


def _encoder():
    import paddle
    from paddle import nn

    class TinyEncoder(nn.Layer):
        def __init__(self, layers, hidden, heads, ffn, vocab, seq):
            super().__init__()
            self.word = nn.Embedding(vocab, hidden)
            self.position = nn.Embedding(seq, hidden)
            self.norm = nn.LayerNorm(hidden)
            block = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.1, activation="gelu")
            self.encoder = nn.TransformerEncoder(block, layers)
            self.pooler = nn.Linear(hidden, hidden)
            self.classifier = nn.Linear(hidden, 2)

        def forward(self, input_ids):
            positions = paddle.arange(paddle.shape(input_ids)[1], dtype="int64").unsqueeze(0)
            hidden = self.norm(self.word(input_ids) + self.position(positions))
            hidden = self.encoder(hidden)
            return self.classifier(paddle.tanh(self.pooler(hidden[:, 0])))

    spec = [paddle.static.InputSpec([None, ENCODER["seq"]], "int64", "input_ids")]
    return TinyEncoder(**ENCODER), spec


def _conv_blocks(channels: tuple[tuple[int, int, int], ...]):
    """conv-bn-relu blocks: (in, out, stride) each."""
    from paddle import nn

    return nn.Sequential(*[nn.Sequential(nn.Conv2D(c_in, c_out, 3, stride=stride, padding=1), nn.BatchNorm2D(c_out), nn.ReLU())
                           for c_in, c_out, stride in channels])


def _recognizer():
    import paddle
    from paddle import nn

    class LineRecognizer(nn.Layer):
        def __init__(self, classes: int = 40):
            super().__init__()
            self.features = _conv_blocks(((3, 16, 1), (16, 32, 2), (32, 64, 1), (64, 64, 2)))
            self.classifier = nn.Linear(64, classes)

        def forward(self, x):
            columns = self.features(x).mean(axis=2).transpose([0, 2, 1])  # N, W/4, C
            return nn.functional.softmax(self.classifier(columns), axis=-1)

    return LineRecognizer(), [paddle.static.InputSpec([None, 3, 48, None], "float32", "x")]


def _detector():
    import paddle
    from paddle import nn

    class TextDetector(nn.Layer):
        def __init__(self):
            super().__init__()
            self.features = _conv_blocks(((3, 16, 2), (16, 32, 1), (32, 32, 2), (32, 32, 1)))
            self.head = nn.Conv2D(32, 1, 1)

        def forward(self, x):
            probability = nn.functional.sigmoid(self.head(self.features(x)))
            return nn.functional.interpolate(probability, scale_factor=4, mode="nearest")

    return TextDetector(), [paddle.static.InputSpec([None, 3, None, None], "float32", "x")]


LAYERS = {"encoder": _encoder, "recognizer": _recognizer, "detector": _detector}


def _save_layer(kind: str, out: Path) -> None:
    import paddle

    paddle.seed(7)
    layer, spec = LAYERS[kind]() if kind in LAYERS else _cnn(kind)
    layer.eval()
    static = paddle.jit.to_static(layer, input_spec=spec, full_graph=True)
    paddle.jit.save(static, str(out / "inference"))


def _save_sequence_legacy(out: Path) -> None:
    import paddle

    paddle.enable_static()
    paddle.seed(7)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        words = paddle.static.data("words", [-1], "int64", lod_level=1)
        embedded = paddle.static.nn.embedding(words, size=[SEQUENCE_VOCAB, 32])
        conv = paddle.static.nn.sequence_lod.sequence_conv(embedded, num_filters=32, filter_size=3, act="relu")
        pooled = paddle.static.nn.sequence_lod.sequence_pool(conv, "max")
        logits = paddle.static.nn.fc(pooled, 2)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    staging = out / "staging"
    paddle.static.save_inference_model(str(staging / "model"), [words], [logits], exe, program=main)
    program, _, _ = paddle.static.load_inference_model(str(staging / "model"), exe)
    (out / "__model__").write_bytes(program.desc.serialize_to_string())
    persistables = [var for var in program.list_vars() if var.persistable and var.name not in ("feed", "fetch")]
    # Paddle declares save_vars's overloads under an untyped decorator (dygraph_not_support): mypy cannot type it
    paddle.static.save_vars(exe, str(out), program, vars=persistables, filename=None)  # type: ignore[has-type]
    for leftover in sorted(staging.rglob("*"), reverse=True):
        leftover.unlink() if leftover.is_file() else leftover.rmdir()
    staging.rmdir()


def main(argv: list[str]) -> None:
    kind, fmt, out = argv
    out_dir = Path(out)
    if kind == "sequence":
        _save_sequence_legacy(out_dir)
    else:
        _save_layer(kind, out_dir)


if __name__ == "__main__":
    main(sys.argv[1:])
