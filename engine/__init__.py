"""Indexes, embedding, fusion and the one search entry point."""
