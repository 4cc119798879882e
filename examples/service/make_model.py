#!/usr/bin/env python3
"""Save a small conv-bn-relu classifier as a Paddle inference model (PIR: inference.json +
inference.pdiparams), so that the example image runs without a model of your own.

Usage: make_model.py DIR   (replace it with `COPY your-model/ /srv/model/` in the Dockerfile)
"""

import sys

import paddle
from paddle import nn


class SmallCNN(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2D(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2D(8)
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(8, 4)

    def forward(self, image):
        features = self.pool(nn.functional.relu(self.bn(self.conv(image))))
        return self.fc(paddle.flatten(features, 1))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    model = SmallCNN()
    model.eval()
    spec = [paddle.static.InputSpec([None, 3, 32, 32], "float32", "image")]
    paddle.jit.save(model, f"{sys.argv[1]}/inference", input_spec=spec)


if __name__ == "__main__":
    main()
