"""Lab members' accounts (SQLite ``members.sqlite`` in the data directory): e-mail, name, the
researcher profile they are, an argon2id password hash and a session epoch (random from
the start, so a session signed for a removed account fits no later one).

Kept apart from the paper store: it is private data the paper indexes never read, and a
rebuilt or re-imported paper store must not touch it. Its tables and their versions are
``engine.members_schema``. Libraries (tags and saved papers) live in the same file
(``engine.library``).
"""

from __future__ import annotations

import os
import re
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from papersift.core.errors import DataDirError, PapersiftError, not_writable, unwritable
from papersift.engine.members_schema import upgrade

FILENAME = "members.sqlite"
MAX_EMAIL = 254
MAX_NAME = 200
MIN_PASSWORD = 10
MAX_PASSWORD = 1024  # argon2 takes any length; a megabyte "password" is a CPU attack
DIGESTS = ("off", "daily", "weekly")
_EMAIL = re.compile(r"^[^@\s<>\"',;]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")


class AccountError(PapersiftError):
    """A bad e-mail, password or name, an unknown or duplicate account: one line to show."""


@dataclass(frozen=True, slots=True)
class Member:
    id: int
    email: str
    name: str
    researcher_id: int | None
    epoch: int  # random, renewed by a password reset: sessions signed under another end
    token: str  # unguessable: the unsubscribe link and private feeds
    digest: str  # off, daily or weekly
    created: str
    # The address is known to be theirs: an account an admin made, or a signed-up one
    # whose confirmation link was opened. Digests go to confirmed addresses only.
    confirmed: bool = True


def seeds_exist(root: Path) -> bool:
    """Whether any member has a paper saved or is linked to a researcher (so has a "for you"
    list to rank), read without opening the accounts for writing; False with no file."""
    sql = (
        "SELECT EXISTS(SELECT 1 FROM saved)"
        " OR EXISTS(SELECT 1 FROM users WHERE researcher_id IS NOT NULL)"
    )
    return _read_only(root, sql) is True  # unreadable (locked): as if no one


def accounts_exist(root: Path) -> bool | None:
    """Whether anyone has an account to sign in with, read without opening (or creating)
    the accounts file for writing; False with no file, None when it cannot be read now."""
    return _read_only(root, "SELECT EXISTS(SELECT 1 FROM users)")


def _read_only(root: Path, sql: str) -> bool | None:
    """A yes/no query of the members file on a read-only connection of its own: False with
    no file, None when it cannot be read (locked, or not a database)."""
    path = root / FILENAME
    try:
        if not path.exists():
            return False
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            row = db.execute(sql).fetchone()
        finally:
            db.close()
    except (sqlite3.Error, OSError):  # e.g. a folder this user may not read
        return None
    return bool(row[0])


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def normalise_email(email: str) -> str:
    """The stored form (trimmed, lower-cased); AccountError if it is not an address."""
    text = email.strip().lower()
    if len(text) > MAX_EMAIL or not _EMAIL.match(text):
        raise AccountError(f"not an e-mail address: {email[:100]!r}")
    return text


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"the password must have at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise AccountError(f"the password must have at most {MAX_PASSWORD} characters")
    return password


def new_password() -> str:
    """A generated password for ``user add`` / ``user reset`` (~96 bits)."""
    return secrets.token_urlsafe(12)


def new_epoch() -> int:
    """A random session epoch (62 bits: SQLite's signed 64-bit integers hold it)."""
    return secrets.randbits(62)


SECRET_FILE = "secret.key"


def load_secret(root: Path, configured: str = "") -> str:
    """The key signing session cookies: ``configured`` if set, else the one generated once
    into ``secret.key`` (created exclusively with mode 0600, so two processes starting at
    once agree on one key and no other user can read it)."""
    if configured:
        return configured
    path = root / SECRET_FILE
    root.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_text(encoding="ascii").strip()
        if len(key) < 32:
            raise PapersiftError(
                f"{path} holds no usable key; delete it to make a new one"
            ) from None
        return key
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(secrets.token_urlsafe(48) + "\n")
    return load_secret(root)


_COLUMNS = "id, email, name, researcher_id, epoch, token, digest, created, confirmed"


def _member(row: tuple[object, ...]) -> Member:
    """A ``_COLUMNS`` row as a Member (SQLite has no booleans: ``confirmed`` is 0 or 1;
    mypy cannot count the fields of a row, hence the ignore)."""
    return Member(*row[:-1], bool(row[-1]))  # type: ignore[arg-type, call-arg]


class Members:
    """The accounts file; safe to share across threads (one connection behind a lock)."""

    def __init__(self, root: Path) -> None:
        self.path = root / FILENAME
        self.lock = threading.RLock()
        db = None
        try:
            root.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():  # password hashes: readable by this user only
                self.path.touch(mode=0o600)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db = db
            self._open()
        except BaseException as exc:
            if db is not None:
                db.close()
            if not isinstance(exc, OSError | sqlite3.Error):
                raise
            # No write access (reading needs it too: SQLite's WAL), or no database.
            reason = unwritable(root) if root.is_dir() else None
            if reason is not None:
                raise not_writable(root, reason) from None
            raise DataDirError(f"{self.path} cannot be opened ({exc})") from None
        self._hasher = PasswordHasher()  # argon2id with the library's (RFC 9106) defaults
        self._dummy = self._hasher.hash(secrets.token_hex(16))

    def _open(self) -> None:
        """Set the connection up and bring the schema to this version."""
        db = self._db
        db.execute("PRAGMA busy_timeout = 10000")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA foreign_keys = ON")
        upgrade(db, self.path)

    def close(self) -> None:
        with self.lock:
            self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection inside ``BEGIN IMMEDIATE`` .. ``COMMIT`` (rolled back on error)."""
        with self.lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def query(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with self.lock:
            return self._db.execute(sql, args).fetchall()

    # -- accounts ---------------------------------------------------------------------

    def add(
        self, email: str, password: str, name: str = "", researcher_id: int | None = None,
        *, confirmed: bool = True,
    ) -> Member:  # fmt: skip
        """A new account; ``confirmed=False`` for a sign-up, until its link is opened."""
        address = normalise_email(email)
        name = " ".join(name.split())
        if len(name) > MAX_NAME:
            raise AccountError(f"the name must have at most {MAX_NAME} characters")
        digest = self._hasher.hash(check_password(password))
        row = (address, name, researcher_id, digest, new_epoch(), secrets.token_urlsafe(24))
        try:
            with self.transaction() as db:
                cur = db.execute(
                    "INSERT INTO users (email, name, researcher_id, password, epoch, token, "
                    "created, confirmed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (*row, now_iso(), int(confirmed)),
                )
                # An older file may reuse a removed account's id: nothing of it carries over.
                db.execute("DELETE FROM feed_tokens WHERE user_id = ?", (cur.lastrowid,))
        except sqlite3.IntegrityError:
            raise AccountError(f"there is already an account for {address}") from None
        member = self.by_email(address)
        assert member is not None
        return member

    def _one(self, where: str, value: object) -> Member | None:
        rows = self.query(f"SELECT {_COLUMNS} FROM users WHERE {where} = ?", (value,))
        return _member(rows[0]) if rows else None

    def by_email(self, email: str) -> Member | None:
        return self._one("email", email.strip().lower())

    def by_id(self, member_id: int) -> Member | None:
        return self._one("id", member_id)

    def by_token(self, token: str) -> Member | None:
        return self._one("token", token) if token else None

    def all(self) -> list[Member]:
        rows = self.query(f"SELECT {_COLUMNS} FROM users ORDER BY email")
        return [_member(r) for r in rows]

    def existing(self, email: str) -> Member:
        member = self.by_email(email)
        if member is None:
            raise AccountError(f"there is no account for {email.strip()[:100]!r}")
        return member

    def remove(self, email: str) -> Member:
        """Delete the account with its library and feeds (tags, saved papers and tokens
        cascade; the tokens are deleted by name too, as they must never outlive it)."""
        member = self.existing(email)
        with self.transaction() as db:
            db.execute("DELETE FROM feed_tokens WHERE user_id = ?", (member.id,))
            db.execute("DELETE FROM users WHERE id = ?", (member.id,))
        return member

    def confirm(self, member_id: int, email: str) -> Member | None:
        """Mark the account confirmed if it still has this address (a link mailed to an
        address the account no longer has confirms nothing); the member, or None."""
        with self.transaction() as db:
            db.execute(
                "UPDATE users SET confirmed = 1 WHERE id = ? AND email = ?", (member_id, email)
            )
        member = self.by_id(member_id)
        return member if member is not None and member.email == email else None

    def set_password(self, email: str, password: str) -> Member:
        """A new password; every session signed before ends (a new epoch)."""
        member = self.existing(email)
        digest = self._hasher.hash(check_password(password))
        with self.transaction() as db:
            db.execute(
                "UPDATE users SET password = ?, epoch = ? WHERE id = ?",
                (digest, new_epoch(), member.id),
            )
        return self.existing(email)

    def update(
        self,
        member_id: int,
        *,
        name: str | None = None,
        researcher_id: int | bool | None = False,
        digest: str | None = None,
    ) -> None:
        """Change profile fields; ``researcher_id=None`` unlinks, ``False`` leaves it."""
        sets: list[str] = []
        args: list[object] = []
        if name is not None:
            sets.append("name = ?")
            args.append(" ".join(name.split())[:MAX_NAME])
        if researcher_id is not False:
            sets.append("researcher_id = ?")
            args.append(researcher_id)
        if digest is not None:
            if digest not in DIGESTS:
                raise AccountError(f"digest must be one of {', '.join(DIGESTS)}")
            sets.append("digest = ?")
            args.append(digest)
        if sets:
            with self.transaction() as db:
                db.execute(f"UPDATE users SET {', '.join(sets)} WHERE id = ?", (*args, member_id))

    def authenticate(self, email: str, password: str) -> Member | None:
        """The member if the password is theirs. An unknown address costs one hash too, so
        the answer's timing does not tell which addresses have accounts."""
        rows = self.query(
            "SELECT id, password FROM users WHERE email = ?", (email.strip().lower(),)
        )
        stored = str(rows[0][1]) if rows else self._dummy
        try:
            self._hasher.verify(stored, password[:MAX_PASSWORD])
        except (VerificationError, InvalidHashError):
            return None
        if not rows:
            return None
        member = self.by_id(int(rows[0][0]))  # type: ignore[call-overload]
        if member is not None and self._hasher.check_needs_rehash(stored):
            with self.transaction() as db:
                db.execute(
                    "UPDATE users SET password = ? WHERE id = ?",
                    (self._hasher.hash(password), member.id),
                )
        return member
