"""The provider plugin API, installed as ``sourcedesk.providers``.

A retrieval provider outside this repository imports everything it needs from here and
nothing else, so the product can move its modules without breaking a plugin::

    from sourcedesk.providers import Provider, ProviderContext, ProviderResult, Source

and registers itself through the ``sourcedesk.providers`` entry-point group (see
ARCHITECTURE.md, "A retrieval provider"). This folder lives in ``core/`` but is installed
only under ``sourcedesk.providers``: core's own code never imports it.
"""

from sourcedesk.core.config.settings import ProviderSettings, Settings
from sourcedesk.core.domain.errors import RetrievalError
from sourcedesk.core.domain.models import RemovedSource, RunWarning, Source
from sourcedesk.core.memo.spec import Memo, PluginEntry, Section
from sourcedesk.core.memo.templates import render
from sourcedesk.core.sources.providers import (
    ENTRY_POINT_GROUP,
    PLUGIN_ERRORS,
    PROVIDERS,
    Provider,
    ProviderClient,
    ProviderClients,
    ProviderContext,
    ProviderResult,
    discover,
    get_provider,
    register,
    unregister,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "PLUGIN_ERRORS",
    "PROVIDERS",
    "Memo",
    "PluginEntry",
    "Provider",
    "ProviderClient",
    "ProviderClients",
    "ProviderContext",
    "ProviderResult",
    "ProviderSettings",
    "RemovedSource",
    "RetrievalError",
    "RunWarning",
    "Section",
    "Settings",
    "Source",
    "discover",
    "get_provider",
    "register",
    "render",
    "unregister",
]
