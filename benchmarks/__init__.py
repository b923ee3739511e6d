"""Benchmarks: each module measures its figures against a baseline taken in the same run."""
