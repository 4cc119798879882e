#!/usr/bin/env python3
"""A small Paddle Inference CPU service: what the example Dockerfile, Kubernetes Deployment and CI
jobs run.

It builds its predictor from service.yaml, the same file `paddle-doctor --config` reads, so the
doctor judges the configuration that really runs. At start it runs `warmup_runs` inferences (the
first ones build the oneDNN kernels; TensorRT engines would be written to `optim_cache_dir`), then:

    GET  /ready     200 once warm
    POST /predict   {"inputs": [...]} (nested lists in the model's input shape) -> {"outputs": [...]}

One predictor answers one request at a time (a predictor is not thread-safe); scale with
instances, each with threads x instances within the CPU limit.

    serve.py --config service.yaml [--port 8080] [--warmup-only]

--warmup-only stops after the warm-up; the entrypoint runs it before `paddle-doctor baseline`, so
the baseline sees the cache as the warm-up left it. WARMUP_INPUT_SHAPE (default 1,3,32,32) is the warm-up input.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import yaml
from paddle import inference


def paddle_config(service: dict) -> inference.Config:
    model = service["model"]
    config = inference.Config(f"{model}.json", f"{model}.pdiparams")
    config.disable_glog_info()
    config.set_cpu_math_library_num_threads(service.get("threads", 1))
    if service.get("onednn", True):
        config.enable_mkldnn()
    else:
        config.disable_mkldnn()
    config.switch_ir_optim(service.get("ir_optim", True))
    if service.get("optim_cache_dir"):
        config.set_optim_cache_dir(service["optim_cache_dir"])
        config.enable_save_optim_model(service.get("save_optim_model", False))
        config.use_optimized_model(service.get("use_optimized_model", False))
    return config


class Model:
    def __init__(self, service: dict) -> None:
        self.predictor = inference.create_predictor(paddle_config(service))
        self.input = self.predictor.get_input_handle(self.predictor.get_input_names()[0])
        self.output = self.predictor.get_output_handle(self.predictor.get_output_names()[0])

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        self.input.copy_from_cpu(batch)
        self.predictor.run()
        return self.output.copy_to_cpu()

    def warm_up(self, runs: int, shape: tuple[int, ...]) -> float:
        start = time.perf_counter()
        for _ in range(runs):
            self(np.zeros(shape, dtype="float32"))
        return time.perf_counter() - start


def handler_for(model: Model) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/ready":
                return self.reply(200, {"ready": True})
            self.reply(404, {"error": "not found"})

        def do_POST(self) -> None:
            if self.path != "/predict":
                return self.reply(404, {"error": "not found"})
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                outputs = model(np.asarray(body["inputs"], dtype="float32"))
            except (ValueError, KeyError, TypeError, RuntimeError) as exc:
                return self.reply(400, {"error": str(exc)})
            self.reply(200, {"outputs": outputs.tolist()})

        def reply(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args) -> None:  # keep the container log for the service's own lines
            pass

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True)
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8080")))
    parser.add_argument("--warmup-only", action="store_true")
    args = parser.parse_args()
    with open(args.config, encoding="utf-8") as handle:
        service = yaml.safe_load(handle)
    shape = tuple(int(n) for n in os.environ.get("WARMUP_INPUT_SHAPE", "1,3,32,32").split(","))
    model = Model(service)
    seconds = model.warm_up(service.get("warmup_runs", 3), shape)
    print(f"serve: warm after {service.get('warmup_runs', 3)} runs in {seconds:.2f} s", flush=True)
    if args.warmup_only:
        return
    server = HTTPServer(("0.0.0.0", args.port), handler_for(model))
    print(f"serve: listening on port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
