"""``search_domain_filter``: the entity pin or the rejections, as Perplexity takes them.

Both Perplexity APIs take at most 20 scheme-less entries (a product setting, in
case the limit moves), either all allow-list or all ``-``deny-list (mixing is a
400). Whatever does not fit is still enforced on the writer's results.
"""

from __future__ import annotations

from sourcedesk.core.net.urls import host_of, strip_www

DOMAIN_FILTER_CAP = 20  # Perplexity's documented maximum; the product setting is writer_domain_filter_cap


def _filter_domain(entry: str) -> str | None:
    """``https://www.Nats.io/x`` → ``nats.io``; None when there is no usable host."""
    raw = entry.strip().lstrip("-").strip()
    host = host_of(raw) if raw else None
    if not host or "." not in host:
        return None
    return strip_www(host)


def domain_filter_for(pins: list[str], rejects: list[str], *, cap: int = DOMAIN_FILTER_CAP) -> list[str]:
    """The writer's ``search_domain_filter``: all allow or all ``-``deny, never mixed.

    - Pinned to an entity: the pinned domains, as an allow-list (first ``cap``).
    - Otherwise: ``rejects`` as a deny-list, in the order given. Pass them most
      important first — the analyst's rejections newest first, then the
      aggregators — so entries past ``cap`` fall off the end. Every rejection is
      still enforced on the writer's results, filter or not.
    - ``[]`` when nothing applies (no filter is sent).
    """
    cap = max(int(cap), 0)

    def unique(entries: list[str]) -> list[str]:
        out: list[str] = []
        for e in entries:
            d = _filter_domain(e)
            if d and d not in out:
                out.append(d)
        return out[:cap]

    allowed = unique(pins)
    if allowed:
        return allowed
    return ["-" + d for d in unique(rejects)]
