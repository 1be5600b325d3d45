"""What every include-sources provider is, and what it is handed.

A provider turns one ``include-sources`` entry into ranked ``Source`` records plus
an honest account of what it removed and why. Two methods only:

- ``describe`` — the request as it will be sent (templates rendered, pins and
  exclusions resolved), without touching the network: the frozen-set
  fingerprint is computed from it, so "same request" is decided before any cost.
- ``fetch`` — do it. Failures a provider can name (Exa's 401, a timeout) are
  raised as ``core.exa.ExaError`` or returned as ``degraded`` warnings; the
  retrieval stage turns them into warnings and carries on.

Adding a provider means a new module that subclasses ``Provider`` and calls
``register`` — no other provider, and nothing in ``core.retrieval``, changes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from core.models import RemovedSource, RunWarning, Source

if TYPE_CHECKING:  # pragma: no cover - typing only
    from core.exa import ExaClient
    from core.memo import Memo, Section
    from core.settings import Settings


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
    exa: ExaClient | Callable[[], ExaClient] | None = None
    entry_index: int = 0
    now: datetime | None = None

    def exa_client(self) -> ExaClient | None:
        """The shared client (built lazily by a factory so a run without Exa entries opens no socket)."""
        if callable(self.exa) and not hasattr(self.exa, "search"):
            self.exa = self.exa()
        return self.exa  # type: ignore[return-value]

    def with_entry(self, index: int) -> ProviderContext:
        from dataclasses import replace

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

    #: A provider the memo schema does not know validates its entries with this model
    #: (kebab-case keys welcome); None accepts the entry's keys as written.
    entry_model: type[BaseModel] | None = None

    name: str = ""
    marker_prefix: str = ""
    uses_network: bool = False  # skipped (with a warning) when retrieval is switched off

    @abstractmethod
    def describe(self, entry: Any, ctx: ProviderContext) -> dict[str, Any]:
        """The resolved request as plain JSON data (fingerprinted; shown by ``retrieve --json``)."""

    @abstractmethod
    async def fetch(self, entry: Any, ctx: ProviderContext) -> ProviderResult:
        """Retrieve the entry's sources, best first."""
