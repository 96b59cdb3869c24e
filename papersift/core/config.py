"""Settings, declared once here: every setting is a field of one of the frozen section
dataclasses below (the engine's two, ``[embedding]`` and ``[search]``, in
``core.config_search``), with its default, its help text and its bounds in the field
metadata (``core.config_setting.setting``).
``core.config_load`` reads them from ``config.toml`` and ``PAPERSIFT_*`` variables;
``core.settings_docs`` writes config.toml and the README table from them.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from papersift.core.config_search import EmbeddingConfig, SearchConfig
from papersift.core.config_setting import setting
from papersift.core.setting_parsers import (
    LabMember,
    parse_admin_token,
    parse_cron,
    parse_data_dir,
    parse_host,
    parse_http_url,
    parse_http_url_or_empty,
    parse_members,
    parse_ror,
    parse_secret_key,
)


@dataclass(frozen=True)
class DataConfig:
    dir: str = setting(
        "papersift-data",
        "Data directory holding the store, both indexes and the manifest. A relative path "
        "is resolved against the directory of the config file; empty is an error.",
        parse=parse_data_dir,
    )
    bootstrap: str = setting(
        "demo",
        "What to import when the store is empty at `serve`: `demo` (the bundled corpus), "
        "`none`, or a path to an arXiv snapshot file.",
    )


@dataclass(frozen=True)
class ServerConfig:
    host: str = setting(
        "127.0.0.1",
        "Address `serve` listens on; `0.0.0.0` listens on every address.",
        parse=parse_host,
    )
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
    admin_token: str = setting(
        "",
        "Token for admin actions (the /admin page's password, the admin API's bearer "
        "token), at least 16 characters; empty disables them. Wrong tokens are throttled "
        "per client address like sign-ins ([accounts] signin_per_minute).",
        parse=parse_admin_token,
    )
    rate_limit: int = setting(
        600,
        "Requests per minute per client address to the API and to the pages and feeds that "
        "run a search (/search, /similar, the search feeds), counted together; bursts up to "
        "a minute's worth, then 429 with Retry-After. 0 is off.",
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
        "Retries of a request (harvest, add, enrich) that could not connect (connection "
        "refused or dropped), timed out, was cut short or got HTTP 429, 500, 502, 503 or 504; "
        "other errors fail at once. The pauses double (from 2 × `delay_seconds` when "
        "harvesting) unless the server sends `Retry-After` (up to 300 s): with a server that "
        "refuses connections, a harvest gives up after about 90 seconds by default. A host "
        "name that does not resolve (no network, a mistyped URL) fails at once, or after one "
        "retry when the resolver says its failure is temporary.",
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
        "asks again only about papers it has no current answer for (see `cache_days`).",
    )
    cache_days: int = setting(
        30,
        "Days a found record (citation count, ids, references) is reused from the cache "
        "before it is asked for again. Counts change slowly, so a monthly refresh keeps them "
        "current for a fraction of the requests: a weekly `[schedule] enrich` job asks "
        "again about the records older than this. A large corpus needs longer: at "
        "`delay_seconds` 1 a refresh asks one paper per second per source (100k papers: "
        "~28 hours each). 0 asks again every run.",
        minimum=0,
    )
    not_found_days: int = setting(
        3,
        "Days a not-found answer (HTTP 404) is reused, at most `cache_days`: a new arXiv "
        "paper is often missing from OpenAlex or Semantic Scholar for a few days, and is "
        "asked about again (with a weekly job, at every run) until it is found.",
        minimum=0,
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
        "Key that signs session cookies, at least 32 characters; set it with the "
        "environment variable `PAPERSIFT_ACCOUNTS_SECRET_KEY`, not in this file. Empty: a "
        "random key generated once into `secret.key` in the data directory (mode 0600).",
        parse=parse_secret_key,
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
    # The data directory is the default in the working directory only because no config
    # file was found and PAPERSIFT_DATA_DIR is not set: "no index" says so, as a command run
    # from another folder otherwise sent its user to import the corpus a second time.
    data_dir_defaulted: bool = field(default=False, metadata={"internal": True})

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
