"""The include-sources provider registry.

``PROVIDERS`` maps an entry's ``provider:`` name to the object that resolves it.
The built-in providers register themselves on import; a new one (a vector store,
say) is one module with a ``Provider`` subclass and a ``register`` call.
"""

from __future__ import annotations

from core.providers.base import Provider, ProviderContext, ProviderResult

PROVIDERS: dict[str, Provider] = {}


def register(provider: Provider, *, replace: bool = False) -> Provider:
    """Make ``provider`` available under its name. Refuses a second provider with the
    same name or marker prefix (two prefixes colliding would merge citation namespaces)."""
    if not provider.name or not provider.marker_prefix:
        raise ValueError("a provider needs a name and a marker prefix")
    existing = PROVIDERS.get(provider.name)
    if existing is not None and not replace:
        raise ValueError(f"a provider named {provider.name!r} is already registered")
    for other in PROVIDERS.values():
        if other.name != provider.name and other.marker_prefix == provider.marker_prefix:
            raise ValueError(f"marker prefix {provider.marker_prefix!r} is already used by provider {other.name!r}")
    PROVIDERS[provider.name] = provider
    return provider


def unregister(name: str) -> None:
    PROVIDERS.pop(name, None)


def get_provider(name: str) -> Provider:
    try:
        return PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS)) or "none"
        raise KeyError(f"no include-sources provider named {name!r} (known: {known})") from None


def marker_prefixes() -> dict[str, str]:
    """Provider name → marker prefix, for marker assignment after packing."""
    return {p.name: p.marker_prefix for p in PROVIDERS.values()}


def _register_builtins() -> None:
    from core.providers.exa import ExaProvider
    from core.providers.files import FilesProvider

    for provider in (ExaProvider(), FilesProvider()):
        if provider.name not in PROVIDERS:
            register(provider)


_register_builtins()

__all__ = [
    "PROVIDERS",
    "Provider",
    "ProviderContext",
    "ProviderResult",
    "get_provider",
    "marker_prefixes",
    "register",
    "unregister",
]
