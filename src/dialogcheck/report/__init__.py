"""Renderers: pure functions from result data to text, JSON, and later JUnit and HTML."""
