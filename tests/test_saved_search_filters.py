"""Saved searches keep the search page's filters (mode, categories, dates, researchers): the
"save it for your e-mail digest" link carries them, the settings form saves them, the digest
runs them (against the real index, sent through a real SMTP server), and a members file
from before them (version 4) opens with its saved searches as they were."""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import replace
from datetime import date
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.members import Members
from papersift.engine.members_schema import SCHEMA_VERSION
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.subscriptions import Subscriptions
from papersift.indexer.digest import compose, window_for
from papersift.indexer.digest_run import run_digests
from tests.member_kit import add_member, member_config, sign_in
from tests.smtp_kit import mail_config, parts, smtp_server
from tests.web_helpers import parse_html

pytest_plugins = ["tests.member_fixtures"]

TODAY = date(2026, 7, 6)  # a Monday: the weekly window is 2026-06-29 .. 2026-07-05
WEEK = window_for("weekly", TODAY)
QUERY = "language models"
PAPERS = 10  # [mail] papers: one section's length


def narrowing_category(engine: SearchEngine) -> tuple[str, list[str], list[str]]:
    """A category that some, not all, of the week's keyword matches have: it, the ids of
    the matches in it and of all the matches (newest first, one section's worth)."""
    week = Filters(date_from=WEEK.start, date_to=WEEK.end)
    base = SearchRequest(query=QUERY, mode="keyword", filters=week, sort="newest",
                         page_size=PAPERS)  # fmt: skip
    every = [h.paper for h in engine.search(base).hits]
    for cat, _ in Counter(c for p in every for c in p.categories).most_common():
        within = engine.search(replace(base, filters=replace(week, categories=(cat,))))
        ids = [h.paper.arxiv_id for h in within.hits]
        if 0 < len(ids) < len(every):
            return cat, ids, [p.arxiv_id for p in every]
    pytest.fail("the week's matches all share their categories: nothing to narrow")


def save_from(site: TestClient, page: str) -> tuple[str, dict[str, list[str]]]:
    """Follow a search page's "save it for your e-mail digest" link and post its form as it
    is; the link's href and what the form held."""
    (link,) = parse_html(site.get(page).text).cssselect("a.save-search")
    href = str(link.get("href"))
    (form,) = parse_html(site.get(href).text).cssselect("form.add-search")
    fields: dict[str, list[str]] = {}
    for field in form.cssselect("input"):
        fields.setdefault(str(field.get("name")), []).append(str(field.get("value") or ""))
    answer = site.post("/account/digest", data={**fields, "action": "add_search"})
    assert answer.status_code == 303, answer.text
    return href, fields


def query_of(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def test_a_saved_search_keeps_its_filters_into_the_digest(
    site: TestClient, engine: SearchEngine, built_config: Config, members_root: Path
) -> None:
    cat, narrowed, every = narrowing_category(engine)
    add_member(members_root, "lee@lab.example")
    assert sign_in(site, "lee@lab.example").status_code == 303
    page = f"/search?q=language+models&category={cat}&from=2020&mode=keyword&page_size=5"
    href, fields = save_from(site, page)
    assert query_of(href) == {"q": [QUERY], "mode": ["keyword"], "category": [cat],
                              "from": ["2020-01-01"]}  # fmt: skip
    assert fields["category"] == [cat] and fields["mode"] == ["keyword"]
    described = f"“{QUERY}” in {cat}, from 2020-01-01, keyword search"
    listed = parse_html(site.get("/account/digest").text)
    (item,) = listed.cssselect("ul.saved-searches li a")
    assert item.text_content() == described
    assert query_of(str(item.get("href"))) == {**query_of(href), "sort": ["newest"]}
    assert site.get(str(item.get("href"))).status_code == 200

    members = Members(members_root)
    try:
        who = members.existing("lee@lab.example")
        subs = Subscriptions(members)
        (saved,) = subs.searches(who.id)
        assert (saved.query, saved.mode, saved.filters.categories) == (QUERY, "keyword", (cat,))
        subs.choose(who.id, set(), {saved.id}, set())
        members.update(who.id, digest="weekly")
    finally:
        members.close()
    config = mail_config(member_config(built_config, members_root), port=0)
    with smtp_server() as (box, port):
        config = replace(config, mail=replace(config.mail, port=port, papers=PAPERS))
        assert run_digests(engine, config, today=TODAY).sent == 1
    _, rich = parts(box.messages[0])
    tree = parse_html(rich)
    assert [h.text_content() for h in tree.cssselect("h2")] == [f"New for {described}"]
    ids = [urlsplit(a.get("href")).path.removeprefix("/papers/")[:10]
           for a in tree.cssselect("li > a")]  # fmt: skip
    assert ids == narrowed and ids != every  # the category and the mode were applied
    (whole,) = [a for a in tree.cssselect("p a") if a.text_content() == "All of them"]
    assert query_of(str(whole.get("href"))) == {
        "q": [QUERY], "mode": ["keyword"], "category": [cat], "sort": ["newest"],
        "from": [WEEK.start.isoformat()], "to": [WEEK.end.isoformat()],
        "autocorrect": ["0"],  # the list as mailed: the words as typed
    }  # fmt: skip


def test_a_filtered_browse_is_saved_and_bad_filters_are_a_400(
    site: TestClient, engine: SearchEngine, members_root: Path
) -> None:
    """A browse with filters and no words gets the link too; a link with a filter this index
    cannot match says so; an old ``?search=`` link still fills the words in."""
    cat, _, _ = narrowing_category(engine)
    add_member(members_root, "lee@lab.example")
    assert sign_in(site, "lee@lab.example").status_code == 303
    href, _ = save_from(site, f"/search?category={cat}")
    assert query_of(href) == {"category": [cat]}
    (item,) = parse_html(site.get("/account/digest").text).cssselect("ul.saved-searches li a")
    assert item.text_content() == f"all papers in {cat}"
    bad = site.get("/account/digest", params={"q": "x", "category": "zz.NOPE"})
    assert bad.status_code == 400 and _error(bad.text).startswith("Unknown category 'zz.NOPE'")
    posted = site.post("/account/digest", data={"action": "add_search", "query": "x",
                       "from": "2020-13", "csrf": _csrf(site)})  # fmt: skip
    assert posted.status_code == 400 and _error(posted.text).startswith("'from' must be a date")
    old = parse_html(site.get("/account/digest", params={"search": "word & sense"}).text)
    assert old.cssselect("input#query")[0].get("value") == "word & sense"
    assert not old.cssselect("form.add-search input[type=hidden][name=category]")


def _error(page: str) -> str:
    return str(parse_html(page).cssselect(".notice.error")[0].text_content())


def _csrf(site: TestClient) -> str:
    page = parse_html(site.get("/account/digest").text)
    return str(page.cssselect("form.add-search input[name=csrf]")[0].get("value"))


def test_saved_dates_narrow_the_window(engine: SearchEngine, members_root: Path) -> None:
    """A saved search's dates keep the part of the window inside them: one that ended
    before the window has nothing new, one that began before it is the window's."""
    cat, narrowed, _ = narrowing_category(engine)
    add_member(members_root, "lee@lab.example")
    members = Members(members_root)
    try:
        who = members.existing("lee@lab.example")
        subs = Subscriptions(members)
        for start, end, expected in (
            (date(2020, 1, 1), None, narrowed),
            (None, WEEK.start.replace(day=WEEK.start.day - 1), []),
        ):
            for s in subs.searches(who.id):
                subs.remove_search(who.id, s.id)
            filters = Filters(categories=(cat,), date_from=start, date_to=end)
            saved = subs.add_search(who.id, QUERY, "keyword", filters)
            subs.choose(who.id, set(), {saved.id}, set())
            digest = compose(engine, subs, who, WEEK, PAPERS)
            assert [p.arxiv_id for s in digest.sections for p in s.papers] == expected
    finally:
        members.close()


def test_a_version_4_file_keeps_its_saved_searches(tmp_path: Path) -> None:
    """Saved searches from before filters (words unique per member) open as searches
    without filters, same ids and choices; the same words with filters are a new one."""
    add_member(tmp_path, "lee@lab.example")
    db = sqlite3.connect(tmp_path / "members.sqlite")
    db.executescript(
        "DROP TABLE searches; CREATE TABLE searches (id INTEGER PRIMARY KEY, "
        "user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE, query TEXT NOT NULL, "
        "in_digest INTEGER NOT NULL DEFAULT 1, created TEXT NOT NULL, UNIQUE (user_id, query)); "
        "INSERT INTO searches (id, user_id, query, in_digest, created) SELECT 7, id, "
        "'mirror symmetry', 0, '2026-07-01T00:00:00+00:00' FROM users; "
        "PRAGMA user_version = 4;"
    )
    db.close()
    members = Members(tmp_path)
    try:
        who = members.existing("lee@lab.example")
        subs = Subscriptions(members)
        (old,) = subs.searches(who.id)
        assert (old.id, old.query, old.in_digest, old.mode) == (7, "mirror symmetry", False, None)
        assert old.filters.empty and members.query("PRAGMA user_version") == [(SCHEMA_VERSION,)]
        narrowed = subs.add_search(
            who.id, "mirror symmetry", filters=Filters(categories=("hep-th",))
        )
        assert narrowed.id != old.id and len(subs.searches(who.id)) == 2
        assert subs.add_search(who.id, "mirror symmetry").id == old.id  # no duplicate
    finally:
        members.close()


def test_a_saved_search_runs_as_typed(engine: SearchEngine, members_root: Path) -> None:
    """A standing query lists what matches it as typed, as its feed does: one no paper
    matches is not answered with its did-you-mean's papers ("langauge modles" mailed the
    papers of "language models")."""
    typo = "langauge modles"
    week = Filters(date_from=WEEK.start, date_to=WEEK.end)
    asked = SearchRequest(query=typo, mode="keyword", filters=week, sort="newest")
    assert engine.search(asked).corrected is not None  # the page would show "language models"
    add_member(members_root, "kim@lab.example")
    members = Members(members_root)
    try:
        who = members.existing("kim@lab.example")
        subs = Subscriptions(members)
        saved = subs.add_search(who.id, typo, "keyword", Filters())
        subs.choose(who.id, set(), {saved.id}, set())
        assert compose(engine, subs, who, WEEK, PAPERS).sections == ()
    finally:
        members.close()
