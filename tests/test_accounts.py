"""Accounts over the real app: sign-in, wrong passwords, forged and expired cookies, CSRF,
rate limits, sign-up by domain, the account page; the ``papersift user`` CLI."""

from __future__ import annotations

import io
import logging
import os
import stat
import time
from pathlib import Path

import pytest
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from starlette.testclient import TestClient

from papersift.cli import main
from papersift.core.config import Config
from papersift.engine.members import SECRET_FILE, Members, load_secret
from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from papersift.server.sessions import COOKIE
from tests.member_kit import (
    PASSWORD,
    add_member,
    csrf_of,
    member_config,
    sign_in,
    version_3_file,
)
from tests.web_helpers import parse_html, serving

pytest_plugins = ["tests.member_fixtures"]


def message(page_text: str) -> str:
    tree = parse_html(page_text)
    found = tree.cssselect("[role=alert], .message")
    return " ".join(found[0].text_content().split()) if found else ""


def test_sign_in_and_out(site: TestClient, members_root: Path) -> None:
    add_member(members_root, "ada@lab.example", "Ada")
    assert site.get("/library").status_code == 303  # not signed in: to the sign-in page
    assert site.get("/library").headers["location"].startswith("/signin?next=%2Flibrary")
    done = sign_in(site, "ADA@lab.example")
    assert done.status_code == 303 and done.headers["location"] == "/library"
    cookie = done.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie
    page = site.get("/library")
    assert page.status_code == 200
    assert page.headers["cache-control"] == "private, no-store"
    assert "Ada" in parse_html(page.text).cssselect("main p")[0].text_content()
    out = site.post("/signout", data={"csrf": csrf_of(page, "form[action='/library/tags']")})
    assert out.status_code == 303
    assert site.get("/library").status_code == 303


def test_wrong_password_is_a_clear_401(site: TestClient, members_root: Path) -> None:
    add_member(members_root, "bob@lab.example")
    for email, password in (("bob@lab.example", "not the password"), ("who@x.org", PASSWORD)):
        page = sign_in(site, email, password)
        assert page.status_code == 401
        assert message(page.text) == "Wrong e-mail address or password."
        assert site.get("/library").status_code == 303


def test_forged_and_expired_cookies_mean_signed_out(
    site: TestClient, members_root: Path, engine: SearchEngine, built_config: Config
) -> None:
    add_member(members_root, "cy@lab.example")
    assert sign_in(site, "cy@lab.example").status_code == 303
    real = site.cookies[COOKIE]
    member = Members(members_root).by_email("cy@lab.example")
    assert member is not None
    forged = URLSafeTimedSerializer("not the key", salt="papersift-session").dumps(
        {"m": member.id, "e": member.epoch, "c": "x"}
    )
    for bad in (forged, real[:-3] + "AAA", "garbage"):
        site.cookies.clear()
        site.cookies.set(COOKIE, bad)
        page = site.get("/library")
        assert page.status_code == 303
        assert page.headers["location"].endswith("&expired=1")
        signin = site.get(page.headers["location"])
        assert "session has ended" in parse_html(signin.text).cssselect("[role=status]")[0].text
    # An expired one: signed with the real key two days ago, older than session_days = 1.
    site.cookies.clear()
    site.cookies.set(COOKIE, real)
    assert site.get("/library").status_code == 200

    class TwoDaysAgo(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time()) - 2 * 86400

    key = load_secret(members_root)
    payload = {"m": member.id, "e": member.epoch, "s": "x", "c": "x"}
    short = create_app(engine, member_config(built_config, members_root, session_days=1))
    with TestClient(short, follow_redirects=False) as other:
        fresh = URLSafeTimedSerializer(key, salt="papersift-session").dumps(payload)
        other.cookies.set(COOKIE, fresh)
        assert other.get("/library").status_code == 200
        stale = URLSafeTimedSerializer(key, salt="papersift-session", signer=TwoDaysAgo)
        other.cookies.clear()
        other.cookies.set(COOKIE, stale.dumps(payload))
        page = other.get("/library")
        assert page.status_code == 303 and page.headers["location"].endswith("&expired=1")


def test_a_reset_password_ends_sessions(site: TestClient, members_root: Path) -> None:
    add_member(members_root, "di@lab.example")
    assert sign_in(site, "di@lab.example").status_code == 303
    assert site.get("/library").status_code == 200
    m = Members(members_root)
    m.set_password("di@lab.example", "another long password")
    m.close()
    assert site.get("/library").status_code == 303


def test_posts_need_the_sessions_csrf_token(site: TestClient, members_root: Path) -> None:
    add_member(members_root, "eve@lab.example")
    sign_in(site, "eve@lab.example")
    page = site.get("/library")
    token = csrf_of(page, "form[action='/library/tags']")
    missing = site.post("/library/tags", data={"name": "x"})
    assert missing.status_code == 403
    assert "lacks its security token" in message(missing.text)
    wrong = site.post("/library/tags", data={"name": "x", "csrf": token + "x"})
    assert wrong.status_code == 403 and "another session" in message(wrong.text)
    # A sign-in post from a page of no session (a cross-site form) is refused too.
    with TestClient(site.app, follow_redirects=False) as stranger:
        refused = stranger.post(
            "/signin", data={"csrf": token, "email": "eve@lab.example", "password": PASSWORD}
        )
        assert refused.status_code == 403 and "session has expired" in message(refused.text)
    assert site.get("/library").text.count("/library/") >= 1
    made = site.post("/library/tags", data={"name": "Reading", "csrf": token})
    assert made.status_code == 303


def test_sign_in_is_rate_limited(
    engine: SearchEngine, built_config: Config, members_root: Path
) -> None:
    add_member(members_root, "fay@lab.example")
    app = create_app(engine, member_config(built_config, members_root, signin_per_minute=3))
    with TestClient(app, follow_redirects=False) as c:
        codes = [sign_in(c, "fay@lab.example", "wrong password!").status_code for _ in range(4)]
        assert codes == [401, 401, 401, 429]
        limited = sign_in(c, "fay@lab.example")  # even the right password waits now
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        seconds = int(limited.headers["retry-after"])  # the page says the same wait
        assert message(limited.text) == (
            f"Too many sign-in attempts; wait {seconds} second{'s' * (seconds != 1)} and try again."
        )


def test_nothing_secret_in_the_logs(
    site: TestClient, members_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    add_member(members_root, "gus@lab.example")
    with caplog.at_level(logging.DEBUG):
        sign_in(site, "gus@lab.example", "wrong password here")
        sign_in(site, "gus@lab.example")
    assert PASSWORD not in caplog.text and "wrong password here" not in caplog.text
    assert site.cookies[COOKIE] not in caplog.text


def test_signup_only_for_allowed_domains(
    engine: SearchEngine, built_config: Config, members_root: Path, site: TestClient
) -> None:
    assert site.get("/signup").status_code == 404
    app = create_app(
        engine, member_config(built_config, members_root, signup_domains="lab.example")
    )
    with TestClient(app, follow_redirects=False) as c:
        page = c.get("/signup")
        form = {"csrf": csrf_of(page), "email": "mallory@evil.example", "password": PASSWORD}
        refused = c.post("/signup", data=form)
        assert refused.status_code == 400
        assert message(refused.text) == "Sign-up is open to addresses at lab.example only."
        short = c.post("/signup", data={**form, "email": "hal@lab.example", "password": "short"})
        assert short.status_code == 400 and "at least 10 characters" in message(short.text)
        made = c.post("/signup", data={**form, "email": "hal@lab.example", "name": "Hal"})
        assert made.status_code == 303 and c.get("/library").status_code == 200
        form["csrf"] = csrf_of(c.get("/signup"))  # signing in began a new session
        again = c.post("/signup", data={**form, "email": "hal@lab.example"})
        assert again.status_code == 400 and "already an account" in message(again.text)


def test_account_links_a_researcher(
    site: TestClient, members_root: Path, engine: SearchEngine
) -> None:
    add_member(members_root, "ivy@lab.example")
    sign_in(site, "ivy@lab.example")
    page = site.get("/account")
    token = csrf_of(page)
    researcher = engine.people.search("a", 1)[0][0]
    bad = site.post(
        "/account", data={"csrf": token, "action": "profile", "researcher": "qzxwv nope"}
    )
    assert bad.status_code == 400 and "No researcher named 'qzxwv nope'" in message(bad.text)
    # A name one researcher's spellings hold is that researcher, as the directory finds it.
    (named,), total = engine.people.search(researcher.name)
    assert total == 1
    by_name = site.post(
        "/account", data={"csrf": token, "action": "profile", "researcher": researcher.name}
    )
    assert by_name.status_code == 200, message(by_name.text)
    assert parse_html(by_name.text).cssselect(f"a[href^='/researchers/{named.rid}']")
    missing = site.post(
        "/account", data={"csrf": token, "action": "profile", "researcher": "999999"}
    )
    assert missing.status_code == 400 and "no researcher 999999" in message(missing.text)
    url = f"http://testserver/researchers/{researcher.rid}-x"
    ok = site.post(
        "/account", data={"csrf": token, "action": "profile", "researcher": url, "name": "Ivy"}
    )
    assert ok.status_code == 200, message(ok.text)
    linked = parse_html(ok.text).cssselect(f"a[href^='/researchers/{researcher.rid}']")
    assert linked and linked[0].text_content() == researcher.name
    changed = site.post(
        "/account", data={"csrf": token, "action": "password", "current": PASSWORD, "new": "x" * 12}
    )
    assert changed.status_code == 303 and site.get("/account").status_code == 200


def test_over_a_real_server(engine: SearchEngine, built_config: Config, members_root: Path) -> None:
    import httpx

    add_member(members_root, "jo@lab.example")
    app = create_app(engine, member_config(built_config, members_root))
    with serving(app) as url, httpx.Client(base_url=url, follow_redirects=False) as c:
        assert sign_in(c, "jo@lab.example").status_code == 303
        assert c.get("/library").status_code == 200


def test_secret_key_file(tmp_path: Path) -> None:
    key = load_secret(tmp_path)
    path = tmp_path / SECRET_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and len(key) >= 32
    assert load_secret(tmp_path) == key and load_secret(tmp_path, "configured") == "configured"


def test_a_short_configured_secret_key_is_refused(tmp_path: Path) -> None:
    """A key of a few characters could be found from one session cookie offline, and every
    session forged: as short as the generated file's minimum is refused in one line."""
    from papersift.core.config_load import load_config
    from papersift.core.errors import ConfigError

    with pytest.raises(
        ConfigError, match="PAPERSIFT_ACCOUNTS_SECRET_KEY must be at least 32 characters, got 3"
    ):
        load_config(None, env={"PAPERSIFT_ACCOUNTS_SECRET_KEY": "abc"})
    key = "k" * 40
    assert load_config(None, env={"PAPERSIFT_ACCOUNTS_SECRET_KEY": key}).accounts.secret_key == key


def test_user_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "d").mkdir()
    cfg = tmp_path / "config.toml"
    cfg.write_text('[data]\ndir = "d"\n', encoding="utf-8")
    base = ["--config", str(cfg)]
    assert main(["user", "add", "Kim@Lab.example", "--name", "Kim", *base]) == 0
    out = capsys.readouterr().out
    # Not "one-time": it signs in until the member changes it, and the output says so.
    added, initial, advice = out.splitlines()
    assert added == "added kim@lab.example" and initial.startswith("initial password: ")
    assert advice == "it stays valid until they change it at /account, as they should"
    members = Members(tmp_path / "d")
    assert members.authenticate("kim@lab.example", initial.split(": ")[1]) is not None
    assert main(["user", "add", "kim@lab.example", *base]) == 1
    assert (
        capsys.readouterr().err
        == "papersift: error: there is already an account for kim@lab.example\n"
    )
    monkeypatch.setattr("sys.stdin", io.StringIO("my own long password\n"))
    assert main(["user", "reset", "kim@lab.example", "--password-stdin", *base]) == 0
    assert "password:" not in capsys.readouterr().out
    assert members.authenticate("kim@lab.example", "my own long password") is not None
    assert main(["user", "reset", "kim@lab.example", *base]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("new password: ")
    assert main(["user", "list", *base]) == 0
    created = members.existing("kim@lab.example").created[:10]
    assert capsys.readouterr().out.splitlines() == [  # a table: "off" said what?
        "email            name  confirmed  digest  researcher  created",
        f"kim@lab.example  Kim   yes        off     -           {created}",
    ]
    assert main(["user", "remove", "nobody@lab.example", *base]) == 1
    assert (
        capsys.readouterr().err
        == "papersift: error: there is no account for 'nobody@lab.example'\n"
    )
    # Not at the first word: on no terminal to ask on, only with --yes.
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["user", "remove", "kim@lab.example", *base]) == 1
    assert capsys.readouterr().err == (
        "papersift: error: `user remove` deletes kim@lab.example (Kim) and their library (0 "
        "saved papers): add --yes to confirm (standard input is no terminal to ask on)\n"
    )
    assert members.by_email("kim@lab.example") is not None
    assert main(["user", "remove", "kim@lab.example", "--yes", *base]) == 0
    assert members.all() == []
    assert stat.S_IMODE(os.stat(tmp_path / "d" / "members.sqlite").st_mode) == 0o600


def test_a_removed_accounts_session_never_signs_in_another(
    engine: SearchEngine, built_config: Config, tmp_path: Path
) -> None:
    """A cookie kept from a removed account is refused, even when the next account gets
    its id (a file from before version 4 reuses ids); new files never reuse them."""
    for root, reused in ((tmp_path / "old", True), (tmp_path / "new", False)):
        if reused:
            version_3_file(root)
        add_member(root, "ada@lab.example")
        add_member(root, "other@lab.example", "Other")
        app = create_app(engine, member_config(built_config, root))
        with TestClient(app, follow_redirects=False) as c:
            assert sign_in(c, "other@lab.example").status_code == 303
            kept = c.cookies[COOKIE]
            members = Members(root)
            gone = members.remove("other@lab.example")
            mallory = members.add("mallory@lab.example", PASSWORD, "Mallory")
            members.close()
            assert (mallory.id == gone.id) is reused
            c.cookies.clear()
            c.cookies.set(COOKIE, kept)
            page = c.get("/library")
            assert page.status_code == 303 and page.headers["location"].endswith("&expired=1")


def test_signing_out_ends_the_session_on_the_server(
    engine: SearchEngine, built_config: Config, members_root: Path
) -> None:
    """A copy of the cookie taken before signing out no longer signs in; the member's
    other sessions go on."""
    add_member(members_root, "kai@lab.example")
    app = create_app(engine, member_config(built_config, members_root))
    with (
        TestClient(app, follow_redirects=False) as c,
        TestClient(app, follow_redirects=False) as elsewhere,
    ):
        assert sign_in(c, "kai@lab.example").status_code == 303
        assert sign_in(elsewhere, "kai@lab.example").status_code == 303
        copy = c.cookies[COOKIE]
        page = c.get("/library")
        out = c.post("/signout", data={"csrf": csrf_of(page, "form[action='/library/tags']")})
        assert out.status_code == 303 and c.get("/library").status_code == 303
        c.cookies.clear()
        c.cookies.set(COOKIE, copy)
        replayed = c.get("/library")
        assert replayed.status_code == 303 and replayed.headers["location"].endswith("&expired=1")
        assert elsewhere.get("/library").status_code == 200


def test_signed_out_sessions_are_kept_until_they_expire(tmp_path: Path) -> None:
    from papersift.engine.signouts import SignOuts

    members = Members(tmp_path)
    try:
        signouts = SignOuts(members)
        now = int(time.time())
        signouts.end("old", now - 100, max_age=3600)
        signouts.end("new", now, max_age=60)  # "old" is past 60 seconds: dropped
        assert signouts.ended("new") and not signouts.ended("old")
        assert members.query("SELECT sid FROM signouts") == [("new",)]
    finally:
        members.close()
