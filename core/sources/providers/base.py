"""What every include-sources provider is, and what it is handed.

A provider turns one ``include-sources`` entry into ranked ``Source`` records plus
an honest account of what it removed and why. It owns everything that is about
it alone, so a new provider is one module:

- ``describe`` — the request as it will be sent (templates rendered, pins and
  exclusions resolved), without touching the network: the frozen-set
  fingerprint is computed from it, so "same request" is decided before any cost.
- ``fetch`` — do it. Failures a provider can name (a 401, a timeout) are raised
  as ``sourcedesk.core.domain.errors.RetrievalError`` or returned as ``degraded`` warnings; the
  retrieval stage turns them into warnings and carries on.
- ``settings_model`` — its own settings (``sourcedesk.core.config.settings.ProviderSettings``), read
  from the environment and config.yaml like every other setting and checked at
  start-up with the same error path; its API key is one of them (``key_env``).
- ``open_client`` — the client every section of a run shares (one rate limit, one
  connection pool); ``ProviderClients`` opens it on first use and closes it.

Built-in providers register in ``sourcedesk.core.sources.providers``; others are found through the
``sourcedesk.providers`` entry-point group — nothing in ``sourcedesk.core.sources.retrieve``, the
run, the settings or the interfaces changes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from pydantic import SecretStr

from sourcedesk.core.domain.models import RemovedSource, RunWarning, Source

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.core.config.settings import ProviderSettings, Settings
    from sourcedesk.core.memo.spec import Memo, PluginEntry, Section

SettingsT = TypeVar("SettingsT", bound="ProviderSettings")


class ProviderClient(Protocol):
    """A provider's network client, shared by the sections of one run."""

    requests_sent: int  # HTTP requests that really went out (a reused frozen set costs none)

    async def aclose(self) -> None: ...


class ProviderClients:
    """The provider clients of one run (or one workbench session): each opened on first
    use — a run without network entries opens no socket — and closed together.
    ``given`` clients are the caller's: used, never closed here."""

    def __init__(self, settings: Settings, given: Mapping[str, ProviderClient] | None = None) -> None:
        self.settings = settings
        self._given = dict(given or {})
        self._opened: dict[str, ProviderClient | None] = {}

    def get(self, provider: Provider) -> ProviderClient | None:
        if provider.name in self._given:
            return self._given[provider.name]
        if provider.name not in self._opened:
            self._opened[provider.name] = provider.open_client(self.settings)
        return self._opened[provider.name]

    def requests_sent(self, provider: Provider) -> int:
        client = self._given.get(provider.name) or self._opened.get(provider.name)
        return client.requests_sent if client is not None else 0

    async def aclose(self) -> None:
        opened, self._opened = self._opened, {}
        for client in opened.values():
            if client is not None:
                await client.aclose()


@dataclass
class ProviderContext:
    """Everything about the memo and run that a provider may need for one entry."""

    memo: Memo
    section: Section
    variables: dict[str, str]
    settings: Settings
    memo_dir: Path
    memo_rejects: list[str] = field(default_factory=list)
    global_rejects: list[str] = field(default_factory=list)
    memo_name_rejects: list[str] = field(default_factory=list)  # rejected names ("Kestra Medical")
    global_name_rejects: list[str] = field(default_factory=list)
    clients: ProviderClients | None = None
    entry_index: int = 0
    now: datetime | None = None

    def client(self, provider: Provider) -> ProviderClient | None:
        """The run's shared client for ``provider`` (None outside a fetch, or when it has none)."""
        return self.clients.get(provider) if self.clients is not None else None

    def with_entry(self, index: int) -> ProviderContext:
        return replace(self, entry_index=index)

    @property
    def aggregators(self) -> list[str]:
        """The memo's aggregator list if it has one, else the global default."""
        memo_list = self.memo.settings.aggregators
        return list(memo_list if memo_list is not None else self.settings.aggregators)


@dataclass
class ProviderResult:
    sources: list[Source] = field(default_factory=list)  # kept, in the provider's rank order
    namesakes: list[RemovedSource] = field(default_factory=list)
    excluded: list[RemovedSource] = field(default_factory=list)
    warnings: list[RunWarning] = field(default_factory=list)
    cost_dollars: float = 0.0
    requests: int = 0
    degraded: bool = False  # the entry could not be retrieved (its sources are missing, not few)


class Provider(ABC):
    """One kind of include-sources entry (``provider: exa``, ``provider: files``, …)."""

    #: A provider the memo schema does not know validates its entries with this model, a
    #: ``sourcedesk.core.memo.spec.PluginEntry`` subclass (kebab-case keys welcome; set ``extra="forbid"`` to
    #: refuse unknown keys); None accepts the entry's keys as written.
    entry_model: ClassVar[type[PluginEntry] | None] = None
    #: Its own settings, if it has any (``sourcedesk.core.config.settings.ProviderSettings``).
    settings_model: ClassVar[type[ProviderSettings] | None] = None

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""  # how messages name it ("Exa"); the name when empty
    marker_prefix: ClassVar[str] = ""
    uses_network: ClassVar[bool] = False  # skipped (with a warning) when retrieval is switched off
    #: The environment variable of its API key, when it needs one; the key itself is the
    #: settings field whose alias that variable is. Keys are redacted everywhere.
    key_env: ClassVar[str | None] = None

    @abstractmethod
    def describe(self, entry: Any, ctx: ProviderContext) -> dict[str, Any]:
        """The resolved request as plain JSON data (fingerprinted; shown by ``retrieve --json``)."""

    @abstractmethod
    async def fetch(self, entry: Any, ctx: ProviderContext) -> ProviderResult:
        """Retrieve the entry's sources, best first."""

    def open_client(self, settings: Settings) -> ProviderClient | None:
        """The client the sections of a run share; None for a provider without one."""
        return None

    @property
    def display_name(self) -> str:
        return self.label or self.name

    def own_settings(self, settings: Settings, model: type[SettingsT]) -> SettingsT:
        """This provider's settings, as ``model`` (its ``settings_model``)."""
        loaded = settings.provider_settings(self)
        if not isinstance(loaded, model):
            raise TypeError(f"provider {self.name!r} has no settings of type {model.__name__}")
        return loaded

    def api_key(self, settings: Settings) -> SecretStr | None:
        """Its key (from ``key_env`` or config.yaml), or None; blank counts as missing."""
        if self.key_env is None or self.settings_model is None:
            return None
        loaded = settings.provider_settings(self)
        for name, info in type(loaded).model_fields.items():
            aliases = getattr(info.validation_alias, "choices", [info.validation_alias])
            if self.key_env in aliases:
                value = getattr(loaded, name)
                if isinstance(value, SecretStr) and value.get_secret_value().strip():
                    return value
        return None

    def missing_key(self, settings: Settings) -> bool:
        """It needs a key and none is set."""
        return self.key_env is not None and self.api_key(settings) is None
