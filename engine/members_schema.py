"""The tables of the accounts file (``members.sqlite``, opened by ``engine.members``) and
their versions: the schema, and bringing an older file up to it when it opens.

The schema is versioned with ``PRAGMA user_version``; a file of a newer version is refused
rather than guessed at. Account and tag ids of files made since version 4 are never reused
(AUTOINCREMENT); older files keep their tables, and nothing keyed by an id outlives it (feed
tokens go with their tag or account, and a new tag or account first clears any left behind).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from papersift.core.errors import PapersiftError

# 2: saved searches, follows, digest choices, feed tokens; 3: confirmed; 4: signed-out
# sessions, ids never reused in new files, random epochs (an older papersift would accept
# signed-out sessions, so it must not open the file); 5: a saved search's filters (an older
# papersift would send such a search's digest without them)
SCHEMA_VERSION = 5

# The filters are ``engine.subscriptions``' JSON ('' for none): the same words with other
# filters are another saved search.
SEARCHES = """
CREATE TABLE IF NOT EXISTS {name} (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    query TEXT NOT NULL,
    in_digest INTEGER NOT NULL DEFAULT 1,
    created TEXT NOT NULL,
    filters TEXT NOT NULL DEFAULT '',
    UNIQUE (user_id, query, filters)
);
"""

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    researcher_id INTEGER,
    password TEXT NOT NULL,
    epoch INTEGER NOT NULL DEFAULT 0,
    token TEXT NOT NULL UNIQUE,
    digest TEXT NOT NULL DEFAULT 'off',
    created TEXT NOT NULL,
    confirmed INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS tags (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    created TEXT NOT NULL,
    UNIQUE (user_id, name)
);
CREATE TABLE IF NOT EXISTS saved (
    tag_id INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    arxiv_id TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    added TEXT NOT NULL,
    PRIMARY KEY (tag_id, arxiv_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS digest_sent (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    window TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'sent',
    PRIMARY KEY (user_id, window)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS follows (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    researcher_id INTEGER NOT NULL,
    in_digest INTEGER NOT NULL DEFAULT 1,
    created TEXT NOT NULL,
    PRIMARY KEY (user_id, researcher_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS digest_tags (
    tag_id INTEGER PRIMARY KEY REFERENCES tags(id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS feed_tokens (
    key TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    ref INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL,
    UNIQUE (user_id, kind, ref)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS signouts (
    sid TEXT PRIMARY KEY,
    issued INTEGER NOT NULL
) WITHOUT ROWID;
""" + SEARCHES.format(name="searches")


def upgrade(db: sqlite3.Connection, path: Path) -> None:
    """Bring the schema of the file at ``path`` to this version (PapersiftError if the file
    is of a newer one)."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise PapersiftError(
            f"{path} has schema version {version}; this papersift reads up to "
            f"{SCHEMA_VERSION}: upgrade papersift"
        )
    db.executescript(SCHEMA)
    columns = {str(r[1]) for r in db.execute("PRAGMA table_info(digest_sent)")}
    if "state" not in columns:  # version 1: every row recorded a finished send
        db.execute("ALTER TABLE digest_sent ADD COLUMN state TEXT NOT NULL DEFAULT 'sent'")
    if "confirmed" not in {str(r[1]) for r in db.execute("PRAGMA table_info(users)")}:
        # Version 2 and before: accounts were made by an admin or before confirmation
        # existed; they stay as they were.
        db.execute("ALTER TABLE users ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 1")
    _searches_with_filters(db)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _searches_with_filters(db: sqlite3.Connection) -> None:
    """Version 4 and before: saved searches had no filters, and their words alone were
    unique. SQLite cannot change a table's UNIQUE, so the table is copied into the new
    shape (same ids, no filters), in one transaction: another process opening the file at
    the same time finds it done."""
    if "filters" in _columns(db, "searches"):
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        if "filters" not in _columns(db, "searches"):
            db.execute("ALTER TABLE searches RENAME TO searches_before_5")
            db.execute(SEARCHES.format(name="searches"))
            db.execute(
                "INSERT INTO searches (id, user_id, query, in_digest, created) "
                "SELECT id, user_id, query, in_digest, created FROM searches_before_5"
            )
            db.execute("DROP TABLE searches_before_5")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in db.execute(f"PRAGMA table_info({table})")}
