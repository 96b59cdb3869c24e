"""Signed-out sessions: a session cookie is signed, not stored, so signing out records the
session's random id, refused from then on. An entry is kept until its cookie would have
expired anyway, then pruned (the table holds only the sign-outs of the last session span).
The table is in ``engine.members_schema``.
"""

from __future__ import annotations

import time

from papersift.engine.members import Members


class SignOuts:
    def __init__(self, members: Members) -> None:
        self.members = members

    def end(self, sid: str, issued: int, max_age: int) -> None:
        """Refuse session ``sid`` (a cookie signed at ``issued``, Unix seconds) from now on;
        forget the ones older than ``max_age`` seconds, which are refused as expired."""
        with self.members.transaction() as db:
            db.execute("DELETE FROM signouts WHERE issued < ?", (int(time.time()) - max_age,))
            db.execute("INSERT OR IGNORE INTO signouts (sid, issued) VALUES (?, ?)", (sid, issued))

    def ended(self, sid: str) -> bool:
        """Whether session ``sid`` was signed out (one primary-key lookup)."""
        return bool(self.members.query("SELECT 1 FROM signouts WHERE sid = ?", (sid,)))
