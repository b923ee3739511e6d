"""Tests of the billing example (``examples/billing``)."""
