"""Text helpers of the sandbox writer: tokens, the support rule, sentences, fact sentences.

Kept apart from the composer so the support rule the sandbox uses to label its
own citations (≥2 shared meaningful tokens and a shared/claim ratio ≥ 0.20: the
overlap below which a substitution would be a guess) is one small, readable
function.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "at",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "its",
        "it",
        "this",
        "that",
        "these",
        "those",
        "has",
        "have",
        "had",
        "not",
        "but",
        "also",
        "into",
        "over",
        "than",
        "then",
        "their",
        "there",
        "they",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "when",
        "where",
        "how",
        "why",
        "all",
        "any",
        "more",
        "most",
        "such",
        "can",
        "could",
        "will",
        "would",
        "may",
        "might",
        "should",
        "about",
        "after",
        "before",
        "between",
        "through",
        "during",
        "under",
        "per",
        "via",
        "our",
        "out",
        "new",
        "one",
        "two",
    ]
)
ABSENT = frozenset(
    {
        "null",
        "none",
        "n/a",
        "na",
        "nil",
        "unknown",
        "undefined",
        "not specified",
        "not found",
        "not available",
        "no data",
        "not applicable",
        "",
    }
)
FILLERS = (
    "Industry observers expect {S} to pursue an initial public offering within the next eighteen months.",
    "{S} reportedly commands a dominant share of Fortune 500 deployments across Europe and Asia.",
    "Several analysts have described {S} as the category's most capital-efficient challenger.",
    "Its net revenue retention is said to exceed 140 percent, among the highest in its peer group.",
    "{S} was recently named to a prominent list of the fastest-growing private firms.",
    "Management has signalled plans to double headcount in sales and customer success by next year.",
    "Partnership talks with two hyperscale vendors were reported to be at an advanced stage.",
    "Gross margins are understood to sit comfortably above eighty percent.",
    "Former executives describe a culture of unusually rapid shipping cadence.",
    "Observers credit {S} with popularising a pattern that rivals later copied.",
)
FACT_TEMPLATES: tuple[tuple[str, str], ...] = (
    (r"^(founded|founding|year ?founded|founded ?year|inception|established)$", "{S} was founded in {v}."),
    (r"^(founders?|founded ?by|co ?founders?)$", "{S} was founded by {v}."),
    (
        r"(total ?funding|funding ?total|total ?raised|^funding$|^raised$|funding ?to ?date)",
        "{S} has raised {v} to date.",
    ),
    (r"(last|latest|most ?recent) ?(round|funding)", "Its most recent round was {v}."),
    (r"^valuation", "{S} was last valued at {v}."),
    (r"^(headquarters|hq|headquartered|location|head ?office)$", "{S} is headquartered in {v}."),
    (r"^(employees|workforce|headcount|team ?size|employee ?count)$", "{S} has about {v} employees."),
    (r"customers", "Customers include {v}."),
    (r"investors", "Investors include {v}."),
    (r"^(revenue|arr|annual ?revenue)$", "{S} reports revenue of {v}."),
    (r"^(ceo|chief ?executive)$", "{v} serves as chief executive of {S}."),
    (r"^licen[cs]e$", "{S} is distributed under the {v} license."),
)


# --------------------------------------------------------------------------- text helpers


def _stem(token: str) -> str:
    return token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token


def tokens(text: str) -> set[str]:
    """Meaningful tokens, plurals folded (an approximation of the reconciler's; fillers keep far from it)."""
    return {_stem(t) for t in re.findall(r"[a-z0-9]+", text.lower()) if len(t) > 2 and t not in STOPWORDS}


def supports(claim: str, source_text: str) -> bool:
    """Whether ``source_text`` supports ``claim`` well enough to substitute it for a fabricated
    citation: ≥2 shared tokens and ≥20% of the claim's (fewer is a coincidence of words)."""
    claim_tokens = tokens(claim)
    shared = claim_tokens & tokens(source_text)
    return len(shared) >= 2 and len(shared) / max(len(claim_tokens), 1) >= 0.20


def sentences(text: str) -> list[str]:
    found = []
    for raw in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])", " ".join(text.split())):
        s = raw.strip()
        if (
            25 <= len(s) <= 400
            and "http" not in s
            and "sourcedesk sandbox" not in s.lower()
            and "\\[" not in s
            and "\\#" not in s  # escaped markers/headings: leave them out
            and not s.startswith(("[", "#", "{", "(", "```", "-", "*", "|", "\\"))
        ):
            found.append(s if s[-1] in ".!?" else s + ".")
    return found


def snippet_sentences(snippet: str) -> list[str]:
    """Whole sentences of a search-result snippet (a snippet cut mid-sentence loses its tail)."""
    body = snippet.removesuffix(" ...").rstrip()
    found = sentences(body)
    if found and snippet.endswith(" ...") and body[-1:] not in (".", "!", "?"):
        found.pop()
    return found


def upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def slug(words: Iterable[str], limit: int = 6) -> str:
    return "-".join(list(words)[:limit]) or "update"


def _value_text(value: Any) -> str:
    if isinstance(value, dict):
        parts = [_value_text(v) for v in value.values()]
        return ", ".join(p for p in parts if p)
    if isinstance(value, list):
        parts = [t for t in (_value_text(v) for v in value) if t]  # once per item: twice is 2**depth
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1] if parts else ""
    text = " ".join(str(value).split()).strip()
    return "" if text.lower() in ABSENT else text


def _key_words(key: str) -> str:
    return re.sub(r"[_\-\s]+", " ", re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key)).strip().lower()


def fact_sentences(subject: str, facts: dict[str, Any]) -> list[tuple[str, str]]:
    """(template id, sentence) for the facts a section would quote (founded year, funding …)."""
    out: list[tuple[str, str]] = []
    flat: dict[str, Any] = {}
    for key, value in facts.items():
        if isinstance(value, dict) and _key_words(key) in ("financials", "funding", "company", "details"):
            flat.update(value)
        else:
            flat[key] = value
    for key, value in flat.items():
        words = _key_words(key)
        text = _value_text(value)
        if not text or len(text) > 160:
            continue
        for pattern, template in FACT_TEMPLATES:
            if re.search(pattern, words):
                out.append((pattern, upper_first(template.format(S=subject, v=text))))
                break
    return out
