"""papersift: a self-hostable hybrid search engine for research papers."""

__version__ = "0.1.0"
