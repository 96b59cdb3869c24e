"""Libraries over the real app: saving from results and paper pages, notes, removal, another
member's tag, BibTeX and RIS imports (matched, malformed, oversized)."""

from __future__ import annotations

import json
from pathlib import Path

import bibtexparser
import pytest
import rispy
from starlette.testclient import TestClient

from papersift.engine.search import SearchEngine
from papersift.indexer.bibimport import BibImportError, normalise_title, parse_library
from tests.member_kit import add_member, csrf_of, sign_in
from tests.web_helpers import parse_html

pytest_plugins = ["tests.member_fixtures"]


def message(text: str) -> str:
    found = parse_html(text).cssselect("[role=alert], .message")
    return " ".join(found[0].text_content().split()) if found else ""


def listed(page_text: str) -> list[str]:
    """arXiv ids of the result cards on a page, in order."""
    tree = parse_html(page_text)
    return [e.text_content().removeprefix("arXiv:") for e in tree.cssselect("li.hit .arxiv-id")]


@pytest.fixture
def member(site: TestClient, members_root: Path) -> TestClient:
    add_member(members_root, "lee@lab.example", "Lee")
    assert sign_in(site, "lee@lab.example").status_code == 303
    return site


def save(
    client: TestClient,
    arxiv_id: str,
    *,
    new_tag: str = "",
    tags: tuple[int, ...] = (),
    note: str = "",
) -> int:
    form_page = client.get("/library/save", params={"id": arxiv_id})
    assert form_page.status_code == 200
    data = {"csrf": csrf_of(form_page), "id": arxiv_id, "new_tag": new_tag, "note": note,
            "tag": [str(t) for t in tags]}  # fmt: skip
    done = client.post("/library/save", data=data)
    assert done.status_code == 303, message(done.text)
    return int(done.headers["location"].rsplit("/", 1)[1])


def test_save_from_results_and_paper_pages(member: TestClient) -> None:
    results = member.get("/search", params={"q": "retrieval"})
    forms = parse_html(results.text).cssselect("li.hit form.save")
    assert forms and forms[0].get("action") == "/library/save" and forms[0].get("method") == "get"
    first = forms[0].cssselect("input[name=id]")[0].get("value")
    paper = member.get("/papers/2401.10241", follow_redirects=True)
    assert parse_html(paper.text).cssselect("form.save input[name=id][value='2401.10241']")
    tag = save(member, first, new_tag="Retrieval", note="read <b>this</b>")
    tag2 = save(member, "2401.10241", tags=(tag,))
    assert tag2 == tag
    page = member.get(f"/library/{tag}")
    assert page.status_code == 200 and page.headers["cache-control"] == "private, no-store"
    assert set(listed(page.text)) == {first, "2401.10241"}
    notes = parse_html(page.text).cssselect("p.note")
    assert [n.text_content() for n in notes] == ["Note: read <b>this</b>"]  # escaped, as text
    oldest = listed(member.get(f"/library/{tag}", params={"sort": "oldest"}).text)
    newest = listed(member.get(f"/library/{tag}", params={"sort": "newest"}).text)
    assert oldest == newest[::-1]
    library = member.get("/library")
    links = parse_html(library.text).cssselect(f"ul.tags a[href='/library/{tag}']")
    assert links and links[0].text_content() == "Retrieval"
    # Remove one paper, then the tag.
    token = csrf_of(page, f"form[action='/library/{tag}/remove']")
    gone = member.post(f"/library/{tag}/remove", data={"csrf": token, "id": first})
    assert gone.status_code == 303
    assert listed(member.get(f"/library/{tag}").text) == ["2401.10241"]
    assert member.post(f"/library/{tag}/delete", data={"csrf": token}).status_code == 303
    assert member.get(f"/library/{tag}").status_code == 404


def test_bad_saves_are_clear_4xx(member: TestClient) -> None:
    assert member.get("/library/save", params={"id": "not an id"}).status_code == 400
    assert member.get("/library/save", params={"id": "9912.99999"}).status_code == 404
    page = member.get("/library/save", params={"id": "2401.10241"})
    token = csrf_of(page)
    none = member.post("/library/save", data={"csrf": token, "id": "2401.10241"})
    assert none.status_code == 400 and message(none.text) == "Choose a tag or name a new one."
    slash = member.post("/library/save", data={"csrf": token, "id": "2401.10241", "new_tag": "a/b"})
    assert slash.status_code == 400 and "no slash" in message(slash.text)


def test_a_refused_save_makes_no_tag(member: TestClient) -> None:
    """A save is checked whole before anything is written: a note too long leaves no new
    tag behind."""
    page = member.get("/library/save", params={"id": "2401.10241"})
    data = {"csrf": csrf_of(page), "id": "2401.10241", "new_tag": "Orphan", "note": "x" * 2001}
    refused = member.post("/library/save", data=data)
    assert refused.status_code == 400
    assert message(refused.text) == "A note has at most 2000 characters."
    library = member.get("/library")
    assert "Orphan" not in library.text and not parse_html(library.text).cssselect("ul.tags a")
    assert save(member, "2401.10241", new_tag="Orphan", note="x" * 2000) > 0


def test_another_members_tag_is_not_found(
    member: TestClient, members_root: Path, engine: SearchEngine
) -> None:
    tag = save(member, "2401.10241", new_tag="Mine")
    token = csrf_of(member.get(f"/library/{tag}"), f"form[action='/library/{tag}/remove']")
    add_member(members_root, "max@lab.example")
    with TestClient(member.app, follow_redirects=False) as other:
        sign_in(other, "max@lab.example")
        theirs = csrf_of(other.get("/library"), "form[action='/library/tags']")
        for path in (
            f"/library/{tag}",
            f"/library/{tag}/recommended",
            "/library/99999",
            "/library/x",
        ):
            page = other.get(path)
            assert page.status_code == 404, path
            assert message(page.text) == "You have no such tag; see /library for yours."
        for action in ("remove", "delete"):
            refused = other.post(
                f"/library/{tag}/{action}", data={"csrf": theirs, "id": "2401.10241"}
            )
            assert refused.status_code == 404
        pick = other.get("/library/save", params={"id": "2208.08124"})
        sneaky = other.post(
            "/library/save", data={"csrf": csrf_of(pick), "id": "2208.08124", "tag": str(tag)}
        )
        assert sneaky.status_code == 404
    assert listed(member.get(f"/library/{tag}").text) == ["2401.10241"]  # untouched
    assert token


BIB = r"""
@article{vaswani, title = {Some paper}, eprint = {2401.10241}, archivePrefix = {arXiv}}
@inproceedings{bytitle, title = {%s}}
@misc{bydoi, title = {Whatever}, doi = {%s}}
@article{nothere, title = {A paper this index does not have at all, surely}}
@article{broken, title = {unclosed
@book{url, title = {x}, url = {https://arxiv.org/abs/2208.08124v2}}
"""


def test_import_bibtex_reports_matches(member: TestClient, engine: SearchEngine) -> None:
    titled = engine.paper("2402.02447")
    assert titled is not None
    doi_paper = _paper_with_doi(engine)
    # Braces, case and punctuation differ from the stored title; it still matches.
    title = "{" + titled.title.upper().replace(" ", "  ") + "}."
    text = BIB % (title, doi_paper[1].upper() if doi_paper else "10.0/none")
    page = member.get("/library")
    token = csrf_of(page, "form[action='/library/import']")
    done = member.post(
        "/library/import",
        data={"csrf": token, "tag": "Zotero"},
        files={"file": ("my.bib", text.encode(), "application/x-bibtex")},
    )
    assert done.status_code == 200, message(done.text)
    rows = {
        tr.cssselect("td")[0].text_content(): (
            tr.cssselect("td")[1].text_content(),
            tr.cssselect("td")[2].text_content(),
        )
        for tr in parse_html(done.text).cssselect("#matches tbody tr")
    }
    assert rows["vaswani"] == ("2401.10241", "arXiv id")
    assert rows["bytitle"] == ("2402.02447", "title")
    assert rows["url"] == ("2208.08124", "arXiv id")
    assert rows["nothere"] == ("not found", "")
    if doi_paper:
        assert rows["bydoi"] == (doi_paper[0], "DOI")
    assert "broken" not in rows
    summary = parse_html(done.text).cssselect("main p")[0].text_content()
    assert "1 unreadable block skipped" in summary
    tag = parse_html(done.text).cssselect("main p a")[0].get("href")
    assert set(listed(member.get(tag).text)) >= {"2401.10241", "2402.02447", "2208.08124"}


def _paper_with_doi(engine: SearchEngine) -> tuple[str, str] | None:
    with engine.data.store.reading() as db:
        row = db.execute(
            "SELECT arxiv_id, doi FROM papers WHERE doi IS NOT NULL LIMIT 1"
        ).fetchone()
    return (str(row[0]), str(row[1])) if row else None


def test_import_ris(member: TestClient) -> None:
    ris = "TY  - JOUR\nTI  - Something\nUR  - https://arxiv.org/abs/2401.10241\nER  - \n"
    token = csrf_of(member.get("/library"), "form[action='/library/import']")
    done = member.post(
        "/library/import",
        data={"csrf": token},
        files={"file": ("lib.ris", ris.encode(), "text/plain")},
    )
    assert done.status_code == 200
    assert (
        "(RIS): 1 of 1 entries matched"
        in parse_html(done.text).cssselect("main p")[0].text_content()
    )


def test_an_unclosed_last_ris_record_is_reported(member: TestClient) -> None:
    """rispy drops a last record with no ``ER  -`` line; the report names it."""
    ris = (
        "TY  - JOUR\nTI  - Something\nUR  - https://arxiv.org/abs/2401.10241\nER  - \n\n"
        "TY  - JOUR\nTI  - Cut short\nUR  - https://arxiv.org/abs/2208.08124\n"
    )
    token = csrf_of(member.get("/library"), "form[action='/library/import']")
    done = member.post(
        "/library/import",
        data={"csrf": token},
        files={"file": ("lib.ris", ris.encode(), "text/plain")},
    )
    assert done.status_code == 200, message(done.text)
    doc = parse_html(done.text)
    summary = doc.cssselect("main p")[0].text_content()
    assert "(RIS): 1 of 1 entries matched" in summary and "1 unreadable block skipped" in summary
    skipped = [li.text_content() for li in doc.cssselect("main h2 + ul li")]
    assert skipped == ["line 6: no closing 'ER  -' line (file cut short?); entry skipped"]


def test_an_unclosed_ris_record_read_with_the_next_is_reported() -> None:
    ris = b"TY  - JOUR\nTI  - First\nTY  - JOUR\nTI  - Second\nER  - \n"
    fmt, entries, skipped = parse_library(ris, "lib.ris")
    assert (fmt, [e.title for e in entries]) == ("RIS", ["First"])
    assert skipped == ["line 1: no closing 'ER  -' line; read as one entry with line 3"]


@pytest.mark.parametrize(
    ("name", "body", "needle"),
    [
        ("x.txt", b"just some words, no entries", "neither BibTeX"),
        ("x.bib", b"just some words, no entries", "holds no entries"),
        ("x.bib", b"@article{broken, title = {unclosed", "holds no entries"),
        ("x.bib", "@article{a, title={é}}".encode("latin-1"), "not UTF-8"),
        ("x.ris", b"TY  - JOUR\nTI  - no end\n", "holds no entries"),
    ],
)
def test_malformed_imports_are_clear_400(
    member: TestClient, name: str, body: bytes, needle: str
) -> None:
    token = csrf_of(member.get("/library"), "form[action='/library/import']")
    done = member.post(
        "/library/import", data={"csrf": token}, files={"file": (name, body, "text/plain")}
    )
    assert done.status_code == 400
    assert needle in message(done.text) and message(done.text).startswith(f"Cannot import {name}:")
    assert member.get("/library").status_code == 200


def test_oversized_import_is_413(member: TestClient) -> None:
    token = csrf_of(member.get("/library"), "form[action='/library/import']")
    big = b"@misc{a, title={" + b"x" * (3 * 2**20) + b"}}"
    done = member.post(
        "/library/import", data={"csrf": token}, files={"file": ("big.bib", big, "text/plain")}
    )
    assert done.status_code == 413
    assert message(done.text) == (
        "The request body is too large: this address takes at most 2.1 MiB."
    )
    with pytest.raises(BibImportError, match="larger than 2 MiB"):
        parse_library(b"@" * (2 * 2**20 + 1))


def test_missing_file_or_csrf(member: TestClient) -> None:
    token = csrf_of(member.get("/library"), "form[action='/library/import']")
    assert member.post("/library/import", data={"csrf": token}).status_code == 400
    no_token = member.post(
        "/library/import", files={"file": ("a.bib", b"@misc{a, title={x}}", "text/plain")}
    )
    assert no_token.status_code == 403


def test_normalised_titles() -> None:
    assert normalise_title(r"{Attention} Is All You {N}eed!") == "attention is all you need"
    assert normalise_title(r"Rozw\'{o}j of R\"ontgen \& co") == normalise_title(
        "Rozwój of Röntgen and co"
    )


def test_a_tag_exports_as_bibtex_ris_and_csl_json(member: TestClient, members_root: Path) -> None:
    """The tag page links its export in each format; each file holds exactly the tag's
    papers (parsed back with the format's own library); others' tags stay 404."""
    tag = save(member, "2401.10241", new_tag="To cite")
    save(member, "2208.08124", tags=(tag,))
    page = parse_html(member.get(f"/library/{tag}").text)
    links = {a.text_content(): a.get("href") for a in page.cssselect("p.export a")}
    assert set(links) == {"BibTeX", "RIS", "CSL-JSON"}
    bib = member.get(links["BibTeX"])
    assert bib.status_code == 200 and "attachment" in bib.headers["content-disposition"]
    entries = bibtexparser.parse_string(bib.text).entries
    assert sorted(e.fields_dict["eprint"].value for e in entries) == ["2208.08124", "2401.10241"]
    ris = rispy.loads(member.get(links["RIS"]).text)
    assert len(ris) == 2
    csl = json.loads(member.get(links["CSL-JSON"]).text)
    assert len(csl) == 2 and all(item["title"] for item in csl)
    assert member.get(f"/library/{tag}/export", params={"format": "docx"}).status_code == 400
    add_member(members_root, "max@lab.example")
    with TestClient(member.app, follow_redirects=False) as other:
        sign_in(other, "max@lab.example")
        assert other.get(links["BibTeX"]).status_code == 404
