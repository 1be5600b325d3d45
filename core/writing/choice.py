"""Which model or preset a section is written with, and what old memos mean on today's API.

The memo's ``writer:`` block (api, model, preset) is the default; a section's own
``writer:`` block wins. On a backend with presets (the Agent API) a strict
section — no web search — always runs on a *model*: a preset brings its own web
search and cannot drop it. Old Sonar model names load with a notice naming the
mapping applied (Perplexity's migration guide):

- ``sonar`` → ``perplexity/sonar`` with the ``web_search`` tool;
- ``sonar-pro``, ``sonar-reasoning``, ``sonar-reasoning-pro`` → ``preset: low``;
- ``sonar-deep-research`` → ``preset: medium``;

and every one of them → ``perplexity/sonar`` on a strict section.
"""

from __future__ import annotations

from dataclasses import dataclass

from sourcedesk.core.memo.spec import Memo, Section
from sourcedesk.core.writing.prompt import effective_web_search

AGENT_MODEL = "perplexity/sonar"
# retired Sonar chat-completions model → (model, preset) on the Agent API
LEGACY_MODELS: dict[str, tuple[str | None, str | None]] = {
    "sonar": (AGENT_MODEL, None),
    "sonar-pro": (None, "low"),
    "sonar-reasoning": (None, "low"),
    "sonar-reasoning-pro": (None, "low"),
    "sonar-deep-research": (None, "medium"),
}


@dataclass(frozen=True)
class WriterChoice:
    model: str | None  # None: the backend's own default
    preset: str | None  # only on backends with presets, never on a strict section
    legacy: str | None = None  # the old model name this was mapped from


def _raw(memo: Memo, section: Section) -> tuple[str | None, str | None]:
    own = section.writer
    if own is not None and (own.model or own.preset):
        return own.model, own.preset
    return memo.writer.model, memo.writer.preset


def choose(memo: Memo, section: Section, *, has_presets: bool, default_model: str | None = None) -> WriterChoice:
    """The model/preset for ``section`` on a backend (``default_model`` is the writer_model setting)."""
    model, preset = _raw(memo, section)
    strict = not effective_web_search(memo, section)
    if not has_presets:
        return WriterChoice(model or default_model, None)
    legacy = None
    if model is None and preset is None and default_model:
        model = default_model
    if model is not None and model.strip().lower() in LEGACY_MODELS:
        legacy = model.strip().lower()
        model, preset = LEGACY_MODELS[legacy]
    if strict:
        return WriterChoice(model or AGENT_MODEL, None, legacy)
    return WriterChoice(None if preset else model, preset, legacy)


def legacy_notices(memo: Memo) -> list[tuple[tuple[str | int, ...], str]]:
    """One line per retired Sonar name the memo uses, naming the mapping (Agent API only),
    with where in memo.yaml it is first written (``("writer", "model")``, ``("sections", i, …)``)."""
    names: dict[str, list[tuple[str, tuple[str | int, ...]]]] = {}
    if memo.writer.model and memo.writer.model.strip().lower() in LEGACY_MODELS:
        names.setdefault(memo.writer.model.strip().lower(), []).append(("writer.model", ("writer", "model")))
    for i, section in enumerate(memo.sections):
        if section.writer and section.writer.model and section.writer.model.strip().lower() in LEGACY_MODELS:
            where = ("sections", i, "writer", "model")
            names.setdefault(section.writer.model.strip().lower(), []).append((f"section {section.id}", where))
    out: list[tuple[tuple[str | int, ...], str]] = []
    for name, places in names.items():
        model, preset = LEGACY_MODELS[name]
        target = f"preset: {preset}" if preset else f"{model} with web search"
        text = (
            f"{', '.join(label for label, _ in places)}: {name} is a retired Sonar model; on the Agent API it runs "
            f"as {target} ({AGENT_MODEL} on strict sections) — write the new name in memo.yaml to silence this"
        )
        out.append((places[0][1], text))
    return out


def setting_notices(memo: Memo, api: str, writer_model: str | None) -> list[str]:
    """The ``writer_model`` setting naming a retired Sonar model, when a section of this memo
    runs on it on the Agent API (a memo's own ``writer.model``/``preset`` wins over the setting)."""
    name = (writer_model or "").strip().lower()
    if api != "perplexity" or name not in LEGACY_MODELS or memo.writer.model or memo.writer.preset:
        return []
    if all(s.writer is not None and (s.writer.model or s.writer.preset) for s in memo.sections):
        return []
    model, preset = LEGACY_MODELS[name]
    target = f"preset: {preset}" if preset else f"{model} with web search"
    return [
        f"the writer_model setting ({writer_model}) is a retired Sonar model; on the Agent API it runs as {target} "
        f"({AGENT_MODEL} on strict sections) — set writer_model to {AGENT_MODEL}, or unset it, to silence this"
    ]


def api_notices(memo: Memo, api: str) -> list[str]:
    """What the memo asks for that ``api`` cannot honour (said once, at load)."""
    from sourcedesk.core.writing.registry import writer_class

    try:
        cls = writer_class(api)
    except KeyError:
        return []
    out: list[str] = []
    presets = [("writer.preset", memo.writer.preset)] + [
        (f"section {s.id}", s.writer.preset) for s in memo.sections if s.writer is not None
    ]
    named = [where for where, preset in presets if preset]
    if named and not cls.has_presets:
        out.append(f"{', '.join(named)}: {cls.label} has no presets, so the preset is ignored")
    if api != "perplexity":
        models = [("writer.model", memo.writer.model)] + [
            (f"section {s.id}", s.writer.model) for s in memo.sections if s.writer is not None
        ]
        slugs = [f"{where} ({model})" for where, model in models if model and model.startswith("perplexity/")]
        if slugs:
            out.append(
                f"{', '.join(slugs)}: an Agent API model slug, which {cls.label} does not take — "
                "use api: perplexity, or a model this API knows"
            )
    return out
