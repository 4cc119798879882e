"""What a running container runs on itself: the healthcheck, its baselines, the TensorRT cache stamp."""
