"""Fault injection: make the sandbox fail the way the real services fail.

A fault spec is ``[SERVICE:]KIND[*N]``: ``exa:429*2`` fails the next two Exa
requests with a 429 and then recovers; ``502-html`` (no service) fails every
request to both services with a gateway's HTML page. Without a service, ``*N``
counts per service (the next N Exa requests *and* the next N writer requests).
Several specs may be given (or comma-separated); the first rule that still
applies to a request wins. ``judge:KIND[*N]`` fails only the writer requests that are
sourcedesk's model-judge prompts (``sourcedesk.sandbox.writer_judge``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sourcedesk.core.domain import clock
from sourcedesk.sandbox.http import SERVICES, Reply, html_reply, json_reply, request_id, service_error

if TYPE_CHECKING:  # pragma: no cover - typing only
    from sourcedesk.sandbox.http import SandboxContext

DEFAULT_HOLD_S = 35.0  # longer than a typical 30 s client timeout
# Not a service: the writer's requests that are sourcedesk's model-judge prompts. "judge:500*1" fails
# the next judge request only (the section's own write goes through); other rules never touch them.
JUDGE = "judge"

FAULT_KINDS: dict[str, str] = {
    "429": "429 rate limited, no Retry-After header",
    "429-retry-after": "429 rate limited with Retry-After: 1",
    "500": "500 internal error (the service's JSON error shape)",
    "502-html": "502 with a gateway's HTML page instead of JSON",
    "timeout": "hold the connection past the client's timeout, then a 504 HTML page",
    "malformed": "200 with a truncated, invalid JSON body",
    "401": "401 invalid API key (Exa: JSON; writer: HTML page, as Perplexity does)",
    "402": "402 out of credits (Exa's NO_MORE_CREDITS body)",
    "empty": "200 with no results (Exa: results []; writer: empty answer, no search results)",
    "failed": "Agent API: HTTP 200 with status failed and an error (stream: response.failed); else a 500",
    "cancelled": "Agent API: HTTP 200 with status cancelled (stream: response.cancelled); else a 500",
    "incomplete": "Agent API: the answer cut off, status incomplete (max_output_tokens); else a 500",
    "stream-error": "Agent API stream: a bare error event halfway through the text; else a 500",
}
# Kinds the Agent API answers inside HTTP 200 (its handler builds them); elsewhere they are a 500.
OUTCOME_FAULTS = ("failed", "cancelled", "incomplete", "stream-error")
AGENT_PATHS = ("/v1/agent", "/v1/responses")


@dataclass
class FaultRule:
    kind: str
    service: str | None = None  # None: both services
    times: int | None = None  # None: every request
    used: dict[str, int] = field(default_factory=dict)  # per service

    def spec(self) -> str:
        prefix = f"{self.service}:" if self.service else ""
        suffix = f"*{self.times}" if self.times is not None else ""
        return f"{prefix}{self.kind}{suffix}"

    def applies(self, service: str) -> bool:
        if service == JUDGE or self.service == JUDGE:  # judge rules are for judge requests, and only they
            return self.service == service and (self.times is None or self.used.get(service, 0) < self.times)
        if self.service not in (None, service):
            return False
        return self.times is None or self.used.get(service, 0) < self.times


def parse_spec(spec: str) -> FaultRule:
    """One ``[SERVICE:]KIND[*N]`` string → a rule; ValueError naming the bad part."""
    text = spec.strip()
    service: str | None = None
    times: int | None = None
    if ":" in text:
        service, text = (part.strip() for part in text.split(":", 1))
        if service not in (*SERVICES, JUDGE):
            raise ValueError(f"fault {spec!r}: unknown service {service!r} (use {', '.join((*SERVICES, JUDGE))})")
    if "*" in text:
        text, count = (part.strip() for part in text.rsplit("*", 1))
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"fault {spec!r}: *N needs a whole number ≥ 1, got {count!r}")
        times = int(count)
    if text not in FAULT_KINDS:
        raise ValueError(f"fault {spec!r}: unknown kind {text!r} (choose from {', '.join(FAULT_KINDS)})")
    return FaultRule(kind=text, service=service, times=times)


class FaultPlan:
    """The active fault rules; ``next_fault`` is thread-safe and consumes ``*N`` budgets."""

    def __init__(self, rules: Iterable[FaultRule] = (), *, hold_s: float = DEFAULT_HOLD_S) -> None:
        self.rules = list(rules)
        self.hold_s = hold_s
        self._lock = threading.Lock()

    @classmethod
    def parse(cls, specs: Iterable[str] | str | None = (), *, hold_s: float = DEFAULT_HOLD_S) -> FaultPlan:
        if isinstance(specs, str):
            specs = [specs]
        rules = [parse_spec(part) for spec in specs or () for part in str(spec).split(",") if part.strip()]
        return cls(rules, hold_s=hold_s)

    def next_fault(self, service: str) -> str | None:
        with self._lock:
            for rule in self.rules:
                if rule.applies(service):
                    rule.used[service] = rule.used.get(service, 0) + 1
                    return rule.kind
        return None

    def describe(self) -> list[dict[str, object]]:
        """Each rule with how many requests it may still fail (None = unlimited)."""
        with self._lock:
            out: list[dict[str, object]] = []
            for rule in self.rules:
                services = [rule.service] if rule.service else list(SERVICES)
                remaining = (
                    None if rule.times is None else {s: max(0, rule.times - rule.used.get(s, 0)) for s in services}
                )
                out.append({"spec": rule.spec(), "remaining": remaining})
            return out

    def specs(self) -> list[str]:
        return [rule.spec() for rule in self.rules]


_GATEWAY_502 = """<html>
<head><title>502 Bad Gateway</title></head>
<body>
<center><h1>502 Bad Gateway</h1></center>
<hr><center>cloudflare</center>
</body>
</html>
"""

_GATEWAY_504 = """<html>
<head><title>504 Gateway Time-out</title></head>
<body>
<center><h1>504 Gateway Time-out</h1></center>
<hr><center>cloudflare</center>
</body>
</html>
"""

_PERPLEXITY_401 = """<html>
<head><title>401 Authorization Required</title></head>
<body>
<center><h1>401 Authorization Required</h1></center>
<hr><center>openresty/1.25.3.1</center>
</body>
</html>
"""


def _agent_body(text: str) -> dict[str, object]:
    return {
        "id": f"resp_{request_id()}",
        "object": "response",
        "created_at": int(clock.timestamp()),
        "status": "completed",
        "model": "perplexity/sonar",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
        "error": None,
    }


def _empty_reply(service: str, path: str = "") -> Reply:
    if service == "exa":
        return json_reply(
            200,
            {"requestId": request_id(), "results": [], "searchTime": 212.6, "costDollars": {"total": 0.007}},
        )
    if path in AGENT_PATHS:
        return json_reply(200, _agent_body(""))
    return json_reply(
        200,
        {
            "id": request_id(),
            "model": "sonar-pro",
            "created": int(clock.timestamp()),
            "object": "chat.completion",
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            "citations": [],
            "search_results": [],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ""}}],
        },
    )


def _malformed_reply(service: str, path: str = "") -> Reply:
    whole: dict[str, object]
    if service == "exa":
        whole = {
            "requestId": request_id(),
            "results": [{"id": "https://nats.io/", "url": "https://nats.io/", "title": "NATS.io – Cloud Native"}],
        }
    elif path in AGENT_PATHS:
        whole = _agent_body("NATS is a connective technology for distributed systems")
    else:
        whole = {
            "id": request_id(),
            "model": "sonar-pro",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "NATS is a connective"}}],
        }
    text = json.dumps(whole)
    return Reply(200, text[: len(text) * 2 // 3].encode("utf-8"), {"Content-Type": "application/json"})


def fault_reply(kind: str, service: str, ctx: SandboxContext, path: str = "") -> Reply:
    """The reply for an injected fault. ``timeout`` blocks (until the hold ends or the server stops)."""
    if kind == "429":
        return service_error(service, 429, "Rate limit exceeded", tag="RATE_LIMIT_EXCEEDED", kind="rate_limit_exceeded")
    if kind == "429-retry-after":
        return service_error(
            service,
            429,
            "Rate limit exceeded",
            tag="RATE_LIMIT_EXCEEDED",
            kind="rate_limit_exceeded",
            headers={"Retry-After": "1"},
        )
    if kind == "500":
        return service_error(service, 500, "Internal server error", tag="INTERNAL_ERROR", kind="internal_server_error")
    if kind == "502-html":
        return html_reply(502, _GATEWAY_502)
    if kind == "timeout":
        ctx.wait(ctx.faults.hold_s)
        return html_reply(504, _GATEWAY_504)
    if kind == "malformed":
        return _malformed_reply(service, path)
    if kind == "401":
        if service == "exa":
            return service_error(service, 401, "Invalid API key", tag="INVALID_API_KEY")
        if path in AGENT_PATHS:
            return service_error(service, 401, "Invalid API key provided", kind="forbidden")
        return html_reply(401, _PERPLEXITY_401)
    if kind == "402":
        return service_error(
            service,
            402,
            "You have no more credits available. Top up at dashboard.exa.ai to continue."
            if service == "exa"
            else "Insufficient credits: add credits to your API account to continue.",
            tag="NO_MORE_CREDITS",
            kind="insufficient_quota",
        )
    if kind == "empty":
        return _empty_reply(service, path)
    if kind in OUTCOME_FAULTS:  # only the Agent API wraps these in HTTP 200
        return service_error(
            service, 500, f"Internal server error ({kind})", tag="INTERNAL_ERROR", kind="internal_error"
        )
    raise ValueError(f"unknown fault kind {kind!r}")
