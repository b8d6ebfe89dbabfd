"""Tests of the harness-evals adapter (evald/metrics/harness_adapter.py), run against the real harness-evals."""
