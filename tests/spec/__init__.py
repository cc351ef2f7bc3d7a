"""Spec conformance tests, one module per spec page."""
