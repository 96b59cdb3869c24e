"""`papersift backup` while another thread imports: the copy opens, agrees and searches."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from papersift import doctor
from papersift.backup import BackupError, backup
from papersift.cli import main
from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine
from papersift.indexer.build import embed_backlog, import_files
from tests.corpus import demo_records, make_config, write_jsonl

CHUNK = 150


def _chunks(root: Path, n: int) -> list[Path]:
    records = demo_records()
    return [
        write_jsonl(root / f"chunk{i}.jsonl", records[i * CHUNK : (i + 1) * CHUNK])
        for i in range(n)
    ]


@pytest.mark.slow
def test_backup_while_importing_is_consistent(fresh_config: Config, tmp_path: Path) -> None:
    chunks = _chunks(tmp_path, 6)
    data = DataDir(fresh_config)
    first = import_files(data, chunks[:1]).added
    embed_backlog(data, limit=16)  # a vector segment to copy as well
    stop = threading.Event()
    imported: list[int] = []

    def writer() -> None:  # every import_files call commits Tantivy and raises lexical_seq
        for path in chunks[1:]:
            imported.append(import_files(data, [path]).added)
            if stop.is_set() and len(imported) >= 2:
                return

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        report = backup(fresh_config, tmp_path / "copy" / "data")
    finally:
        stop.set()
        thread.join()
        data.close()
    assert report.papers >= first and report.attempts >= 1

    copy = make_config(tmp_path / "copy")  # its data directory is copy/data
    engine = open_engine(copy)  # replays what the copied Tantivy commit had not absorbed
    try:
        store = engine.data.store
        assert store.count() == report.papers
        assert engine.data.lexical.num_docs == store.count()
        newest = store.get([store.count()])[store.count()]
        hits = engine.search(SearchRequest(query=f'"{newest.title}"', mode="keyword")).hits
        assert newest.arxiv_id in [h.paper.arxiv_id for h in hits]
        embedded = next(
            d for d in range(1, store.count() + 1) if engine.data.vectors.vector(d) is not None
        )
        title = store.get([embedded])[embedded].title  # a paper whose vector was copied
        semantic = engine.search(SearchRequest(query=title, mode="semantic"))
        assert store.get([embedded])[embedded].arxiv_id in [h.paper.arxiv_id for h in semantic.hits]
    finally:
        engine.close()
    checks = {c.name: c for c in doctor.diagnose(copy)}
    assert doctor.ok(list(checks.values())), doctor.table(list(checks.values()))
    assert checks["lexical index"].status == "OK"
    assert checks["vectors"].status == "OK" and "16 vectors" in checks["vectors"].detail


def test_backup_cli_and_refusals(
    fresh_config: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conf = str(fresh_config.base_dir / "config.toml")
    with pytest.raises(BackupError, match="no papersift data directory"):
        backup(fresh_config, tmp_path / "b0")
    data = DataDir(fresh_config)
    added = import_files(data, _chunks(tmp_path, 1)).added
    data.close()
    assert main(["backup", "--config", conf, str(tmp_path / "b1")]) == 0
    assert f"backed up {added} papers" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "b1").iterdir()) == [
        "lexical",
        "manifest.json",
        "papers.sqlite",
    ]
    assert main(["backup", "--config", conf, str(tmp_path / "b1")]) == 1  # not empty
    assert "exists and is not empty" in capsys.readouterr().err


def test_commit_during_the_store_copy_is_retried(
    fresh_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worst moment: Tantivy commits right after the store snapshot. Copying that newer
    commit would leave papers in Tantivy the store copy lacks; the backup must start again."""
    import papersift.backup as mod

    chunks = _chunks(tmp_path, 2)
    data = DataDir(fresh_config)
    first = import_files(data, chunks[:1]).added
    real = mod.backup_store
    calls: list[int] = []

    def store_then_commit(source: Path, target: Path) -> int:
        n = real(source, target)
        calls.append(n)
        if len(calls) == 1:
            import_files(data, chunks[1:])  # commits Tantivy and raises lexical_seq
        return n

    monkeypatch.setattr(mod, "backup_store", store_then_commit)
    try:
        report = backup(fresh_config, tmp_path / "copy" / "data")
        total = data.store.count()
    finally:
        data.close()
    assert calls[0] == first and report.attempts == 2 and report.papers == total
    copy = make_config(tmp_path / "copy")
    checks = doctor.diagnose(copy)
    assert {c.name: c for c in checks}["lexical index"].status == "OK", doctor.table(checks)


def test_backup_keeps_the_members_accounts_and_session_key(
    fresh_config: Config, tmp_path: Path
) -> None:
    """Accounts and libraries live beside the store (members.sqlite) and so does the session
    key: a restored copy signs the same members in, with the same key."""
    from papersift.engine.members import Members, load_secret

    data = DataDir(fresh_config)
    import_files(data, _chunks(tmp_path, 1))
    data.close()
    root = fresh_config.data_dir
    members = Members(root)
    members.add("ada@example.org", "correct horse battery", name="Ada")
    members.close()
    key = load_secret(root)
    backup(fresh_config, tmp_path / "copy" / "data")
    copy = make_config(tmp_path / "copy").data_dir
    restored = Members(copy)
    try:
        found = restored.authenticate("ada@example.org", "correct horse battery")
        assert found is not None and found.name == "Ada"
        assert restored.authenticate("ada@example.org", "wrong horse battery") is None
    finally:
        restored.close()
    assert load_secret(copy) == key
    assert (copy / "members.sqlite").stat().st_mode & 0o777 == 0o600


def test_a_bad_destination_is_one_line(
    fresh_config: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A destination that cannot be created (no such parent, a file, a file as parent) is one
    line and exit 1, not an OSError traceback."""
    conf = fresh_config.base_dir / "config.toml"
    data = DataDir(fresh_config)
    import_files(data, _chunks(tmp_path, 1))
    data.close()
    bad = {
        "/proc/nope": "cannot create backup destination /proc/nope: ",
        str(conf): "exists and is not a folder",
        str(conf / "sub"): f"cannot create backup destination {conf / 'sub'}: ",
    }
    for dest, message in bad.items():
        assert main(["backup", "--config", str(conf), dest]) == 1, dest
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_a_destination_inside_the_data_directory_is_refused(
    fresh_config: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Inside the data directory (directly or through a symlink), every later backup would
    copy the earlier one; a data directory of its own found there is not copied either."""
    conf = str(fresh_config.base_dir / "config.toml")
    root = fresh_config.data_dir
    data = DataDir(fresh_config)
    import_files(data, _chunks(tmp_path, 1))
    data.close()
    link = tmp_path / "link"
    link.symlink_to(root, target_is_directory=True)
    for dest in (root / "bk2", link / "bk3", root):
        assert main(["backup", "--config", conf, str(dest)]) == 1, dest
        assert "is inside the data directory" in capsys.readouterr().err
        assert not (root / "bk2").exists() and not (root / "bk3").exists()
    old = root / "old-backup"  # placed there by an older version
    assert main(["backup", "--config", conf, str(tmp_path / "b1")]) == 0
    (tmp_path / "b1").rename(old)
    (root / "enrich-cache").mkdir()
    (root / "enrich-cache" / "a.json").write_text("{}")
    assert main(["backup", "--config", conf, str(tmp_path / "b2")]) == 0
    assert not (tmp_path / "b2" / "old-backup").exists()
    assert (tmp_path / "b2" / "enrich-cache" / "a.json").is_file()


@pytest.mark.slow
def test_a_damaged_vector_file_is_copied_with_a_warning(
    fresh_config: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A vector segment that no longer opens is copied as it is (the backup is still the
    rest of the data) but named, so rotating backups do not keep it unnoticed; quarantined
    files are not copied."""
    data = DataDir(fresh_config)
    try:
        import_files(data, _chunks(tmp_path, 1))
        assert embed_backlog(data, limit=4) == 4
    finally:
        data.close()
    (seg,) = sorted((fresh_config.data_dir / "vectors").glob("*/seg-*.npz"))
    conf = str(fresh_config.base_dir / "config.toml")
    assert main(["backup", "--config", conf, str(tmp_path / "good")]) == 0
    assert "warning" not in capsys.readouterr().out
    seg.write_bytes(seg.read_bytes()[:500])
    (fresh_config.data_dir / "quarantine").mkdir()
    (fresh_config.data_dir / "quarantine" / "old.npz").write_bytes(b"x")
    assert main(["backup", "--config", conf, str(tmp_path / "bad")]) == 0
    out = capsys.readouterr().out
    assert f"warning: 1 vector file cannot be read ({seg.parent.name}/{seg.name})" in out
    assert "run `papersift doctor`" in out
    assert not (tmp_path / "bad" / "quarantine").exists()
    report = backup(fresh_config, tmp_path / "again")
    assert report.json()["damaged"] == [f"{seg.parent.name}/{seg.name}"]
