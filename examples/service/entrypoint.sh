#!/bin/sh
# Container entrypoint: warm up, record the baseline, then serve.
# Any arguments run instead (`docker run IMAGE paddle-doctor --format junit ...` in CI).
set -eu

if [ "$#" -gt 0 ]; then
    exec "$@"
fi

CONFIG="${SERVICE_CONFIG:-/srv/service.yaml}"
BASELINE="${PADDLE_DOCTOR_BASELINE:-/var/lib/paddle-doctor/baseline.json}"
SERVE="${SERVE:-/srv/serve.py}"

# 1. Warm-up: builds the predictor and runs warmup_runs inferences. Whatever Paddle caches in
#    optim_cache_dir (TensorRT engines on a GPU build) is there before the baseline records it.
python "$SERVE" --config "$CONFIG" --warmup-only

# 2. What must stay true while the container runs: CPU budget vs threads, memory limit,
#    throttling counters, the Paddle build, the cache. The HEALTHCHECK compares against it.
paddle-doctor baseline --config "$CONFIG" --out "$BASELINE"

# 3. Serve. The server warms its own predictor up again (from the cache, where there is one).
exec python "$SERVE" --config "$CONFIG"
