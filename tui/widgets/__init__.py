"""Reusable pieces of the Textual UI (cells and text blocks built without markup)."""
