"""What every writer backend shares: the request, the answer, the failure, the protocol.

A backend turns one :class:`WriteRequest` (the section's prompt and what the
pipeline decided about web search, the domain filter and the model) into one
:class:`WriterResponse`, or raises :class:`WriterError`. The pipeline never asks
which API it is talking to: it asks the backend what it can do
(``searches_web``), so a new API is a new module, not a new ``if``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import httpx
from pydantic import SecretStr

from sourcedesk.core.net.policy import RetryPolicy
from sourcedesk.core.writing.prompt import Prompt
from sourcedesk.core.writing.results import WebResults

ErrorKind = Literal[
    "auth",
    "bad_request",
    "payment",
    "forbidden",
    "not_found",
    "rate_limited",
    "server",
    "timeout",
    "network",
    "malformed",
    "too_large",  # the answer is over writer_max_response_bytes or writer_max_answer_chars (not retried)
    "failed",  # the API ran the request and reported it failed (Agent API status: failed)
    "cancelled",  # the API reports the run was cancelled on its side
]

TextCallback = Callable[[str], None]

DEFAULT_TIMEOUT_S = 120.0  # per read (writer_timeout_s)
DEFAULT_DEADLINE_S = 240.0  # one call in all, retries included (writer_deadline_s)
DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024  # writer_max_response_bytes
DEFAULT_MAX_ANSWER_CHARS = 1_000_000  # writer_max_answer_chars: what one note may hold


class WriterError(Exception):
    """The writer call failed; ``str()`` is a message fit for the analyst (never the key or the prompt)."""

    def __init__(self, kind: ErrorKind, status: int | None, message: str, *, requests: int = 0):
        self.kind: ErrorKind = kind
        self.status = status
        self.message = message
        self.requests = requests
        super().__init__(message)

    def __repr__(self) -> str:
        return f"WriterError(kind={self.kind!r}, status={self.status!r}, message={self.message!r})"


@dataclass(frozen=True)
class WriteRequest:
    """One section's call, in the pipeline's terms (each backend maps it to its own body).

    ``web_search`` False is strict mode: the frozen set is the only citable material.
    ``preset`` is honoured only by backends that have presets, and never in strict mode.
    ``extra`` is merged into chat-completions bodies (gateway knobs); the strict Agent
    API refuses it rather than send a field it would answer with HTTP 400.
    """

    prompt: Prompt
    web_search: bool = True
    domain_filter: tuple[str, ...] = ()
    model: str | None = None
    preset: str | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None
    extra: Mapping[str, Any] | None = None


@dataclass
class WriterResponse:
    """Everything the answer carried, read once at parse time.

    ``web`` is the writer's own search results, flattened in API order and
    numbered the way the API numbers them (malformed items skipped without
    shifting the others); ``annotations`` records what each ``url_citation`` did
    to the text; ``warnings`` are for the section (a truncated answer, skipped
    results, ignored annotations).
    """

    content: str
    web: WebResults = field(default_factory=WebResults)
    citations: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    cost_dollars: float = 0.0
    model: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    requests: int = 1
    truncated: str | None = None  # why the answer was cut off ("max_output_tokens", "length"), else None
    reasoning: str = ""  # a reasoning model's leading <think> block, kept out of ``content``
    warnings: list[str] = field(default_factory=list)
    annotations: list[dict[str, Any]] = field(default_factory=list)
    # The unit url_citation offsets were read in ("code points", "utf-16", "utf-8"); "none" when no unit
    # lined them up (the markers alone were used); None when the answer carried no usable annotation.
    offset_unit: str | None = None

    @property
    def search_results(self) -> list[dict[str, Any]]:
        """The usable web results as plain dicts (``n`` is the number a bare ``[n]`` means)."""
        return [r.as_dict() for r in self.web.results]

    @property
    def finish_reason(self) -> str | None:
        """Chat-completions spelling of ``truncated`` (``"length"`` when cut off)."""
        return "length" if self.truncated else None


@runtime_checkable
class Writer(Protocol):
    """A writer backend. Instances are safe to share between concurrent sections."""

    api: ClassVar[str]  # the ``writer_api`` / ``writer.api`` value that selects it
    label: ClassVar[str]  # what the analyst reads ("Perplexity Agent API")
    key_name: ClassVar[str]  # the environment variable holding its key
    searches_web: ClassVar[bool]  # can it run its own web search (else every section is strict)
    has_presets: ClassVar[bool]
    needs_key: ClassVar[bool]  # a call without a key fails before any request
    default_model: ClassVar[str | None]

    model: str  # the model sent when a request names none

    def __init__(
        self,
        base_url: str,
        api_key: SecretStr | str | None,
        *,
        model: str | None = None,
        http: httpx.AsyncClient | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy = ...,
        requests_per_minute: float | None = 50,
        stream: bool = False,
        deadline_s: float = DEFAULT_DEADLINE_S,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
    ) -> None: ...

    def request_body(self, request: WriteRequest) -> dict[str, Any]: ...

    async def write(self, request: WriteRequest, *, on_text: TextCallback | None = None) -> WriterResponse: ...

    def describe(self, request: WriteRequest | None = None) -> str: ...
