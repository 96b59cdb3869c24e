"""The "Save" and "Library" links only where someone can sign in (``server.library_offer``):
hidden on an install without accounts, shown to signed-out visitors once one exists (the
page cache never sends the other variant), and with sign-up open."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.members import Members
from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from papersift.server.library_offer import POLL
from papersift.server.page_cache import PageCache
from tests.member_kit import add_member, member_config
from tests.web_helpers import parse_html

pytest_plugins = ["tests.member_fixtures"]

PAPER = "/papers/2401.10241"


def offered(page: httpx.Response) -> dict[str, bool]:
    """Which of the library's ways in the page shows."""
    assert page.status_code == 200
    tree = parse_html(page.text)
    return {
        "save": bool(tree.cssselect("form.save[action='/library/save']")),
        "nav": bool(tree.cssselect("header.site nav a[href='/library']")),
    }


def pages(client: TestClient) -> tuple[list[bool], list[bool]]:
    """Whether Save shows on the search page (twice: the second from the page cache) and a
    paper page, and whether the Library link shows on those and the home page."""
    found = [offered(client.get("/search", params={"q": "retrieval"})) for _ in range(2)]
    found.append(offered(client.get(PAPER, follow_redirects=True)))
    home = offered(client.get("/"))
    assert not home["save"]  # the home page's lists have no Save buttons
    return [f["save"] for f in found], [f["nav"] for f in [*found, home]]


HIDDEN = ([False] * 3, [False] * 4)
SHOWN = ([True] * 3, [True] * 4)


def test_no_accounts_no_save_then_an_account_shows_it(site: TestClient, members_root: Path) -> None:
    site.get("/search", params={"q": "warm"})  # loads the vectors: a generation change
    cache: PageCache = site.app.state.page_cache  # type: ignore[attr-defined]
    hits = cache.hits
    assert pages(site) == HIDDEN
    assert cache.hits > hits  # the search page came from the cache the second time
    assert not (members_root / "members.sqlite").exists()  # the check created no file
    signin = parse_html(site.get("/signin").text).cssselect("p.no-account")[0].text_content()
    # A visitor is told to ask the admin; the command is the admin's (test_admin_view.py).
    assert "has none yet" in signin and "ask the lab's admin" in signin
    assert "papersift user add" not in signin
    # Neither page created the members file (it did: `papersift digest` then saw accounts).
    assert site.get("/signup").status_code in (200, 404)
    assert not (members_root / "members.sqlite").exists()

    add_member(members_root, "lee@lab.example")  # as `papersift user add` in another process
    time.sleep(POLL)
    assert pages(site) == SHOWN  # signed out: Save leads to the sign-in, which can be passed
    signin = parse_html(site.get("/signin").text).cssselect("p.no-account")[0].text_content()
    assert "has none yet" not in signin

    members = Members(members_root)
    try:
        members.remove("lee@lab.example")
    finally:
        members.close()
    time.sleep(POLL)
    assert pages(site) == HIDDEN


def test_open_sign_up_offers_save_without_accounts(
    engine: SearchEngine, built_config: Config, members_root: Path
) -> None:
    config = member_config(built_config, members_root, signup_domains="lab.example")
    with TestClient(create_app(engine, config), follow_redirects=False) as client:
        assert pages(client) == SHOWN
