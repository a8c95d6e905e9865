"""Benchmark harness for dpsynth: datasets, reference synthesizers and metrics."""
