"""Writer backends, by the ``writer_api`` name that selects them.

Adding a backend is one module (a class with the :class:`~sourcedesk.core.writing.base.Writer`
attributes, usually a subclass of ``HttpWriter``) plus one line in ``_BUILTIN``
— or, from outside the package, one :func:`register_writer` call.
"""

from __future__ import annotations

import importlib

from sourcedesk.core.writing.base import Writer, WriteRequest, WriterError, WriterResponse

__all__ = [
    "WriteRequest",
    "Writer",
    "WriterError",
    "WriterResponse",
    "register_writer",
    "writer_apis",
    "writer_class",
]

# api name → "module:Class", imported on first use.
_BUILTIN: dict[str, str] = {
    "perplexity": "sourcedesk.core.writing.agent:AgentWriter",
    "perplexity-sonar": "sourcedesk.core.writing.sonar:SonarWriter",
    "openai": "sourcedesk.core.writing.openai_compat:OpenAICompatibleWriter",
}
_registered: dict[str, type[Writer]] = {}


def register_writer(cls: type[Writer]) -> type[Writer]:
    """Make ``cls`` selectable as ``writer_api: <cls.api>`` (usable as a class decorator)."""
    _registered[cls.api] = cls
    return cls


def writer_apis() -> list[str]:
    return list(dict.fromkeys([*_BUILTIN, *_registered]))


def writer_class(api: str) -> type[Writer]:
    """The backend class for ``api``; KeyError naming the known ones when there is none."""
    if api in _registered:
        return _registered[api]
    target = _BUILTIN.get(api)
    if target is None:
        raise KeyError(f"unknown writer API {api!r}; known: {', '.join(writer_apis())}")
    module, _, name = target.partition(":")
    cls: type[Writer] = getattr(importlib.import_module(module), name)
    _registered[api] = cls
    return cls
