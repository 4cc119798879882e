"""Verification: each fix measured on the real Paddle predictor, in a child process."""
