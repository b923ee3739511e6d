"""Fusion: app (registry, serving), its bases listing and surfaces; pipeline: the call path."""
