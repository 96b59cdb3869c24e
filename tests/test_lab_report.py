"""Declared lab members no paper was anchored on: why, and what to do, as ``papersift
doctor``, the admin page and the home page say it, on real 1990s records."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from papersift import doctor
from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.search import SearchEngine
from papersift.indexer.build import import_files
from papersift.indexer.identity_refresh import refresh_people
from papersift.indexer.scheduler import JobRunner
from papersift.server.app import create_app
from tests.test_identity import ALG_GEOM
from tests.test_lab import BORNMANN, MUTZ, OTHER, lab_config, members_toml
from tests.test_web_pages import page
from tests.web_helpers import parse_html

TOKEN = "s3cret-admin-token"


def _config(root: Path, *members: tuple[str, str]) -> Config:
    lab = '[lab]\nname = "Algebraic Geometry"\n' + members_toml(*members)
    return lab_config(root, lab, server={"admin_token": TOKEN})


def _indexed(root: Path, *members: tuple[str, str]) -> Config:
    config = _config(root, *members)
    data = DataDir(config)
    import_files(data, [ALG_GEOM])
    refresh_people(data)
    data.close()
    return config


def _lab_row(config: Config) -> doctor.Check:
    return {c.name: c for c in doctor.diagnose(config)}["lab members"]


def test_doctor_says_why_a_member_has_no_papers(tmp_path: Path) -> None:
    """Twelve papers name "R. Pandharipande", but a declared name of initials only anchors
    only with evidence: doctor says so, and names the spelled-out form two papers use."""
    config = _indexed(
        tmp_path,
        ("R. Pandharipande", OTHER),
        ("Maxim Kontsevich", BORNMANN),  # spelled out as papers write it: linked
        ("Josiah Carberry", MUTZ),  # on no paper here
    )
    row = _lab_row(config)
    assert row.status == "WARN"
    assert "Kontsevich" not in row.detail
    assert f"R. Pandharipande ({OTHER}) has no papers: papers name 'R. Pandharipande' " in (
        row.detail
    )
    assert "(12 papers), 'Rahul Pandharipande' (2 papers), but a name of initials only" in (
        row.detail
    )
    assert f"Josiah Carberry ({MUTZ}) has no papers: no paper in the store has an author" in (
        row.detail
    )
    assert "declare the name as papers spell it out ('Rahul Pandharipande', 2 papers)" in row.fix
    assert "set [lab] ror and run `papersift enrich`" in row.fix
    # Declared as two papers spell it: not applied until identities are refreshed ...
    config = _config(tmp_path, ("Rahul Pandharipande", OTHER), ("Maxim Kontsevich", BORNMANN))
    row = _lab_row(config)
    assert row.detail == (
        f"Rahul Pandharipande ({OTHER}) has no papers: the [lab] declaration changed since "
        "researcher identities were last refreshed"
    )
    assert "run `papersift index`" in row.fix
    # ... then linked.
    with DataDir(config) as data:
        refresh_people(data)
        assert data.people.with_orcid(OTHER)[0][1:] == ("Rahul Pandharipande", 2)
    row = _lab_row(config)
    assert (row.status, row.detail) == ("OK", "all 2 linked to their papers")


def test_admin_page_explains_and_home_says_no_papers_linked(tmp_path: Path) -> None:
    config = _indexed(tmp_path, ("R. Pandharipande", OTHER), ("Maxim Kontsevich", BORNMANN))
    engine = SearchEngine(DataDir(config))
    app = create_app(engine, config)
    app.state.jobs = JobRunner(engine, config)  # not started: the page only reads it
    with TestClient(app) as client:
        admin = client.get("/admin", headers={"Authorization": f"Bearer {TOKEN}"})
        assert admin.status_code == 200
        doc = parse_html(admin.text)
        (item,) = doc.cssselect("ul.lab-unlinked li")
        assert item.get("data-orcid") == OTHER
        text = " ".join(item.text_content().split())
        assert text.startswith(f"R. Pandharipande ({OTHER}): papers name 'R. Pandharipande'")
        assert "To link them: declare the name as papers spell it out" in text
        counts = {}
        for li in page(client, "/").cssselect(".lab-members li"):
            count = li.cssselect(".count")[0].text_content()
            counts[li.text_content().replace(count, "").strip()] = count
        theirs = engine.people.with_orcid(BORNMANN)
        assert counts == {
            "R. Pandharipande": "no papers linked",
            "Maxim Kontsevich": f"{sum(n for _, _, n in theirs)} papers",
        }
    engine.close()
