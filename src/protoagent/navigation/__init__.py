"""Structural navigation of exact symbols: an index built from source, never importing project code."""
