"""The include-sources provider registry.

``PROVIDERS`` maps an entry's ``provider:`` name to the object that resolves it.
The built-ins (``exa``, ``files``) register on import; any installed distribution
adds more through the ``sourcedesk.providers`` entry-point group, each entry point
naming a ``Provider`` subclass (or an instance, or a function returning one):

    [project.entry-points."sourcedesk.providers"]
    vectors = "acme_vectors:VectorProvider"

A plugin that fails to load never takes the others down: its error is kept and
named when a memo asks for that provider.
"""

from __future__ import annotations

import logging
import os
import sys
from importlib.metadata import EntryPoint, entry_points

from sourcedesk.core.sources.providers.base import (
    Provider,
    ProviderClient,
    ProviderClients,
    ProviderContext,
    ProviderResult,
)
from sourcedesk.core.text.secrets import watch_secret_env

log = logging.getLogger("sourcedesk.providers")

ENTRY_POINT_GROUP = "sourcedesk.providers"

PROVIDERS: dict[str, Provider] = {}
PLUGIN_ERRORS: dict[str, str] = {}  # entry-point name -> why it could not be loaded


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
    if provider.key_env:
        watch_secret_env(provider.key_env)
    PROVIDERS[provider.name] = provider
    PLUGIN_ERRORS.pop(provider.name, None)
    return provider


def unregister(name: str) -> None:
    PROVIDERS.pop(name, None)


def get_provider(name: str) -> Provider:
    try:
        return PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS)) or "none"
        broken = (
            f"; the installed plugin {name!r} failed to load: {PLUGIN_ERRORS[name]}" if name in PLUGIN_ERRORS else ""
        )
        raise KeyError(f"no include-sources provider named {name!r} (known: {known}){broken}") from None


def marker_prefixes() -> dict[str, str]:
    """Provider name → marker prefix, for marker assignment after packing."""
    return {p.name: p.marker_prefix for p in PROVIDERS.values()}


def _instance(loaded: object) -> Provider:
    if isinstance(loaded, Provider):
        return loaded
    if isinstance(loaded, type) and issubclass(loaded, Provider):
        return loaded()
    if callable(loaded):
        made = loaded()
        if isinstance(made, Provider):
            return made
    raise TypeError(f"it names {loaded!r}, which is not a sourcedesk Provider")


def _load(entry_point: EntryPoint) -> None:
    try:
        provider = _instance(entry_point.load())
        if provider.name in PROVIDERS and type(PROVIDERS[provider.name]) is type(provider):
            return  # found again by a later discover(): already in use
        register(provider)
    except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, never fatal to the others
        PLUGIN_ERRORS[entry_point.name] = f"{type(exc).__name__}: {exc}"
        log.warning("provider plugin %s (%s) could not be loaded: %s", entry_point.name, entry_point.value, exc)


def _any_distribution_declares_the_group() -> bool:
    """Whether an installed distribution's ``entry_points.txt`` names the group at all.

    Reading the entry points through ``importlib.metadata`` parses every distribution's
    metadata (about 60 ms here), which every command would pay at start-up for nothing
    when — as usual — no provider plugin is installed; this look at the small
    ``entry_points.txt`` files costs a few milliseconds. Distributions installed as
    directories (what pip does) are seen; the metadata is then read the standard way."""
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as found:
                infos = [d.path for d in found if d.name.endswith((".dist-info", ".egg-info"))]
        except OSError:  # a zip file on the path, a missing directory
            continue
        for info in infos:
            try:
                with open(os.path.join(info, "entry_points.txt"), encoding="utf-8", errors="replace") as f:
                    if ENTRY_POINT_GROUP in f.read():
                        return True
            except OSError:
                continue
    return False


def discover() -> list[str]:
    """Register the providers installed distributions declare (``sourcedesk.providers``);
    the names found. Safe to call again after installing one into a running process."""
    if not _any_distribution_declares_the_group():
        return []
    found = []
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        _load(entry_point)
        found.append(entry_point.name)
    return found


def _register_builtins() -> None:
    from sourcedesk.core.sources.providers.exa.provider import ExaProvider
    from sourcedesk.core.sources.providers.files import FilesProvider

    for provider in (ExaProvider(), FilesProvider()):
        if provider.name not in PROVIDERS:
            register(provider)


_register_builtins()
discover()

__all__ = [
    "ENTRY_POINT_GROUP",
    "PLUGIN_ERRORS",
    "PROVIDERS",
    "Provider",
    "ProviderClient",
    "ProviderClients",
    "ProviderContext",
    "ProviderResult",
    "discover",
    "get_provider",
    "marker_prefixes",
    "register",
    "unregister",
]
