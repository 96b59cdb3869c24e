"""Helpers for the accounts and library tests: the real app over the session's index with a
members file of the test's own, signing in through the real forms."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import httpx
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.members import Members
from papersift.engine.members_schema import SCHEMA
from tests.web_helpers import parse_html

PASSWORD = "correct horse battery"


def member_config(built: Config, root: Path, **accounts: object) -> Config:
    """``built`` (the session's index settings) with its members file under ``root``."""
    return dataclasses.replace(
        built,
        data=dataclasses.replace(built.data, dir=str(root)),
        accounts=dataclasses.replace(built.accounts, **accounts),  # type: ignore[arg-type]
    )


def csrf_of(page: httpx.Response, form: str = "form[method=post]") -> str:
    tree = parse_html(page.text)
    found = tree.cssselect(f"{form} input[name=csrf]")
    assert found, "the page has no form with a CSRF token"
    return str(found[0].get("value"))


def version_3_file(root: Path) -> None:
    """An empty members file as papersift made them before version 4: ids without
    AUTOINCREMENT, which SQLite reuses after the highest row is deleted."""
    root.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(root / "members.sqlite")
    try:
        db.executescript(SCHEMA.replace(" AUTOINCREMENT", "") + "PRAGMA user_version = 3;")
    finally:
        db.close()


def add_member(root: Path, email: str, name: str = "") -> None:
    members = Members(root)
    try:
        members.add(email, PASSWORD, name)
    finally:
        members.close()


def sign_in(
    client: TestClient | httpx.Client, email: str, password: str = PASSWORD
) -> httpx.Response:
    page = client.get("/signin")
    assert page.status_code == 200
    return client.post(
        "/signin",
        data={"csrf": csrf_of(page), "email": email, "password": password, "next": "/library"},
    )


def post_settings(client: TestClient | httpx.Client, **data: object) -> httpx.Response:
    """Post the digest settings form (``/account/digest``) with the page's CSRF token."""
    page = client.get("/account/digest")
    assert page.status_code == 200
    return client.post("/account/digest", data={"csrf": csrf_of(page), **data})
