"""paddle-doctor: finds why Paddle Inference is slow inside a container."""

__version__ = "0.1.0"
