"""A signed-up address is confirmed by a mailed link before any digest goes to it.

The real app over the session's index, a members file of the test's own, and a real SMTP
server on 127.0.0.1 (aiosmtpd) receiving the confirmation mail; the link is read out of
the message that arrived and opened as a member would."""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from starlette.testclient import TestClient

from papersift.core.config import Config, MailConfig
from papersift.engine.members import Members, load_secret
from papersift.engine.search import SearchEngine
from papersift.indexer.confirm_mail import CONFIRM_DAYS
from papersift.indexer.digest_run import run_digests
from papersift.server.app import create_app
from tests.member_kit import PASSWORD, csrf_of, member_config
from tests.smtp_kit import Inbox, smtp_server
from tests.test_digest import weekly_search_digest
from tests.web_helpers import parse_html

pytest_plugins = ["tests.member_fixtures"]
ADDRESS = "hal@lab.example"


@pytest.fixture
def mailing(
    engine: SearchEngine, built_config: Config, members_root: Path
) -> Iterator[tuple[TestClient, Inbox, Config]]:
    """The site with sign-up open and mail going to a real SMTP server: (browser, the
    server's inbox, the config)."""
    with smtp_server() as (box, port):
        config = site_config(built_config, members_root, port)
        with TestClient(create_app(engine, config), follow_redirects=False) as c:
            yield c, box, config


def site_config(built: Config, root: Path, port: int | None) -> Config:
    """Sign-up open to lab.example; mail through the test server (none: mail off)."""
    config = member_config(built, root, signup_domains="lab.example")
    if port is None:
        return config
    mail = MailConfig(host="127.0.0.1", port=port, security="none",
                      from_address="Lab radar <radar@lab.example>")  # fmt: skip
    server = dataclasses.replace(config.server, base_url="http://papers.example")
    return dataclasses.replace(config, mail=mail, server=server)


def sign_up(c: TestClient) -> str:
    """Sign up ADDRESS; where the answer sends the browser."""
    form = {"csrf": csrf_of(c.get("/signup")), "email": ADDRESS, "password": PASSWORD}
    made = c.post("/signup", data={**form, "name": "Hal"})
    assert made.status_code == 303
    return made.headers["location"]


def link_in(box: Inbox) -> str:
    """The confirmation link of the last message to ADDRESS, as a path on this site."""
    mail = box.to(ADDRESS)[-1]
    assert mail["Subject"] == "Confirm your address for papersift"
    found = re.search(r"http://papers\.example(/confirm\?t=\S+)", mail.get_content())
    assert found, mail.get_content()
    return found.group(1)


def notice(page_text: str) -> str:
    """The page's status line (``role=status``)."""
    found = parse_html(page_text).cssselect("[role=status]")
    return " ".join(found[0].text_content().split()) if found else ""


def banner(c: TestClient) -> bool:
    """Whether the account page says the address is not confirmed."""
    return "Send the link again" in c.get("/account").text


def test_digests_wait_for_the_mailed_link(
    engine: SearchEngine, members_root: Path, mailing: tuple[TestClient, Inbox, Config]
) -> None:
    c, box, config = mailing
    assert sign_up(c) == "/account?sent=sent"
    page = c.get("/account?sent=sent")
    assert f"We sent a link to {ADDRESS}" in notice(page.text) and banner(c)
    assert "not confirmed yet" in c.get("/account/digest").text
    link = link_in(box)

    members = Members(members_root)
    try:
        hal = members.by_email(ADDRESS)
        assert hal is not None and not hal.confirmed
        weekly_search_digest(members, hal.id)
    finally:
        members.close()
    monday = date(2026, 7, 6)
    waiting = run_digests(engine, config, today=monday)
    assert waiting.sent == 0 and not waiting.error
    assert any(line.startswith(f"{ADDRESS}: address not confirmed") for line in waiting.lines)
    assert len(box.to(ADDRESS)) == 1  # the confirmation mail alone

    opened = c.get(link)
    assert (opened.status_code, opened.headers["location"]) == (303, "/account?confirmed=1")
    assert not banner(c) and "not confirmed yet" not in c.get("/account/digest").text
    assert "Your address is confirmed" in notice(c.get("/account?confirmed=1").text)
    sent = run_digests(engine, config, today=monday)
    assert sent.sent == 1 and len(box.to(ADDRESS)) == 2
    assert c.get(link).status_code == 303  # opening it again changes nothing


def test_the_link_can_be_sent_again_and_a_bad_one_says_why(
    members_root: Path, mailing: tuple[TestClient, Inbox, Config]
) -> None:
    c, box, _ = mailing
    sign_up(c)
    page = c.get("/account")
    again = c.post("/account", data={"csrf": csrf_of(page), "action": "confirm"})
    assert again.status_code == 303 and len(box.to(ADDRESS)) == 2
    link = link_in(box)

    cut = c.get(link[:-6])
    assert cut.status_code == 400 and "not valid" in cut.text and banner(c)
    # Signed here as the address was; then the account's address changed.
    secret = load_secret(members_root)
    members = Members(members_root)
    try:
        hal = members.by_email(ADDRESS)
        assert hal is not None
        with members.transaction() as db:
            db.execute("UPDATE users SET email = 'hal2@lab.example' WHERE id = ?", (hal.id,))
    finally:
        members.close()
    assert c.get(link).status_code == 400

    class WeekOld(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time()) - (CONFIRM_DAYS + 1) * 86400

    signer = URLSafeTimedSerializer(secret, salt="papersift-confirm", signer=WeekOld)
    old = signer.dumps([hal.id, "hal2@lab.example"])
    expired = c.get(f"/confirm?t={old}")
    assert expired.status_code == 400 and "expired" in expired.text and banner(c)


def test_without_mail_the_page_says_so(
    engine: SearchEngine, built_config: Config, members_root: Path
) -> None:
    config = site_config(built_config, members_root, None)
    with TestClient(create_app(engine, config), follow_redirects=False) as c:
        assert sign_up(c) == "/account?sent=off"
        said = c.get("/account?sent=off").text
        assert "sends no e-mail" in notice(said) and said.count("sends no e-mail") == 1
        # No "Send the link again", nor "the link we mailed to it": nothing was mailed.
        plain = c.get("/account").text
        assert not banner(c) and "mailed to it" not in plain
        # What to do, for the member; the command is the admin's (tests/test_admin_view.py).
        assert "Ask the lab's admin to confirm it." in " ".join(plain.split())
        assert "papersift user" not in plain
        # The notice comes from a code: a crafted address cannot put words on the page.
        crafted = c.get("/account", params={"sent": "Your account is locked, call +1 555"})
        assert "call +1 555" not in crafted.text


def test_accounts_from_before_stay_confirmed(tmp_path: Path) -> None:
    """A members file of schema version 2 (no confirmation) opens with its accounts
    confirmed: they were made by an admin or signed up before links existed."""
    db = sqlite3.connect(tmp_path / "members.sqlite")
    db.executescript(
        "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT NOT "
        "NULL DEFAULT '', researcher_id INTEGER, password TEXT NOT NULL, epoch INTEGER NOT NULL "
        "DEFAULT 0, token TEXT NOT NULL UNIQUE, digest TEXT NOT NULL DEFAULT 'off', created "
        "TEXT NOT NULL);"
        "INSERT INTO users (email, password, token, created) VALUES "
        "('ada@lab.example', 'x', 'tok', '2026-01-01T00:00:00+00:00');"
        "PRAGMA user_version = 2;"
    )
    db.close()
    members = Members(tmp_path)
    try:
        ada = members.by_email("ada@lab.example")
        assert ada is not None and ada.confirmed
        made = members.add("grace@lab.example", PASSWORD)  # `papersift user add`
        assert made.confirmed
        assert not members.add("hal@lab.example", PASSWORD, confirmed=False).confirmed
    finally:
        members.close()


def test_an_admin_confirms_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With no mail, an admin confirms a signed-up address with `papersift user confirm`."""
    from papersift.cli import main

    (tmp_path / "d").mkdir()
    cfg = tmp_path / "config.toml"
    cfg.write_text('[data]\ndir = "d"\n', encoding="utf-8")
    members = Members(tmp_path / "d")
    try:
        members.add(ADDRESS, PASSWORD, "Hal", confirmed=False)
        assert main(["user", "list", "--config", str(cfg)]) == 0
        head, row = capsys.readouterr().out.splitlines()
        assert head.split() == ["email", "name", "confirmed", "digest", "researcher", "created"]
        assert row.split()[:5] == [ADDRESS, "Hal", "no", "off", "-"]
        assert main(["user", "confirm", ADDRESS.upper(), "--config", str(cfg)]) == 0
        assert capsys.readouterr().out == f"confirmed {ADDRESS}: digests can go to it\n"
        hal = members.by_email(ADDRESS)
        assert hal is not None and hal.confirmed
        assert main(["user", "confirm", ADDRESS, "--config", str(cfg)]) == 0  # once more
        assert capsys.readouterr().out == f"{ADDRESS} is already confirmed: digests can go to it\n"
        assert main(["user", "confirm", "nobody@lab.example", "--config", str(cfg)]) == 1
        assert "there is no account" in capsys.readouterr().err
    finally:
        members.close()
