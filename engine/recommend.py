"""Recommendations: rank a window of recent papers by a model of seed papers (a tag, a
library, a researcher's own papers). Stateless: the seeds come with each request.

The model is arxiv-sanity's: a linear SVM (scikit-learn, balanced classes, C=0.003) on tf-idf
of title and abstract, the seeds against a fixed random sample of other papers, fitted per
request over the window's papers (and the request's filters). Chosen by measurement: on
researchers held out of tuning it ranked their own next papers better than the MiniLM
centroid, a logistic model or an SVM on the vectors, and a fusion (bench/recommend_eval.py,
bench/RESULTS.md, issue 19). Seeds are never recommended. When the model cannot be fitted
(no other papers to contrast, no shared words), the vector centroid ranks instead. The
window's texts are analysed once per index generation (``engine.recommend_terms``); a
request analyses only its seeds.

Only papers close to the seeds are recommended: a window with nothing like them recommends
nothing and says so, rather than its least unlike papers (a tag of three papers on mirror
symmetry was sent one on Bayesian field theory). Close: the SVM's margin for the paper is at
least ``MARGIN_FLOOR`` of the seeds' own, and its vector's cosine to the seeds' centroid at
least ``[search] recommend_cosine_floor`` (the fallback's floor too). On researchers held
out of tuning this kept 87-98% of the papers they went on to write or co-author that the top
50 held, cut the papers recommended six- to thirtyfold, and let almost no paper of another
field through (bench/recommend_floor.py, bench/RESULTS.md). A paper not embedded yet is
judged by the SVM alone, as are all when the seeds have no vector.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from weakref import WeakKeyDictionary

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.svm import LinearSVC

from papersift.core.errors import QueryError
from papersift.core.paper import parse_arxiv_id
from papersift.engine.hits import make_hits
from papersift.engine.lexical_filters import keyword_filter
from papersift.engine.plan import merged_researchers
from papersift.engine.recommend_terms import WindowTerms, WindowTermsCache, count_texts
from papersift.engine.results import Filters, Hit, past_window
from papersift.engine.search import SearchEngine

FloatArray = npt.NDArray[np.float32]
DEFAULT_DAYS = 30  # the window when a request names no dates
MAX_SEEDS = 1000
MISSING_SHOWN = 3  # seeds not in the index named in the warning
MAX_CANDIDATES = 20_000  # papers of a window ranked (the newest, when it holds more)
NEGATIVES = 500  # other papers the seeds are contrasted with
SVM_C = 0.003  # chosen on the tuning researchers (bench/recommend_eval.py)
# The SVM's floor (bench/recommend_floor.py, chosen on its tuning researchers with the
# cosine floor, ``[search] recommend_cosine_floor``). Its decision values shift with the
# number of seeds (an absolute floor kept nearly every paper for 8 seeds and few for 3), so
# the floor is relative: a paper's margin (decision value less the intercept) must be at
# least this share of the seeds' median margin. The margin alone let papers of other fields
# through, the cosine alone cut little within a field: both are required.
MARGIN_FLOOR = 0.05
NOTHING_CLOSE = "nothing in this window is close to the seed papers"


@dataclass(frozen=True, slots=True)
class Recommendations:
    hits: tuple[Hit, ...]
    total: int  # papers of the window (and filters) at or above the floor: those recommended
    ranked: int  # papers of the window (and filters) that were scored, seeds left out
    page: int
    page_size: int
    date_from: date | None
    date_to: date | None
    seeds: tuple[str, ...]  # the seed ids found here, with a vector
    warnings: tuple[str, ...] = ()


def centroid_scores(seeds: FloatArray, window: FloatArray) -> npt.NDArray[np.float64]:
    """Cosine of each window row to the normalised mean of the (unit) seed rows."""
    centre = _centre(seeds)
    if centre is None:
        return np.zeros(len(window))
    return np.asarray(window, np.float64) @ centre.astype(np.float64)


def _centre(seeds: FloatArray) -> FloatArray | None:
    centre = np.asarray(seeds, np.float64).mean(axis=0)
    norm = float(np.linalg.norm(centre))
    return None if norm == 0.0 else (centre / norm).astype(np.float32)


@dataclass(frozen=True, slots=True)
class Fitted:
    """A fitted SVM's decision values for the window's texts, and the least of them close
    enough to recommend (``svm_floor``)."""

    scores: npt.NDArray[np.float64]
    floor: float


def svm_floor(
    seed_scores: npt.NDArray[np.float64], intercept: float, share: float = MARGIN_FLOOR
) -> float:
    """The decision value whose margin over ``intercept`` is ``share`` of the seeds' median
    margin; -inf when the seeds have none (the model tells nothing: the cosine decides)."""
    margin = float(np.median(seed_scores)) - intercept
    return intercept + share * margin if margin > 0 else -math.inf


def svm_scores(
    seeds: Sequence[str], negatives: Sequence[str], window: Sequence[str], c: float = SVM_C
) -> Fitted | None:
    """The SVM's decision value for each window text, and its floor; None when it cannot be
    fitted."""
    if not seeds or not negatives or not window:
        return None
    counts = count_texts([*seeds, *negatives, *window])
    return None if counts is None else fitted_scores(counts, len(seeds), len(negatives), c)


def fitted_scores(counts: csr_matrix, n_seeds: int, n_negatives: int, c: float = SVM_C) -> Fitted:
    """The SVM's decision values for the rows after the seeds' and negatives', fitted on
    the tf-idf of ``counts`` (rows: seeds, negatives, window), and their floor."""
    x = TfidfTransformer(sublinear_tf=True).fit_transform(counts)
    y = np.r_[np.ones(n_seeds), np.zeros(n_negatives)]
    # A fixed seed for liblinear's order of visits: the same request ranks the same way.
    model = LinearSVC(C=c, class_weight="balanced", max_iter=5000, random_state=0)
    model.fit(x[: len(y)], y)
    seeds = np.asarray(model.decision_function(x[:n_seeds]), np.float64)
    window = np.asarray(model.decision_function(x[len(y) :]), np.float64)
    return Fitted(window, svm_floor(seeds, float(model.intercept_[0]), MARGIN_FLOOR))


def _texts(engine: SearchEngine, docids: Sequence[int]) -> dict[int, str]:
    papers = engine.data.store.get(list(docids))
    return {d: f"{p.title}. {p.abstract}" for d, p in papers.items()}


def _negative_pool(engine: SearchEngine) -> dict[int, str]:
    """The texts of a fixed sample of papers, in the order negatives are taken from it (the
    same for every request while the store is unchanged)."""
    count = engine.data.store.count()
    rng = np.random.default_rng(19)
    picked = rng.integers(1, int(count * 1.25) + 2, NEGATIVES * 3)
    return _texts(engine, [int(d) for d in dict.fromkeys(picked.tolist())])


def _pick_negatives(pool: Iterable[int], exclude: set[int]) -> list[int]:
    return [d for d in pool if d not in exclude][:NEGATIVES]


def _negatives(engine: SearchEngine, exclude: set[int]) -> list[int]:
    """The negatives of a request whose seeds are ``exclude``."""
    return _pick_negatives(_negative_pool(engine), exclude)


@dataclass(frozen=True, slots=True)
class _Window:
    """A window's analysed texts (with the negatives of a request without seeds) and the
    sample negatives are taken from."""

    terms: WindowTerms
    pool: tuple[int, ...]


def _analyse_window(engine: SearchEngine, papers: npt.NDArray[np.int64]) -> _Window:
    pool = _negative_pool(engine)
    texts = _texts(engine, papers.tolist())
    texts.update((d, pool[d]) for d in _pick_negatives(pool, set()))
    return _Window(WindowTerms(texts), tuple(pool))


_windows: WeakKeyDictionary[SearchEngine, WindowTermsCache[_Window]] = WeakKeyDictionary()
_windows_lock = threading.Lock()


def _windows_of(engine: SearchEngine) -> WindowTermsCache[_Window]:
    with _windows_lock:
        cache = _windows.get(engine)
        if cache is None:
            cache = _windows[engine] = WindowTermsCache()
        return cache


def _rank(
    engine: SearchEngine,
    seeds: list[int],
    centre: FloatArray | None,
    allowed: npt.NDArray[np.int64],
    kept: _Window,
) -> list[tuple[int, float]]:
    """The allowed papers at or above the floor with their scores, best first: the SVM's,
    else the centroid's. ``kept``: the window's analysed texts (``_kept_window``)."""
    terms = kept.terms
    floor = engine.config.search.recommend_cosine_floor
    window_ids = [int(d) for d in allowed]
    # Like arxiv-sanity, papers being ranked may be negatives too: excluding the window would
    # leave only older papers, and the model would learn "recent" instead of the topic.
    negatives = _pick_negatives(kept.pool, set(seeds))
    texts = _texts(engine, terms.missing([*seeds, *negatives, *window_ids]))
    present = [d for d in seeds if d in terms or d in texts]
    window_ids = [d for d in window_ids if d in terms or d in texts]
    counted = None
    if present and negatives and window_ids:
        counted = terms.counts([*present, *negatives, *window_ids], texts)
    if counted is None:
        if centre is None:
            return []
        return [(d, cos) for d, cos in _cosines(engine, centre, window_ids) if cos >= floor]
    fitted = fitted_scores(counted[0], len(present), len(negatives))
    order = np.argsort(-fitted.scores, kind="stable")
    ranked = [(window_ids[i], float(fitted.scores[i])) for i in order]
    passed = [(d, score) for d, score in ranked if score >= fitted.floor]
    if centre is None or not passed:  # no seed vector: the SVM's floor alone
        return passed
    far = {d for d, cos in _cosines(engine, centre, [d for d, _ in passed]) if cos < floor}
    # A paper without a vector yet (still being embedded) is judged by the SVM alone.
    return [(d, score) for d, score in passed if d not in far]


def _cosines(
    engine: SearchEngine, centre: FloatArray, docids: Sequence[int]
) -> list[tuple[int, float]]:
    """The cosine of each of ``docids`` with a vector to ``centre``, highest first."""
    return engine.data.vectors.search(centre, len(docids), np.asarray(docids, np.int64))


def window(
    engine: SearchEngine, filters: Filters, days: int = DEFAULT_DAYS
) -> tuple[Filters, str | None]:
    """The filters with a date window: the request's, or the ``days`` up to the newest paper."""
    if filters.date_from or filters.date_to:
        return filters, None
    _, newest = engine.data.lexical.date_range()
    if newest is None:
        return filters, None
    start = newest - timedelta(days=days - 1)
    note = f"no dates given: the {days} days up to the newest paper, {start} .. {newest}"
    return dataclasses.replace(filters, date_from=start, date_to=newest), note


def _kept_window(
    engine: SearchEngine, filters: Filters, everyone: npt.NDArray[np.int64]
) -> tuple[_Window, int]:
    """The analysed texts of the window ``filters`` set (``everyone``: its papers, seeds
    still in), kept per keyword-index generation and filters; and how many papers were
    analysed for it now (0: it was kept)."""
    analysed = 0

    def build() -> _Window:
        nonlocal analysed
        papers = _newest(engine, everyone)
        analysed = len(papers)
        return _analyse_window(engine, papers)

    kept = _windows_of(engine).get((engine.data.lexical.generation, filters), build)
    return kept, analysed


def warm_window(engine: SearchEngine) -> int:
    """Analyse the default window (``DEFAULT_DAYS``, no filters: the radar's and a tag's
    first recommendations) ahead of its first request, which would otherwise wait for it:
    ~5 s at 663k papers (bench/RESULTS.md). The papers analysed; 0 when the window was
    already kept or is empty."""
    filters, _ = window(engine, Filters())
    filt = keyword_filter(engine.data.lexical, filters)
    if filt is None:  # an empty index
        return 0
    everyone = engine.data.lexical.allowed(filt)
    return _kept_window(engine, filters, everyone)[1] if len(everyone) else 0


def _newest(engine: SearchEngine, docids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The ``MAX_CANDIDATES`` newest of ``docids`` (all of them when fewer), sorted."""
    if len(docids) <= MAX_CANDIDATES:
        return docids
    lexical = engine.data.lexical
    newest, _, _ = lexical.search(lexical.docids_for(docids.tolist()), MAX_CANDIDATES, 0, "newest")
    return np.sort(np.asarray(newest, np.int64))


def recommend(
    engine: SearchEngine,
    seed_ids: Sequence[str],
    filters: Filters | None = None,
    page: int = 1,
    page_size: int | None = None,
) -> Recommendations:
    """Papers of the window like the seeds (at or above the floor), best first. QueryError
    for a request out of bounds (no seeds, too many, a page past the window)."""
    cfg = engine.config.search
    size = page_size or cfg.page_size
    if not 1 <= size <= cfg.max_page_size:
        raise QueryError(f"page size must be between 1 and {cfg.max_page_size}")
    if page < 1 or page * size > cfg.max_window:
        raise QueryError(past_window(page, size, cfg.max_window))
    if not seed_ids:
        raise QueryError("name at least one seed paper (an arXiv id)")
    if len(seed_ids) > MAX_SEEDS:
        raise QueryError(f"at most {MAX_SEEDS} seed papers")
    data = engine.data
    filters, warnings = merged_researchers(engine, filters or Filters())
    found: dict[int, str] = {}
    missing: list[str] = []
    for raw in dict.fromkeys(seed_ids):
        parsed = parse_arxiv_id(raw)
        docid = data.store.docid_of(parsed[0]) if parsed else None
        if docid is None:
            missing.append(raw[:40])
        else:
            found[docid] = parsed[0] if parsed else raw
    if missing:  # one line however many: a library of 1,000 papers may lack hundreds
        more = f" and {len(missing) - MISSING_SHOWN:,} more" if len(missing) > MISSING_SHOWN else ""
        warnings.append(f"not in this index, left out: {', '.join(missing[:MISSING_SHOWN])}{more}")
    vectors = [v for d in found if (v := data.vectors.vector(d)) is not None]
    filters, note = window(engine, filters)
    if note:
        warnings.append(note)
    centre = _centre(np.stack(vectors)) if vectors else None
    filt = keyword_filter(data.lexical, filters)
    # No filter at all only on an empty index (window() sets dates otherwise): nothing to rank.
    everyone = data.lexical.allowed(filt) if found and filt is not None else np.zeros(0, np.int64)
    others = everyone[~np.isin(everyone, np.fromiter(found, np.int64, len(found)))]
    allowed = _newest(engine, others)
    if len(allowed) < len(others):
        warnings.append(f"the window holds more papers than the {MAX_CANDIDATES:,} newest ranked")
    scored = (
        _rank(engine, list(found), centre, allowed, _kept_window(engine, filters, everyone)[0])
        if len(allowed)
        else []
    )
    if len(allowed) and not scored:
        warnings.append(f"{NOTHING_CLOSE} (none of its {len(allowed):,} papers)")
    total = len(scored)
    ranked = scored[(page - 1) * size : page * size]
    ranks = {"recommended": {d: (page - 1) * size + i + 1 for i, (d, _) in enumerate(ranked)}}
    hits = make_hits(data, ranked, None, {}, ranks) if ranked else []
    return Recommendations(
        hits=tuple(hits),
        total=total,
        ranked=len(allowed),
        page=page,
        page_size=size,
        date_from=filters.date_from,
        date_to=filters.date_to,
        seeds=tuple(found.values()),
        warnings=tuple(warnings),
    )
