"""Getting papers in: snapshot import, author parsing, building the indexes."""
