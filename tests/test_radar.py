"""The lab radar's standing lists over the real app: private RSS feeds at token URLs
(regenerated, revoked, wrong), the home page's "For you" and "For this lab" sections."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import feedparser
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.core.paper import Paper
from papersift.core.setting_parsers import LabMember
from papersift.engine.datadir import DataDir
from papersift.engine.members import Members
from papersift.engine.recommend import recommend
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.identity_refresh import refresh_people
from papersift.indexer.snapshot import record_to_paper
from papersift.server.app import create_app
from tests.corpus import make_config, sample_records
from tests.member_kit import add_member, csrf_of, member_config, sign_in, version_3_file
from tests.web_helpers import parse_html

pytest_plugins = ["tests.member_fixtures"]
ORCID = "0000-0002-1825-0097"  # ORCID's documented example: checksum-valid
FAR_ORCID = "0000-0003-1234-5674"  # another (checksum-valid)


def older(engine: SearchEngine, query: str, n: int) -> list[str]:
    req = SearchRequest(query=query, filters=Filters(date_to=date(2026, 5, 1)), page_size=n)
    return [h.paper.arxiv_id for h in engine.search(req).hits]


def feed_urls(client: TestClient) -> dict[tuple[str, str], str]:
    """The private feed addresses on the settings page, by (kind, ref)."""
    doc = parse_html(client.get("/account/digest").text)
    out = {}
    for li in doc.cssselect("ul.private-feeds li"):
        link = li.cssselect("a.feed-url")
        out[li.get("data-kind"), li.get("data-ref")] = link[0].get("href") if link else ""
    return out


def feed_action(client: TestClient, action: str, kind: str, ref: int = 0) -> None:
    page = client.get("/account/digest")
    answer = client.post("/account/digest", data={"csrf": csrf_of(page), "action": action,
                                                  "kind": kind, "ref": str(ref)})  # fmt: skip
    assert answer.status_code == 303, answer.text[:300]


def test_private_feeds(site: TestClient, engine: SearchEngine, members_root: Path) -> None:
    add_member(members_root, "lee@lab.example")
    seeds = older(engine, "retrieval augmented generation", 4)
    members = Members(members_root)
    try:
        from papersift.engine.library import Library

        library = Library(members)
        tag = library.ensure_tag(members.existing("lee@lab.example").id, "RAG")
        library.save(members.existing("lee@lab.example").id, tag.id, seeds)
    finally:
        members.close()
    assert sign_in(site, "lee@lab.example").status_code == 303
    assert feed_urls(site) == {("foryou", "0"): "", ("tag", str(tag.id)): ""}  # no lab here
    feed_action(site, "feed_new", "tag", tag.id)
    feed_action(site, "feed_new", "foryou")
    urls = feed_urls(site)
    tag_url, mine_url = urls["tag", str(tag.id)], urls["foryou", "0"]
    assert tag_url and mine_url and tag_url != mine_url
    reader = TestClient(site.app, base_url="http://testserver")  # a feed reader: no session
    answer = reader.get(tag_url)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith(
        "application/rss+xml"
    )
    assert answer.headers["cache-control"].startswith("private")
    feed = feedparser.parse(answer.content)
    got = [e.link.rsplit("/papers/", 1)[1][:10] for e in feed.entries]
    expected = recommend(engine, seeds, None, 1, 50)
    assert got and got == [h.paper.arxiv_id for h in expected.hits]  # seeds never in it
    assert reader.get(mine_url).status_code == 200
    # A new address revokes the old; revoking ends the new one; wrong ones are 404s.
    feed_action(site, "feed_new", "tag", tag.id)
    fresh = feed_urls(site)["tag", str(tag.id)]
    assert fresh != tag_url and reader.get(tag_url).status_code == 404
    assert reader.get(fresh).status_code == 200
    feed_action(site, "feed_revoke", "tag", tag.id)
    assert reader.get(fresh).status_code == 404 and feed_urls(site)["tag", str(tag.id)] == ""
    key, _, secret = mine_url.rsplit("/", 1)[1].removesuffix(".xml").partition(".")
    wrong_last = "y" if secret.endswith("x") else "x"  # a secret may end in "x" already
    for bad in (f"{key}.{secret[:-1]}{wrong_last}", key, f".{secret}", "x" * 300, "a.b"):
        assert reader.get(f"/feeds/private/{bad}.xml").status_code == 404, bad
    assert reader.get("/feeds/private/%00.xml").status_code == 400  # the URL guard's answer
    assert reader.get(mine_url).status_code == 200  # the other feed is untouched


def make_tag(client: TestClient, name: str) -> int:
    page = client.get("/library")
    made = client.post("/library/tags", data={"csrf": csrf_of(page, "form[action='/library/tags']"),
                                              "name": name})  # fmt: skip
    assert made.status_code == 303
    return int(made.headers["location"].rsplit("/", 1)[1])


def test_a_deleted_tags_feed_never_answers_again(
    engine: SearchEngine, built_config: Config, tmp_path: Path
) -> None:
    """Deleting a tag deletes its feed address; a later tag never inherits one, even where
    tag ids are reused (files from before version 4) and a token was left behind."""
    seeds = older(engine, "retrieval augmented generation", 3)
    for root, reused in ((tmp_path / "old", True), (tmp_path / "new", False)):
        if reused:
            version_3_file(root)
        add_member(root, "lee@lab.example")
        app = create_app(engine, member_config(built_config, root))
        with TestClient(app, base_url="http://testserver", follow_redirects=False) as c:
            assert sign_in(c, "lee@lab.example").status_code == 303
            first = make_tag(c, "Old")
            feed_action(c, "feed_new", "tag", first)
            url = feed_urls(c)["tag", str(first)]
            assert c.get(url).status_code == 200
            page = c.get(f"/library/{first}")
            deleted = c.post(f"/library/{first}/delete", data={"csrf": csrf_of(page)})
            assert deleted.status_code == 303 and c.get(url).status_code == 404
            members = Members(root)
            left = members.query("SELECT COUNT(*) FROM feed_tokens WHERE kind = 'tag'")
            who = members.existing("lee@lab.example")
            if reused:  # a token the old code left behind, as an old file may hold
                members.query(
                    "INSERT OR IGNORE INTO feed_tokens (key, secret, user_id, kind, ref, created) "
                    "VALUES (?, ?, ?, 'tag', ?, '2026-01-01')",
                    (*url.rsplit("/", 1)[1].removesuffix(".xml").split("."), who.id, first),
                )
            members.close()
            assert left == [(0,)]
            second = make_tag(c, "New")
            assert (second == first) is reused
            members = Members(root)
            from papersift.engine.library import Library

            Library(members).save(who.id, second, seeds)
            members.close()
            assert c.get(url).status_code == 404
            assert feed_urls(c)["tag", str(second)] == ""


def test_home_for_you(site: TestClient, engine: SearchEngine, members_root: Path) -> None:
    anonymous = site.get("/")
    assert anonymous.status_code == 200 and not parse_html(anonymous.text).cssselect(".for-you")
    assert "private" not in anonymous.headers["cache-control"]
    add_member(members_root, "lee@lab.example")
    assert sign_in(site, "lee@lab.example").status_code == 303
    empty = site.get("/")
    (section,) = parse_html(empty.text).cssselect("section.for-you")
    assert "Save papers to your library" in " ".join(section.text_content().split())
    assert empty.headers["cache-control"] == "private, no-store"
    seeds = older(engine, "retrieval augmented generation", 4)
    members = Members(members_root)
    try:
        from papersift.engine.library import Library

        library = Library(members)
        who = members.existing("lee@lab.example")
        library.save(who.id, library.ensure_tag(who.id, "A").id, seeds[:2])
        library.save(who.id, library.ensure_tag(who.id, "B").id, seeds[2:])
    finally:
        members.close()
    full = parse_html(site.get("/").text)
    (section,) = full.cssselect("section.for-you")
    ids = [s.text_content().removeprefix("arXiv:") for s in section.cssselect(".hit .arxiv-id")]
    expected = recommend(engine, seeds, None, 1, 5)  # the whole library seeds it
    assert ids and ids == [h.paper.arxiv_id for h in expected.hits]
    assert "ranked by a model of your 4 papers" in " ".join(section.text_content().split())


def test_home_for_you_nothing_close(
    site: TestClient, engine: SearchEngine, members_root: Path
) -> None:
    """A library of bibliometrics papers (digital libraries up to 2016) has nothing close
    among the window's new papers (language models): the section says so, lists none."""
    req = SearchRequest(filters=Filters(categories=("cs.DL",), date_to=date(2016, 12, 31)),
                        sort="newest", page_size=5)  # fmt: skip
    seeds = [h.paper.arxiv_id for h in engine.search(req).hits]
    add_member(members_root, "kim@lab.example")
    members = Members(members_root)
    try:
        from papersift.engine.library import Library

        library = Library(members)
        who = members.existing("kim@lab.example")
        library.save(who.id, library.ensure_tag(who.id, "Bibliometrics").id, seeds)
    finally:
        members.close()
    assert sign_in(site, "kim@lab.example").status_code == 303
    (section,) = parse_html(site.get("/").text).cssselect("section.for-you")
    found = recommend(engine, seeds, None, 1, 5)
    assert not found.hits and found.ranked > 50 and not section.cssselect(".hit")
    window = f"{found.date_from} .. {found.date_to}"
    text = " ".join(section.cssselect(".nothing-close")[0].text_content().split())
    assert (
        text == f"Nothing close to your 5 papers among the {found.ranked} new papers of {window}."
    )


def _anchored(p: Paper, name: str, orcid: str = ORCID) -> Paper:
    """The paper as enrichment leaves it when author ``name`` has the lab member's ORCID."""
    authors = tuple(replace(a, ids=(("orcid", orcid),)) if a.name == name else a
                    for a in p.authors)  # fmt: skip
    return replace(p, authors=authors)


def test_home_for_this_lab(tmp_path: Path, built_config: Config) -> None:
    papers = [record_to_paper(r) for r in sample_records()]
    # A member with a paper on retrieval-augmented generation: the window has papers close
    # to it. Another, on pipeline parallelism: it has none.
    member = next(p for p in papers if p.arxiv_id == "2503.14649").authors[0].name
    far = next(p for p in papers if p.arxiv_id == "2401.10241").authors[0].name
    papers = [_anchored(_anchored(p, member), far, FAR_ORCID) for p in papers]
    config = make_config(tmp_path, embedding={"float32_cache": False})
    lab = replace(config.lab, name="The Lab", members=(LabMember(member, ORCID),))
    config = replace(config, lab=lab)
    data = DataDir(config)
    data.store.upsert(papers)
    data.sync_lexical()
    refresh_people(data)
    engine = SearchEngine(data)
    try:
        own = [p.arxiv_id for p in papers if any(a.name == member for a in p.authors)]
        with TestClient(create_app(engine, config), follow_redirects=False) as client:
            doc = parse_html(client.get("/").text)
            (section,) = doc.cssselect("section.lab-picks")
            ids = [s.text_content().removeprefix("arXiv:")
                   for s in section.cssselect(".hit .arxiv-id")]  # fmt: skip
            expected = recommend(engine, own, None, 1, 5)
            assert ids and ids == [h.paper.arxiv_id for h in expected.hits]
            assert not set(ids) & set(own)
            assert "the members' own 1 paper" in " ".join(section.text_content().split())
            # The lab's private feed holds the same ranking.
            add_member(config.data_dir, "lee@lab.example")
            assert sign_in(client, "lee@lab.example").status_code == 303
            feed_action(client, "feed_new", "lab")
            url = feed_urls(client)["lab", "0"]
            reader = TestClient(client.app, base_url="http://testserver")
            entries = feedparser.parse(reader.get(url).content).entries
            lab_feed = [e.link.rsplit("/papers/", 1)[1][:10] for e in entries]
            assert lab_feed[:5] == ids
        # A lab whose members' papers have nothing close this window: the section says so.
        far_lab = replace(lab, members=(LabMember(far, FAR_ORCID),))
        with TestClient(create_app(engine, replace(config, lab=far_lab))) as client:
            (section,) = parse_html(client.get("/").text).cssselect("section.lab-picks")
            far_own = [p.arxiv_id for p in papers if any(a.name == far for a in p.authors)]
            found = recommend(engine, far_own, None, 1, 5)
            assert not found.hits and found.ranked and not section.cssselect(".hit")
            text = " ".join(section.cssselect(".nothing-close")[0].text_content().split())
            assert text.startswith(f"Nothing close to the members' own {len(far_own)} paper")
            assert f"among the {found.ranked} new papers of {found.date_from} .. " in text
        # A declared lab whose members have no papers here: the section says so (and the
        # admin what to do: tests/test_admin_view.py).
        nobody = replace(lab, members=(LabMember("Nobody Here", "0000-0001-5109-3700"),))
        with TestClient(create_app(engine, replace(config, lab=nobody))) as client:
            doc = parse_html(client.get("/").text)
            (section,) = doc.cssselect("section.lab-picks")
            assert not section.cssselect(".hit") and section.cssselect(".lab-picks-empty")
            assert "once papers by its members are in the index" in section.text_content()
    finally:
        engine.close()
