"""The ``memo.yaml`` schema.

Keys may be written kebab-case (as in the design: ``include-sources``,
``num-results``) or snake_case. Unknown keys are errors, so a typo such as
``num_result`` is reported instead of silently ignored. Loading (with file/line
error messages and template checking) lives in ``sourcedesk.core.memo.loader``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from sourcedesk.core.text.phrases import normalise_phrase


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, alias_generator=_kebab)


class Namesake(_Model):
    """A name that is *not* the subject (``Kestra Medical Technologies``), with what it is."""

    name: str
    note: str = ""  # what it is: "a medical device maker"

    @model_validator(mode="before")
    @classmethod
    def _bare_name(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @field_validator("name")
    @classmethod
    def _has_words(cls, value: str) -> str:
        value = " ".join(value.split())
        if not normalise_phrase(value):
            raise ValueError("a namesake needs a name with at least one letter or digit")
        return value


class Subject(_Model):
    name: str
    url: str | None = None
    domains: list[str] = Field(default_factory=list)  # extra pinned domains (e.g. synadia.com)
    aliases: list[str] = Field(default_factory=list)
    description: str = ""
    namesakes: list[Namesake] = Field(default_factory=list)  # names that are NOT the subject

    @model_validator(mode="after")
    def _namesakes_are_not_the_subject(self) -> Subject:
        own = {normalise_phrase(n) for n in [self.name, *self.aliases]}
        for namesake in self.namesakes:
            if normalise_phrase(namesake.name) in own:
                raise ValueError(
                    f"namesake {namesake.name!r} is the subject's own name or alias; "
                    "namesakes list other organisations that share or resemble the name"
                )
        return self


class Firm(_Model):
    """The analyst's own firm. Its context frames the memo and never leaks into subject facts."""

    name: str = ""
    context: str = ""


class WriterConfig(_Model):
    api: str | None = None  # perplexity (Agent API) | perplexity-sonar | openai; None: the writer_api setting
    model: str | None = None  # None: the writer_model setting, else the API's default (perplexity/sonar)
    preset: str | None = None  # Agent API preset (fast, low, medium, high, xhigh) for web-search sections
    web_search: bool = True
    target_words: int = Field(default=350, ge=50, le=5000)
    # The range every writer API takes; strict, so `true` or a quoted "0.2" is not read as a number.
    temperature: float | None = Field(default=None, ge=0, le=2, strict=True)

    @field_validator("api")
    @classmethod
    def _known_api(cls, v: str | None) -> str | None:
        from sourcedesk.core.writing.registry import writer_apis

        if v is not None and v not in writer_apis():
            raise ValueError(f"unknown writer API {v!r}; use one of: {', '.join(writer_apis())}")
        return v

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, v: str | None) -> str | None:
        return _check_preset(v)

    @model_validator(mode="after")
    def _model_or_preset(self) -> WriterConfig:
        _one_of_model_or_preset(self.model, self.preset)
        return self


class SectionWriter(_Model):
    """A section's own choice of model or preset (the rest of the writer block is the memo's)."""

    model: str | None = None
    preset: str | None = None

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, v: str | None) -> str | None:
        return _check_preset(v)

    @model_validator(mode="after")
    def _model_or_preset(self) -> SectionWriter:
        _one_of_model_or_preset(self.model, self.preset)
        return self


def _check_preset(value: str | None) -> str | None:
    if value is None:
        return None
    from sourcedesk.core.writing.agent import UnknownPreset, canonical_preset

    if canonical_preset(value) is None:
        raise UnknownPreset(value)
    return value.strip().lower()


def _one_of_model_or_preset(model: str | None, preset: str | None) -> None:
    if model and preset:
        raise ValueError(f"give either model ({model}) or preset ({preset}), not both: a preset chooses its own model")


class SummarySpec(_Model):
    query: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")


class TextSpec(_Model):
    # Exa returns at most 10,000 characters of a page's text (and answers 400 past that).
    max_characters: int = Field(default=4000, ge=100, le=10_000)


class ContentsSpec(_Model):
    summary: SummarySpec | bool | None = True
    text: TextSpec | bool | None = None
    highlights: dict[str, Any] | bool | None = None


class ExaEntry(_Model):
    provider: Literal["exa"]
    query: str
    category: str | None = None  # company, people, news, research paper, pdf, ...
    type: str | None = None  # auto, fast, instant, neural, deep-lite, deep, deep-reasoning, lite
    num_results: int = Field(default=5, ge=1, le=100)
    pin: Literal["entity", "none"] = "entity"
    domains: list[str] = Field(default_factory=list)  # pinned in addition to the subject's
    exclude_domains: list[str] = Field(default_factory=list)
    start_published_date: str | None = None
    end_published_date: str | None = None
    contents: ContentsSpec = Field(default_factory=ContentsSpec)
    full_text: bool = False  # count page text (not the summary) against the budget


class FilesEntry(_Model):
    provider: Literal["files"]
    glob: list[str]
    max_files: int = Field(default=20, ge=1, le=500)
    full_text: bool = True

    @field_validator("glob", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


class PluginEntry(BaseModel):
    """An entry for a provider this schema does not know (a vector store, say).

    Its keys are kept as written; the loader checks that the provider is registered
    in ``sourcedesk.core.sources.providers`` and, when that provider declares an ``entry_model``,
    validates the entry with it. So a new provider needs no change here."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, alias_generator=_kebab)

    provider: str
    full_text: bool = False


BUILTIN_PROVIDERS = ("exa", "files")


def _entry_tag(value: Any) -> str | None:
    provider = value.get("provider") if isinstance(value, dict) else getattr(value, "provider", None)
    if not isinstance(provider, str):
        return None
    return provider if provider in BUILTIN_PROVIDERS else "plugin"


SourceEntry = Annotated[
    Annotated[ExaEntry, Tag("exa")] | Annotated[FilesEntry, Tag("files")] | Annotated[PluginEntry, Tag("plugin")],
    Discriminator(
        _entry_tag,
        custom_error_type="union_tag_not_found",
        custom_error_context={"discriminator": "'provider'"},
    ),
]


SECTION_ID_MAX = 64  # the id names the note file and the stored sets: it must fit every file system


class Section(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=SECTION_ID_MAX)
    title: str
    questions: list[str] = Field(default_factory=list)
    guidance: str = ""
    target_words: int | None = Field(default=None, ge=50, le=5000)
    web_search: bool | None = None  # None: use the memo's writer.web_search
    writer: SectionWriter | None = None  # this section's model or preset, over the memo's
    include_sources: list[SourceEntry] = Field(default_factory=list)


class MemoSettings(_Model):
    budget_chars: int | None = Field(default=None, ge=500)
    source_ttl_hours: float | None = None
    aggregators: list[str] | None = None  # overrides the global default list for pin: none
    protected_keys: list[str] = Field(default_factory=lambda: ["deck", "dataroom", "internal"])
    # The seeds' house style: a source cited once per paragraph (its last marker stays). Off by
    # default; even on, a sentence whose only citation is that marker keeps it.
    one_marker_per_source_per_paragraph: bool = False


def _as_text(number: int | float | bool) -> str:
    try:
        return str(number)
    except ValueError:  # an int Python will not print (over 4300 digits, e.g. a long 0x… run)
        raise ValueError("a number thousands of digits long: quote it if it is meant as text") from None


class SupportConfig(_Model):
    # "model": the writer's endpoint also judges the claims the offline check calls partial or
    # unchecked (its verdicts are stored beside the offline ones); None: the support_judge setting.
    judge: Literal["off", "model"] | None = None

    @field_validator("judge", mode="before")
    @classmethod
    def _yaml_off(cls, v: Any) -> Any:
        return "off" if v is False else v  # YAML reads a bare `off` as false


class Memo(_Model):
    title: str
    subject: Subject
    firm: Firm = Field(default_factory=Firm)
    writer: WriterConfig = Field(default_factory=WriterConfig)
    settings: MemoSettings = Field(default_factory=MemoSettings)
    support: SupportConfig = Field(default_factory=SupportConfig)
    vars: dict[str, str] = Field(default_factory=dict)  # extra {{name}} template variables
    sections: list[Section] = Field(min_length=1)

    @field_validator("vars", mode="before")
    @classmethod
    def _scalars_as_text(cls, v: Any) -> Any:
        """``vars: {year: 2024}`` means the text "2024"; YAML just typed it."""
        if isinstance(v, dict):
            return {k: _as_text(x) if isinstance(x, (int, float, bool)) else x for k, x in v.items()}
        return v

    @model_validator(mode="after")
    def _unique_section_ids(self) -> Memo:
        seen: set[str] = set()
        for s in self.sections:
            if s.id in seen:
                raise ValueError(f"section id {s.id!r} is used twice; section ids must be unique")
            seen.add(s.id)
        return self

    def section(self, section_id: str) -> Section:
        for s in self.sections:
            if s.id == section_id:
                return s
        raise KeyError(section_id)

    def section_index(self, section_id: str) -> int:
        return [s.id for s in self.sections].index(section_id)
