"""Global settings: environment first, then the user's config file, then defaults.

API keys are ``SecretStr`` so that a stray ``repr`` or log line can never print
them; they are read from ``EXA_API_KEY`` / ``PERPLEXITY_API_KEY`` (or the config
file) and are never written to the store or notes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from platformdirs import user_config_dir, user_data_dir
from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from core.secrets import register_secret

APP = "sourcedesk"

DEFAULT_AGGREGATORS = ["github.com", "wikipedia.org", "linkedin.com", "reddit.com", "medium.com"]


def config_dir() -> Path:
    return Path(os.environ.get("SOURCEDESK_CONFIG_DIR") or user_config_dir(APP))


def config_path() -> Path:
    return config_dir() / "config.yaml"


def data_dir() -> Path:
    """Where global state lives (the global rejection list)."""
    return Path(os.environ.get("SOURCEDESK_DATA_DIR") or user_data_dir(APP))


class _YamlConfigSource(PydanticBaseSettingsSource):
    """Reads ``config.yaml``; keys may be written with dashes or underscores."""

    def get_field_value(self, field, field_name):  # pragma: no cover - unused by pydantic-settings here
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = config_path()
        if not path.is_file():
            return {}
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ValueError(f"{path}: not valid YAML ({exc}). Hint: fix or delete the file.") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping of settings at the top level.")
        return {str(k).replace("-", "_"): v for k, v in data.items()}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SOURCEDESK_", extra="ignore", populate_by_name=True)

    exa_url: str = "https://api.exa.ai"
    writer_url: str = "https://api.perplexity.ai"
    exa_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("EXA_API_KEY", "exa_api_key"))
    perplexity_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("PERPLEXITY_API_KEY", "perplexity_api_key")
    )
    # Which writer backend (core.writers): "perplexity" is the Agent API (/v1/agent),
    # "perplexity-sonar" the legacy Sonar chat completions, "openai" any OpenAI-compatible
    # /chat/completions (no web search of its own: every section is written strictly).
    writer_api: str = "perplexity"
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "openai_api_key")
    )
    writer_model: str | None = None  # None: the backend's default (perplexity/sonar on the Agent API)
    retrieval_enabled: bool = True
    budget_chars: int = 12_000
    source_ttl_hours: float = 24 * 7
    aggregators: list[str] = Field(default_factory=lambda: list(DEFAULT_AGGREGATORS))
    exa_requests_per_second: float = 10.0
    writer_requests_per_minute: float = 50.0
    writer_domain_filter_cap: int = (
        20  # search_domain_filter entries sent (Perplexity takes 20); the rest is enforced on results
    )
    writer_stream: bool = False  # stream the writer's answer (the workbench shows it as it arrives)
    max_concurrent_sections: int = 12
    # Total time one Exa request may take — connecting, waiting and every byte of the answer,
    # not per read: a server trickling one byte a second is cut off here. Timeouts are retried.
    request_timeout_s: float = Field(default=30.0, gt=0)
    # Total time a section's retrieval may take, retries and their pauses included; past it the
    # unfinished entries degrade (the section continues writer-only) with a warning saying so.
    retrieval_deadline_s: float = Field(default=60.0, gt=0)
    # Per read of the writer's answer (httpx); writer_deadline_s bounds the whole call.
    writer_timeout_s: float = Field(default=120.0, gt=0)
    # Total time one section's writer call may take, retries included; past it the section
    # fails and its previous note is kept.
    writer_deadline_s: float = Field(default=240.0, gt=0)
    # Largest Exa answer read (bytes). The body is streamed and reading stops at the cap; an
    # entry whose answer is larger degrades. 100 results with 100,000 characters of text fit.
    exa_max_response_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    # Largest writer answer read (bytes), the same way; a larger answer fails the section and
    # keeps the previous note. A streamed "full" answer repeats its text in every event.
    writer_max_response_bytes: int = Field(default=32 * 1024 * 1024, gt=0)
    max_retries: int = 4
    retry_max_wait_s: float = 60.0
    # check-urls: liveness requests are bounded and never reach private, loopback or
    # link-local addresses unless allowed here (or with --allow-private).
    check_timeout_s: float = Field(default=10.0, gt=0)  # one request, in all (not per read)
    check_url_deadline_s: float = Field(default=30.0, gt=0)  # one URL: every hop and retry
    check_deadline_s: float = Field(default=300.0, gt=0)  # the whole check; URLs not reached by then are listed
    # Bytes of a page read for the soft-404/paywall sniff; a longer page is judged on its start.
    check_max_page_bytes: int = Field(default=512 * 1024, gt=0)
    check_concurrency: int = 8
    check_max_retries: int = 2
    allow_private_urls: bool = False

    @field_validator("writer_api")
    @classmethod
    def _known_writer_api(cls, v: str) -> str:
        from core.writers import writer_apis

        if v not in writer_apis():
            raise ValueError(f"unknown writer API {v!r}; use one of: {', '.join(writer_apis())}")
        return v

    def model_post_init(self, __context: Any) -> None:
        for key in (self.exa_api_key, self.perplexity_api_key, self.openai_api_key):
            if key is not None:
                register_secret(key.get_secret_value())

    def key_for(self, api: str) -> SecretStr | None:
        """The key a writer backend reads (its ``key_name``, e.g. PERPLEXITY_API_KEY)."""
        from core.writers import writer_class

        name = writer_class(api).key_name
        value = getattr(self, name.lower(), None)
        if isinstance(value, SecretStr):
            return value
        raw = os.environ.get(name)  # a backend registered from outside with a key of its own
        return SecretStr(raw) if raw else None

    @property
    def writer_api_key(self) -> SecretStr | None:
        """The key for the configured writer API."""
        return self.key_for(self.writer_api)

    @property
    def writer_key_name(self) -> str:
        from core.writers import writer_class

        return str(writer_class(self.writer_api).key_name)

    @classmethod
    def settings_customise_sources(
        cls, settings_cls, init_settings, env_settings, dotenv_settings, file_secret_settings
    ):
        return (init_settings, env_settings, _YamlConfigSource(settings_cls))


def is_set(key: SecretStr | None) -> bool:
    """A key that is present and not blank (``PERPLEXITY_API_KEY=`` counts as unset)."""
    return key is not None and bool(key.get_secret_value().strip())


def load_settings(**overrides: Any) -> Settings:
    return Settings(**overrides)
