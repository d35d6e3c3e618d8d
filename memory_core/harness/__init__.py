"""Simulated-conversation harness: session files, replay, metrics and baselines."""
