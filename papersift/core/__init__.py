"""The low layer every folder builds on: the Paper record, errors, settings, names, URLs.

Nothing here imports another part of papersift; the engine, indexer, feeds, server and CLI
import downward from it (the contracts in pyproject.toml's ``[tool.importlinter]``).
"""
