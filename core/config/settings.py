"""Global settings: environment first, then the user's config file, then defaults.

API keys are ``SecretStr`` so that a stray ``repr`` or log line can never print
them; they are read from ``PERPLEXITY_API_KEY`` and the like (or the config file)
and are never written to the store or notes.

A retrieval provider's settings belong to the provider (``ProviderSettings``, e.g.
Exa's ``exa_url`` and ``EXA_API_KEY``): they are read from the same places, with the
same error path, and reached through ``Settings.provider_settings``.
"""

from __future__ import annotations

import os
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import AliasChoices, Field, PrivateAttr, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    YamlConfigSettingsSource,
)

from sourcedesk.core.config.paths import config_dir, config_path, data_dir, log_dir
from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.text.secrets import register_secret

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.core.sources.providers.base import Provider
    from sourcedesk.core.sources.providers.exa.provider import ExaSettings

DEFAULT_AGGREGATORS = ["github.com", "wikipedia.org", "linkedin.com", "reddit.com", "medium.com"]

__all__ = [
    "ProviderSettings",
    "Settings",
    "SettingsProblem",
    "config_dir",
    "config_path",
    "data_dir",
    "is_set",
    "load_settings",
    "log_dir",
]


class SettingsProblem(UserError):
    """The settings could not be read: names the file or variable, the field, and a hint."""


class _ConfigFile(YamlConfigSettingsSource):
    """pydantic-settings' YAML source; keys may be written with dashes or underscores."""

    def _read_file(self, file_path: Path | Traversable) -> dict[str, Any]:
        try:
            data = super()._read_file(file_path)
        except UnicodeDecodeError as exc:
            raise SettingsProblem(
                f"the config file {file_path} is not UTF-8 text ({exc.reason})",
                hint=f"save it as UTF-8, or delete it; {_PATH_HINT}",
            ) from None
        except OSError as exc:
            raise SettingsProblem(
                f"the config file {file_path} cannot be read: {exc.strerror or exc}",
                hint="check its permissions",
            ) from None
        except Exception as exc:  # noqa: BLE001 - yaml's errors: the file does not parse
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
            problem = getattr(exc, "problem", None) or type(exc).__name__
            raise SettingsProblem(
                f"the config file {file_path} is not valid YAML{where}: {problem}",
                hint=f"fix the file or delete it; {_PATH_HINT}",
            ) from None
        if not isinstance(data, dict):
            raise SettingsProblem(
                f"the config file {file_path} must be a mapping of settings (key: value lines), "
                f"not a {type(data).__name__}",
                hint="e.g. `budget-chars: 12000`; " + _PATH_HINT,
            )
        _FILE_KEYS[Path(str(file_path))] = {str(k) for k in data}
        return {str(k).replace("-", "_"): v for k, v in data.items()}


# The keys each config file held when last read, checked against every settings model's
# fields once they are all known (a provider's keys share the file).
_FILE_KEYS: dict[Path, set[str]] = {}

_PATH_HINT = "`sourcedesk config path` shows where it is"


class _SettingsSources(BaseSettings):
    """Where settings come from: arguments, then the environment (``SOURCEDESK_…``), then
    config.yaml. A subclass with ``reads_outside = False`` (the demo) takes arguments only."""

    model_config = SettingsConfigDict(env_prefix="SOURCEDESK_", extra="ignore", populate_by_name=True)

    reads_outside: ClassVar[bool] = True

    def model_post_init(self, __context: Any) -> None:
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                register_secret(value.get_secret_value())

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        if not cls.reads_outside:
            return (init_settings,)
        return (init_settings, env_settings, _ConfigFile(settings_cls, yaml_file=config_path()))


class ProviderSettings(_SettingsSources):
    """A retrieval provider's own settings. Name the fields ``<provider>_<what>``
    (``exa_url``): the environment variable is ``SOURCEDESK_EXA_URL`` and the config.yaml
    key ``exa-url``; a key is a ``SecretStr`` field whose alias is its variable
    (``EXA_API_KEY``) and is registered as a secret when read."""


class Settings(_SettingsSources):
    writer_url: str = "https://api.perplexity.ai"
    perplexity_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("PERPLEXITY_API_KEY", "perplexity_api_key")
    )
    # Which writer backend (sourcedesk.core.writing.registry): "perplexity" is the Agent API (/v1/agent),
    # "perplexity-sonar" the legacy Sonar chat completions, "openai" any OpenAI-compatible
    # /chat/completions (no web search of its own: every section is written strictly).
    writer_api: str = "perplexity"
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "openai_api_key")
    )
    writer_model: str | None = None  # None: the backend's default (perplexity/sonar on the Agent API)
    retrieval_enabled: bool = True
    budget_chars: int = Field(default=12_000, gt=0)
    source_ttl_hours: float = Field(default=24 * 7, ge=0)
    aggregators: list[str] = Field(default_factory=lambda: list(DEFAULT_AGGREGATORS))
    writer_requests_per_minute: float = Field(default=50.0, ge=0)  # 0: the writer is not paced
    # search_domain_filter entries sent (Perplexity takes 20); the rest is enforced on results
    writer_domain_filter_cap: int = Field(default=20, ge=0)
    writer_stream: bool = False  # stream the writer's answer (the workbench shows it as it arrives)
    max_concurrent_sections: int = Field(default=12, ge=1)
    # Total time one retrieval request (an Exa search) may take — connecting, waiting and every
    # byte of the answer, not per read: a server trickling one byte a second is cut off here.
    # Timeouts are retried.
    request_timeout_s: float = Field(default=30.0, gt=0)
    # Total time a section's retrieval may take, retries and their pauses included; past it the
    # unfinished entries degrade (the section continues writer-only) with a warning saying so.
    retrieval_deadline_s: float = Field(default=60.0, gt=0)
    # Per read of the writer's answer (httpx); writer_deadline_s bounds the whole call.
    writer_timeout_s: float = Field(default=120.0, gt=0)
    # Total time one section's writer call may take, retries included; past it the section
    # fails and its previous note is kept.
    writer_deadline_s: float = Field(default=240.0, gt=0)
    # Largest writer answer read (bytes), the same way; a larger answer fails the section and
    # keeps the previous note. A streamed "full" answer repeats its text in every event.
    writer_max_response_bytes: int = Field(default=32 * 1024 * 1024, gt=0)
    # Longest answer text a note may hold (characters); a longer answer — one a byte cap
    # cannot catch, or one a stream keeps extending — fails the section, previous note kept.
    writer_max_answer_chars: int = Field(default=1_000_000, gt=0)
    # The optional model judge (a memo's support: judge: wins): "model" asks the writer's endpoint
    # about the claims the offline check calls partial or unchecked, at most this many per section.
    support_judge: Literal["off", "model"] = "off"
    support_judge_max_claims: int = Field(default=20, ge=1)
    max_retries: int = Field(default=4, ge=0)
    retry_max_wait_s: float = Field(default=60.0, ge=0)
    # check-urls: liveness requests are bounded and never reach private, loopback or
    # link-local addresses unless allowed here (or with --allow-private).
    check_timeout_s: float = Field(default=10.0, gt=0)  # one request, in all (not per read)
    check_url_deadline_s: float = Field(default=30.0, gt=0)  # one URL: every hop and retry
    check_deadline_s: float = Field(default=300.0, gt=0)  # the whole check; URLs not reached by then are listed
    # Bytes of a page read for the soft-404/paywall sniff; a longer page is judged on its start.
    check_max_page_bytes: int = Field(default=512 * 1024, gt=0)
    check_concurrency: int = Field(default=8, ge=1)
    check_max_retries: int = Field(default=2, ge=0)
    allow_private_urls: bool = False
    # Where rejections, namesakes, frozen sets, run history and section locks live: empty for
    # TinyDB in each memo's .sourcedesk/ (one analyst), or postgresql://USER:PASSWORD@HOST/DB for
    # a team's shared server (SOURCEDESK_STORE_URL, or store-url in config.yaml).
    store_url: str = ""
    # The workbench's keys, remapped by binding id ({"run-section": "ctrl+r", "help": "f1"});
    # the help screen (?) lists every binding with its id and key.
    keymap: dict[str, str] = Field(default_factory=dict)

    @field_validator("store_url")
    @classmethod
    def _store_password_is_a_secret(cls, v: str) -> str:
        """A password in the store URL is kept out of every store write, note and log."""
        from urllib.parse import parse_qsl, urlsplit

        try:
            parts = urlsplit(v.strip())
            password = parts.password or dict(parse_qsl(parts.query)).get("password")
        except ValueError:
            password = None
        if password:
            register_secret(password)
        return v.strip()

    @field_validator("writer_api")
    @classmethod
    def _known_writer_api(cls, v: str) -> str:
        from sourcedesk.core.writing.registry import writer_apis

        if v not in writer_apis():
            raise ValueError(f"unknown writer API {v!r}; use one of: {', '.join(writer_apis())}")
        return v

    # Arguments that are no field of this class: a provider's settings given in code
    # (``Settings(exa_url=…)``), handed to that provider's model.
    _provider_values: dict[str, Any] = PrivateAttr(default_factory=dict)
    _providers: dict[str, ProviderSettings] = PrivateAttr(default_factory=dict)

    def __init__(self, **values: Any) -> None:
        known = _argument_names(type(self))
        others = {k: values.pop(k) for k in list(values) if not k.startswith("_") and k not in known}
        super().__init__(**values)
        self._provider_values = others

    def provider_settings(self, provider: Provider) -> ProviderSettings:
        """``provider``'s own settings (read once per ``Settings``); a provider without a
        ``settings_model`` gets an empty one. ``SettingsProblem`` for a bad value."""
        cached = self._providers.get(provider.name)
        if cached is not None:
            return cached
        model = provider.settings_model or ProviderSettings
        if not type(self).reads_outside:
            model = _arguments_only(model)
        given = {k: v for k, v in self._provider_values.items() if k in _argument_names(model)}
        try:
            loaded = model(**given)
        except SettingsProblem:
            raise
        except (ValidationError, SettingsError, ValueError) as exc:
            raise _problem(exc, model) from None
        self._providers[provider.name] = loaded
        return loaded

    # The built-in Exa provider's settings, readable here as they always were; they belong to
    # the provider (``sourcedesk.core.sources.providers.exa.provider.ExaSettings``), and a plugin's are reached with
    # ``provider_settings``.
    @property
    def exa_url(self) -> str:
        return self._exa().exa_url

    @property
    def exa_api_key(self) -> SecretStr | None:
        return self._exa().exa_api_key

    @property
    def exa_requests_per_second(self) -> float:
        return self._exa().exa_requests_per_second

    @property
    def exa_max_response_bytes(self) -> int:
        return self._exa().exa_max_response_bytes

    def _exa(self) -> ExaSettings:
        from sourcedesk.core.sources.providers.exa.provider import exa_settings

        return exa_settings(self)

    def load_providers(self) -> None:
        """Read every registered provider's settings now, so a bad one stops the command
        at start-up (with the message every setting gets) rather than mid-run."""
        from sourcedesk.core.sources.providers import PROVIDERS

        for provider in list(PROVIDERS.values()):
            self.provider_settings(provider)

    def key_for(self, api: str) -> SecretStr | None:
        """The key a writer backend reads (its ``key_name``, e.g. PERPLEXITY_API_KEY)."""
        from sourcedesk.core.writing.registry import writer_class

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
        from sourcedesk.core.writing.registry import writer_class

        return str(writer_class(self.writer_api).key_name)


def _argument_names(model: type[BaseSettings]) -> set[str]:
    """Field names and their aliases: what a settings class takes as arguments."""
    names = set(model.model_fields)
    for info in model.model_fields.values():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            names |= {c for c in alias.choices if isinstance(c, str)}
        elif isinstance(alias, str):
            names.add(alias)
    return names


_ISOLATED: dict[type[ProviderSettings], type[ProviderSettings]] = {}


def _arguments_only(model: type[ProviderSettings]) -> type[ProviderSettings]:
    """``model`` reading its arguments and defaults only (for settings that ignore the outside)."""
    if model not in _ISOLATED:
        _ISOLATED[model] = type(model.__name__, (model,), {"reads_outside": False, "__module__": model.__module__})
    return _ISOLATED[model]


def is_set(key: SecretStr | None) -> bool:
    """A key that is present and not blank (``PERPLEXITY_API_KEY=`` counts as unset)."""
    return key is not None and bool(key.get_secret_value().strip())


def _env_names(name: str, model: type[BaseSettings]) -> list[str]:
    """The environment variables that set field ``name``."""
    alias = model.model_fields[name].validation_alias
    names = [f"SOURCEDESK_{name.upper()}"]
    if isinstance(alias, AliasChoices):
        names = [c for c in alias.choices if isinstance(c, str) and c.isupper()] + names
    return names


def _field_of(loc: object, model: type[BaseSettings]) -> str | None:
    key = str(loc)
    for name, info in model.model_fields.items():
        alias = info.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else []
        if key == name or key in choices:
            return name
    return None


def _expected(name: str, model: type[BaseSettings]) -> str:
    if name == "writer_api" and issubclass(model, Settings):
        from sourcedesk.core.writing.registry import writer_apis

        return "one of " + ", ".join(repr(api) for api in writer_apis())
    info = model.model_fields[name]
    annotation = str(info.annotation)
    bounds = "".join(
        f" {words} {getattr(m, attr)}"
        for m in info.metadata
        for attr, words in (("gt", "above"), ("ge", "of at least"))
        if getattr(m, attr, None) is not None
    )
    for kind, words in (
        ("bool", "true or false"),
        ("int", "a whole number"),
        ("float", "a number"),
        ("list", 'a list (in the environment: JSON, e.g. ["a.com", "b.com"])'),
        (
            "Literal",
            "one of " + ", ".join(repr(a) for a in getattr(model.model_fields[name].annotation, "__args__", ())),
        ),
    ):
        if kind in annotation:
            return words + bounds
    return "a valid value"


def _where(name: str, model: type[BaseSettings]) -> str:
    """Where a field's value came from: the first variable set in the environment, else the file."""
    environ = {k.upper() for k in os.environ}
    for env in _env_names(name, model):
        if env.upper() in environ:
            return f"the environment variable {env}"
    return f"the config file {config_path()}"


def _problem(exc: Exception, model: type[BaseSettings]) -> SettingsProblem:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        loc = first.get("loc") or ("?",)
        name = _field_of(loc[0], model)
        if name is None:
            return SettingsProblem(f"invalid setting {loc[0]}: {first.get('msg')}", hint=_PATH_HINT)
        got = first.get("input")
        shown = f" (got {got!r})" if isinstance(got, str | int | float | bool) and "api_key" not in name else ""
        where = _where(name, model)
        fix = f"unset {where.rsplit(' ', 1)[1]} or set it" if where.startswith("the environment") else "set it"
        more = f"; {len(exc.errors()) - 1} more problem(s) after this one" if len(exc.errors()) > 1 else ""
        return SettingsProblem(
            f"invalid setting {name} in {where}: {first.get('msg')}{shown}{more}",
            hint=f"{fix} to {_expected(name, model)}"
            + ("" if where.startswith("the environment") else f"; {_PATH_HINT}"),
        )
    # pydantic-settings' own parse errors (a list or mapping given in the environment as bad JSON)
    text = str(exc)
    name = next((n for n in model.model_fields if f'"{n}"' in text), None)
    if name is not None:
        where = _where(name, model)
        return SettingsProblem(
            f"invalid setting {name} in {where}: it could not be parsed",
            hint=f"set it to {_expected(name, model)}",
        )
    return SettingsProblem(f"the settings could not be read: {text.splitlines()[0] if text else exc}", hint=_PATH_HINT)


def load_settings(**overrides: Any) -> Settings:
    """The settings — the core ones and every registered provider's — or ``SettingsProblem``
    naming the file or variable, the field and a hint."""
    try:
        settings = Settings(**overrides)
    except SettingsProblem:
        raise
    except (ValidationError, SettingsError, ValueError) as exc:
        raise _problem(exc, Settings) from None
    settings.load_providers()
    _check_file_keys(settings)
    return settings


def _check_file_keys(settings: Settings) -> None:
    """A key in config.yaml that no setting reads (``budget-char`` for ``budget-chars``) is an
    error: silently ignored, the analyst would believe the setting took effect."""
    if not type(settings).reads_outside:
        return
    path = config_path()
    seen = _FILE_KEYS.get(path)
    if not seen:
        return
    from sourcedesk.core.sources.providers import PROVIDERS

    models: list[type[BaseSettings]] = [type(settings)]
    models += [p.settings_model for p in PROVIDERS.values() if p.settings_model is not None]
    known = {name.lower() for model in models for name in _argument_names(model)}
    unknown = sorted(k for k in seen if k.replace("-", "_").lower() not in known)
    if not unknown:
        return
    import difflib

    key = unknown[0]
    close = difflib.get_close_matches(key.replace("-", "_").lower(), sorted(n for n in known if n.islower()), n=1)
    more = f" (and {len(unknown) - 1} more: {', '.join(unknown[1:])})" if len(unknown) > 1 else ""
    suggestion = f"did you mean {close[0].replace('_', '-')}? Fix" if close else "fix"
    raise SettingsProblem(
        f"unknown setting {key!r} in the config file {path}{more}",
        hint=f"{suggestion} or remove it; {_PATH_HINT}",
    )
