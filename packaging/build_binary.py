"""Build ``dist/papersift``, the one-file executable, unless the one there is current.

``make binary`` and ``tests/test_binary.py`` both run this script, so they build the same
thing the same way (``packaging/papersift.spec``). A content hash of everything that goes
into the binary (our sources and package data, this folder, the lock file, the installed
distributions, the Python version) is stamped next to it in ``dist/papersift.stamp``; a
matching stamp skips the build (minutes on 2 cores). Concurrent runs wait for each other.

Usage: ``python packaging/build_binary.py [--force] [--json]``
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "papersift.spec"
DIST = ROOT / "dist"
BINARY = DIST / "papersift"
STAMP = DIST / "papersift.stamp"
WORK = ROOT / "build" / "pyinstaller"
# Everything whose content ends up in the binary or decides how it is built.
SOURCE_DIRS = ("papersift", "engine", "indexer", "server", "feeds", "packaging")
SOURCE_FILES = ("pyproject.toml", "requirements.lock")


def source_hash() -> str:
    """SHA-256 over the sources, the lock file and the installed distributions."""
    h = hashlib.sha256(sys.version.encode())
    files = [ROOT / f for f in SOURCE_FILES]
    for top in SOURCE_DIRS:
        files += [
            p
            for p in (ROOT / top).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
        ]
    for path in sorted(files):
        h.update(str(path.relative_to(ROOT)).encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    h.update("\n".join(dists).encode())
    return h.hexdigest()


def read_stamp() -> dict[str, object]:
    try:
        data = json.loads(STAMP.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _ensure_pyinstaller() -> None:
    """Install PyInstaller at the locked version if the venv lacks it."""
    if importlib.util.find_spec("PyInstaller") is None:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "-c",
             str(ROOT / "requirements.lock"), "pyinstaller"],
            check=True,
        )  # fmt: skip


def build(*, force: bool = False) -> dict[str, object]:
    """Build the binary if it is missing or stale; returns the stamp (with ``built``)."""
    DIST.mkdir(exist_ok=True)
    WORK.mkdir(parents=True, exist_ok=True)
    with open(WORK.parent / "binary.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second run waits, then finds the stamp current
        digest = source_hash()
        stamp = read_stamp()
        if not force and BINARY.is_file() and stamp.get("hash") == digest:
            return {**stamp, "built": False}
        _ensure_pyinstaller()
        staging = WORK.parent / "dist-staging"
        shutil.rmtree(staging, ignore_errors=True)
        start = time.monotonic()
        cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
               "--distpath", str(staging), "--workpath", str(WORK), str(SPEC)]  # fmt: skip
        if force:
            cmd.insert(3, "--clean")
        subprocess.run(cmd, check=True, cwd=ROOT)
        seconds = time.monotonic() - start
        STAMP.unlink(missing_ok=True)  # never a current stamp beside a half-replaced binary
        os.replace(staging / "papersift", BINARY)
        stamp = {
            "hash": digest,
            "build_seconds": round(seconds, 1),
            "bytes": BINARY.stat().st_size,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        STAMP.write_text(json.dumps(stamp, indent=2) + "\n", encoding="utf-8")
        return {**stamp, "built": True}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="rebuild from scratch")
    parser.add_argument("--json", action="store_true", help="print the stamp as JSON")
    parser.add_argument(
        "--check", action="store_true", help="only say whether dist/papersift is current"
    )
    args = parser.parse_args()
    if args.check:
        current = BINARY.is_file() and read_stamp().get("hash") == source_hash()
        print(f"{BINARY.relative_to(ROOT)}: {'current' if current else 'missing or stale'}")
        return 0 if current else 1
    result = build(force=args.force)
    if args.json:
        print(json.dumps(result))
    else:
        size = int(str(result["bytes"])) / 2**20
        what = "built" if result["built"] else "up to date (content hash matches)"
        print(f"{BINARY.relative_to(ROOT)}: {what}, {size:.1f} MiB, "
              f"last build {result['build_seconds']} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
