"""A relevance floor for recommendations: below which score is nothing recommended?

``engine.recommend`` ranked every paper of a window and returned the top N however unlike
the seeds they were. With the researchers, window and negatives of bench/recommend_eval.py
(its helpers, snapshot and data directory), this scores the window as the product does (the
tf-idf SVM of ``engine.recommend.fitted_scores``, checked against it) and tries floors on:

- the SVM's decision value itself;
- its rank among the negatives' (at or above a share of those random papers);
- its margin over the intercept relative to the seeds' (``engine.recommend.svm_floor``);
- the cosine of the paper's MiniLM vector to the seeds' centroid (``centroid_scores``;
  ``[search] recommend_cosine_floor``);
- margin and cosine together (what the product does);
- the cosine alone with the centroid ranking (the product's fallback).

Each floor is chosen on the tuning third: the one with the fewest papers above it that
keeps ``--keep`` of the own and of the co-author papers the ranking's top 50 holds, with 8
seeds and with 3 (a small tag). Reported on the other two thirds (8 and 3 seeds, and pairs of
them pooled: 16 seeds on two topics), on an off-topic window (1,000 papers of 2019 with no
cs, stat or eess category; the same seeds and negatives) and for researchers of those fields
(their latest papers of 2018-2019) against the cs window.

    .venv/bin/python bench/recommend_floor.py [--data DIR] [--write]

The scores are kept in ``DIR/floor-scores.npz``; a second run only reports.
"""

from __future__ import annotations

import argparse
import itertools
import math
import platform
import random
import re
import textwrap
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
from common import CACHE, load_average, log, machine_info, publish, table
from recommend_eval import SNAPSHOT, K, Researcher, _hash, build, choose, created, read_slice
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.svm import LinearSVC

from papersift.core.authors import parse_authors
from papersift.core.config import SearchConfig
from papersift.engine import recommend
from papersift.engine.recommend_terms import WindowTerms

CUT, DAYS = date(2026, 5, 8), 7  # the eval's defaults
OTHER_FIELDS = 1000  # papers of the off-topic window
OTHER_PEOPLE = 40  # researchers of other fields
NEW_ID = re.compile(r"\d{4}\.\d{5}")
VALUES = [round(x, 4) for x in np.arange(-0.3, 0.0501, 0.0025)]
MARGINS = [round(x, 3) for x in np.arange(0.0, 0.3, 0.01)]
SHARES = [0.9, 0.95, 0.96, 0.97, 0.98, 0.99, 0.995]
COSINES = [round(x, 2) for x in np.arange(0.3, 0.751, 0.01)]
Scores = dict[str, np.ndarray]


def other_field(record: dict[str, Any]) -> bool:
    """No cs, stat or eess category: a paper the eval's researchers are unlikely to want.
    (Some ids of the snapshot's 2019 papers lost a trailing zero, 1910.0218: left out.)"""
    cats = record["categories"].split()
    return bool(NEW_ID.fullmatch(record["id"])) and not any(
        c.startswith(("cs.", "stat.", "eess.")) for c in cats
    )


def other_fields(old: list[dict[str, Any]]) -> tuple[list[Researcher], list[str]]:
    """Researchers of other fields (latest 8 papers of 2018-2019) and an off-topic window
    (``OTHER_FIELDS`` 2019 papers of other fields, none of theirs)."""
    mine = [r for r in old if other_field(r)]
    by_key: dict[str, list[tuple[date, str]]] = defaultdict(list)
    for r in mine:
        for a in parse_authors(r["authors"]):
            by_key[a.key].append((created(r), r["id"]))
    keys = sorted((k for k, v in by_key.items() if len(v) >= 5), key=_hash)[:OTHER_PEOPLE]
    people = [Researcher(k, [p for _, p in sorted(by_key[k], reverse=True)[:8]], set())
              for k in keys]  # fmt: skip
    taken = {s for p in people for s in p.seeds}
    pool = sorted(r["id"] for r in mine if created(r).year == 2019 and r["id"] not in taken)
    return people, random.Random(19).sample(pool, OTHER_FIELDS)


def svm_for(
    text: dict[str, str], negatives: list[str], window: list[str]
) -> Callable[[Sequence[str]], dict[str, np.ndarray]]:
    """The decision values of the window, the negatives and the seeds, and the intercept,
    for a seed list, fitted as the product fits them: the window and negatives analysed
    once (``WindowTerms``), the seeds per request."""
    ids = list(dict.fromkeys([*window, *negatives]))
    docid = {pid: n for n, pid in enumerate(ids)}
    terms = WindowTerms({docid[p]: text[p] for p in ids})
    checked = False

    def score(seeds: Sequence[str]) -> dict[str, np.ndarray]:
        nonlocal checked
        seed_rows = [len(ids) + n for n in range(len(seeds))]
        extra = dict(zip(seed_rows, (text[s] for s in seeds), strict=True))
        rows = [*seed_rows, *(docid[p] for p in negatives), *(docid[p] for p in window)]
        counted = terms.counts(rows, extra)
        assert counted is not None
        # As recommend.fitted_scores, keeping what floors other than its need.
        x = TfidfTransformer(sublinear_tf=True).fit_transform(counted[0])
        y = np.r_[np.ones(len(seeds)), np.zeros(len(negatives))]
        model = LinearSVC(C=recommend.SVM_C, class_weight="balanced", max_iter=5000,
                          random_state=0).fit(x[: len(y)], y)  # fmt: skip
        values = np.asarray(model.decision_function(x), np.float64)
        got = {
            "svm": values[len(y) :],
            "neg": values[len(seeds) : len(y)],
            "seed": values[: len(seeds)],
            "b": np.array([model.intercept_[0]]),
        }
        if not checked:  # the product's own function gives the same values and floor
            product = recommend.fitted_scores(counted[0], len(seeds), len(negatives))
            assert np.allclose(product.scores, got["svm"])
            assert np.isclose(product.floor, recommend.svm_floor(got["seed"], float(got["b"][0])))
            checked = True
        return got

    return score


def share_floor(negatives: np.ndarray, share: float) -> float:
    """The least decision value at or above which ``share`` of the negatives score."""
    ordered = np.sort(negatives)
    return float(ordered[max(1, math.ceil(round(share * len(ordered), 9))) - 1])


def compute(snapshot: Path, folder: Path) -> tuple[Scores, dict[str, Any]]:
    """Every score the report reads, by scenario and researcher; and who is who."""
    records = read_slice(snapshot, date(2018, 1, 1))
    recent = [r for r in records if created(r) >= date(2025, 3, 1)]
    end = date.fromordinal(CUT.toordinal() + DAYS - 1)
    people, window_ids, negative_ids = choose(recent, CUT, end, 150, 5, 8, 500)
    others, off_window = other_fields([r for r in records if created(r) < date(2020, 1, 1)])
    test = [p for p in people if not p.tuning]
    pairs = [
        Researcher(
            f"{a.key}+{b.key}", a.seeds + b.seeds, a.own | b.own, a.coauthored | b.coauthored
        )
        for a, b in zip(test[::2], test[1::2], strict=False)
    ]
    log(f"{len(people)} researchers, {len(others)} of other fields, windows {len(window_ids)}"
        f" and {len(off_window)}")  # fmt: skip
    ids = set(window_ids) | set(negative_ids) | set(off_window)
    ids |= {s for p in [*people, *others] for s in p.seeds}
    data = build([r for r in records if r["id"] in ids], ids, folder)
    vec = {i: data.vectors.vector(d) for i in ids if (d := data.store.docid_of(i)) is not None}
    text = {r["id"]: f"{r['title']}. {r['abstract']}" for r in records if r["id"] in ids}
    dense = {"in": np.stack([vec[i] for i in window_ids]),
             "off": np.stack([vec[i] for i in off_window])}  # fmt: skip
    svm = {"in": svm_for(text, negative_ids, window_ids),
           "off": svm_for(text, negative_ids, off_window)}  # fmt: skip
    out: Scores = {}
    t0 = time.perf_counter()
    for tag, window, group, n_seeds in (
        ("in", "in", people, 8), ("in", "in", people, 3), ("mix", "in", pairs, 16),
        ("off", "off", people, 8), ("off", "off", people, 3),
        ("field", "in", others, 8), ("field", "in", others, 3),
    ):  # fmt: skip
        for p in group:
            seeds = p.seeds[:n_seeds]
            k = f"{tag}/{n_seeds}"
            for name, values in svm[window](seeds).items():
                out[f"{k}/{name}/{p.key}"] = values
            seed_vecs = np.stack([vec[s] for s in seeds])
            out[f"{k}/cos/{p.key}"] = recommend.centroid_scores(seed_vecs, dense[window])
        log(f"{tag}, {n_seeds} seeds: done ({time.perf_counter() - t0:.0f} s)")
    meta = {
        "window": np.array(window_ids), "keys": np.array([p.key for p in people]),
        "tuning": np.array([p.tuning for p in people]),
        "other_keys": np.array([p.key for p in others]),
        "pair_keys": np.array([p.key for p in pairs]),
    }  # fmt: skip
    for name, group in (("", people), ("pair_", pairs)):
        meta[name + "own"] = np.array([" ".join(sorted(p.own)) for p in group])
        meta[name + "co"] = np.array([" ".join(sorted(p.coauthored)) for p in group])
    return out, meta


@dataclass
class Family:
    name: str
    grid: list[dict[str, float]]
    by_centroid: bool = False  # the fallback: the centroid ranks, not the SVM


class Report:
    """Floors applied to the kept scores."""

    def __init__(self, scores: Scores, meta: Any) -> None:
        self.scores = scores
        self.window = [str(x) for x in meta["window"]]
        keys = [str(k) for k in meta["keys"]]
        self.tune = [k for k, t in zip(keys, meta["tuning"], strict=True) if t]
        self.test = [k for k, t in zip(keys, meta["tuning"], strict=True) if not t]
        self.others = [str(k) for k in meta["other_keys"]]
        self.pairs = [str(k) for k in meta["pair_keys"]]
        self.own: dict[str, set[str]] = {}
        self.co: dict[str, set[str]] = {}
        for group, prefix in ((keys, ""), (self.pairs, "pair_")):
            for k, own, co in zip(group, meta[prefix + "own"], meta[prefix + "co"], strict=True):
                self.own[k], self.co[k] = set(str(own).split()), set(str(co).split())
        self._floors: dict[tuple[str, float], float] = {}

    def passing(self, k: str, key: str, floor: dict[str, float]) -> np.ndarray:
        svm, cos = self.scores[f"{k}/svm/{key}"], self.scores[f"{k}/cos/{key}"]
        ok = np.ones(len(svm), bool)
        if "value" in floor:
            ok &= svm >= floor["value"]
        if "share" in floor:
            ok &= svm >= share_floor(self.scores[f"{k}/neg/{key}"], floor["share"])
        if "margin" in floor:
            seeds, b = self.scores[f"{k}/seed/{key}"], float(self.scores[f"{k}/b/{key}"][0])
            ok &= svm >= recommend.svm_floor(seeds, b, floor["margin"])
        if "cosine" in floor:
            ok &= cos >= floor["cosine"]
        return ok

    def kept(self, k: str, group: list[str], fam: Family, floor: dict[str, float],
             lenient: bool) -> tuple[float, int]:  # fmt: skip
        """Of the true papers in each ranking's top K, the share passing; and how many."""
        held = passed = 0
        for key in group:
            truth = (self.co if lenient else self.own)[key]
            ranking = self.scores[f"{k}/{'cos' if fam.by_centroid else 'svm'}/{key}"]
            ok = self.passing(k, key, floor)
            for i in np.argsort(-ranking, kind="stable")[:K]:
                if self.window[i] in truth:
                    held += 1
                    passed += bool(ok[i])
        return (passed / held if held else float("nan")), held

    def above(self, k: str, group: list[str], floor: dict[str, float]) -> np.ndarray:
        return np.array([int(self.passing(k, key, floor).sum()) for key in group])

    def choose(self, fam: Family, keep: float) -> dict[str, float]:
        """The floor with the fewest tuning papers above it that keeps ``keep``."""
        best: tuple[float, dict[str, float]] | None = None
        for floor in fam.grid:
            runs = [f"in/{n}" for n in (8, 3)]
            shares = [self.kept(r, self.tune, fam, floor, lenient)[0]
                      for r in runs for lenient in (False, True)]  # fmt: skip
            if min(shares) < keep:
                continue
            n = float(np.mean([self.above(r, self.tune, floor).mean() for r in runs]))
            if best is None or n < best[0]:
                best = (n, floor)
        assert best is not None, fam.name
        return best[1]

    def rows(self, fam: Family, floor: dict[str, float]) -> list[list[str]]:
        out = []
        runs = [
            (8, self.tune, "in", "8, tuning"),
            (3, self.tune, "in", "3, tuning"),
            (8, self.test, "in", "8"),
            (3, self.test, "in", "3"),
            (16, self.pairs, "mix", "16"),
        ]
        for n, group, tag, label in runs:
            k = f"{tag}/{n}"
            own, n_own = self.kept(k, group, fam, floor, False)
            co, n_co = self.kept(k, group, fam, floor, True)
            above = self.above(k, group, floor)
            cells = [
                f"{own:.3f} ({n_own})",
                f"{co:.3f} ({n_co})",
                f"{above.mean():.1f} / {np.median(above):.0f}",
                f"{np.mean(above == 0):.2f}",
            ]
            for other, people in (("off", self.test), ("field", self.others)):
                if tag == "mix" or group is self.tune:
                    cells.append("")
                    continue
                got = self.above(f"{other}/{n}", people, floor)
                cells.append(f"{got.mean():.2f} / {np.mean(got > 0):.2f}")
            out.append([fam.name, describe(floor), label, *cells])
        return out


def describe(floor: dict[str, float]) -> str:
    parts = {
        "value": "value ≥ {:+.4f}",
        "share": "≥ {:.0%} of negatives",
        "margin": "margin ≥ {:.2f}",
        "cosine": "cos ≥ {:.2f}",
    }
    return ", ".join(parts[k].format(v) for k, v in floor.items())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--snapshot", type=Path, default=SNAPSHOT)
    ap.add_argument("--data", type=Path, default=CACHE / "recommend", help="the eval's by default")
    ap.add_argument("--keep", type=float, default=0.9)
    ap.add_argument("--write", action="store_true", help="write the section into RESULTS.md")
    args = ap.parse_args()
    started = datetime.now().strftime("%Y-%m-%d %H:%M")
    t_all = time.perf_counter()
    kept_scores, kept_meta = args.data / "floor-scores.npz", args.data / "floor-meta.npz"
    kept_note = "; the scores of an earlier run of the same command, kept"
    if not kept_scores.exists():
        scores, meta = compute(args.snapshot, args.data)
        np.savez(kept_scores, **scores)
        np.savez(kept_meta, **meta)
        kept_note = ""
    report = Report(dict(np.load(kept_scores)), np.load(kept_meta))
    both = [{"margin": m, "cosine": c} for m, c in itertools.product(MARGINS, COSINES)]
    families = [
        Family("SVM decision value", [{"value": v} for v in VALUES]),
        Family("SVM above a share of the negatives", [{"share": s} for s in SHARES]),
        Family("SVM margin, relative to the seeds'", [{"margin": m} for m in MARGINS]),
        Family("centroid cosine", [{"cosine": c} for c in COSINES]),
        Family("margin and cosine (the product)", both),
        Family("fallback: centroid ranks, cosine", [{"cosine": c} for c in COSINES], True),
    ]
    shipped = {
        "margin and cosine (the product)": {
            "margin": recommend.MARGIN_FLOOR,
            "cosine": SearchConfig().recommend_cosine_floor,
        },
        "fallback: centroid ranks, cosine": {"cosine": SearchConfig().recommend_cosine_floor},
    }
    rows: list[list[str]] = []
    for fam in families:
        floor = report.choose(fam, args.keep)
        log(f"{fam.name}: {describe(floor)}")
        rows += report.rows(fam, floor)
        if fam.name in shipped and shipped[fam.name] != floor:
            log(f"{fam.name}: the product's floor is {describe(shipped[fam.name])}")
            shipped_fam = Family(fam.name + " as shipped", [], fam.by_centroid)
            rows += report.rows(shipped_fam, shipped[fam.name])
    n_window = len(report.window)
    info = machine_info()
    heads = ["floor", "chosen on tuning", "seeds", "own kept", "co-author kept",
             f"above (of {n_window:,}): mean / median", "none above",
             "off-topic window: mean / any", "other fields' seeds: mean / any"]  # fmt: skip
    machine = f"{info['cpu']} ({info['cores']} cores, {platform.machine()})"
    elsewhere = ""
    if args.data != CACHE / "recommend":
        elsewhere = (
            " The data directory is not the eval's: its build() imported and embedded the "
            "same papers (and the off-topic ones) there."
        )
    body = f"""## Recommendations: a relevance floor (held-out researchers)

{started}, {machine}, revision {info["revision"]}; load average at the end
{load_average()}. Command: `.venv/bin/python bench/recommend_floor.py --data {args.data}`
({time.perf_counter() - t_all:.0f} s{kept_note}). The researchers, window and negatives of
the issue 19 section ({len(report.tune)} tuning, {len(report.test)} held out; {n_window:,}
papers listed {CUT} .. +{DAYS - 1} days; 500 negatives); the SVM's values are those of
`engine.recommend.fitted_scores` (checked).{elsewhere}

Chosen on the tuning researchers (8 and 3 seeds each; the rows "tuning"): per kind of floor,
the one with the fewest papers above it that keeps {args.keep:.0%} of the own and of the
co-author papers in the top {K} (the SVM's, or the centroid's for the fallback). Every other
row is held out: the other researchers with 8 and 3 seeds, pairs of them pooled (16 seeds on
two topics), the same seeds against an off-topic window ({OTHER_FIELDS:,} papers of 2019
with no cs, stat or eess category), and {len(report.others)} researchers of those fields
(latest 8 or 3 papers, 2018-2019) against the cs window. "kept": the share of the true
papers in the top {K} that pass (how many there were); "above": papers passing per
researcher; the last two columns: papers passing per researcher, mean / share of
researchers with any.

{table(heads, rows)}

Reading. The decision value itself moves with the number of seeds: the floor that keeps
{args.keep:.0%} with 3 seeds keeps nearly every paper with 8 or 16. A share of the negatives
(random papers) does not, but it is relative: seeds of another field still find "their" top
papers in a cs window; and on the tests' 318-paper corpus, where the window's papers are
among the negatives, it cut papers plainly on the seeds' topic. The margin relative to the
seeds' own lets papers of other fields through; the centroid cosine stops them but cuts
little within a field. The product requires both (`engine.recommend.MARGIN_FLOOR`,
`[search] recommend_cosine_floor`); the fallback, rare, uses the cosine alone.
"""
    publish("recommend-floor", reflow(body), args.write)


def reflow(text: str) -> str:
    """Prose paragraphs wrapped at 92 columns (filled-in values leave them ragged)."""
    out = []
    for para in text.split("\n\n"):
        if para.startswith(("|", "#")):
            out.append(para)
        else:
            out.append(textwrap.fill(" ".join(para.split()), 92, break_on_hyphens=False))
    return "\n\n".join(out) + "\n"


if __name__ == "__main__":
    main()
