"""Toggle a section's pin mode in ``memo.yaml`` — the analyst's own file — without disturbing it.

Decision: the pin mode is written back to memo.yaml (not kept as a hidden override
in the store), because memo.yaml is the one place an analyst reads to know what a
section asks for; a store-side override would make the file lie. To make that safe:

- the edit is a **minimal text edit**: only the ``pin:`` value of the section's Exa
  entries changes (or one ``pin: none`` line / ``, pin: none`` item is inserted
  where the key was absent); comments, order, quoting and blank lines stay;
- the result is **verified** before it is written: parsed again, it must equal the
  original data with exactly those pins changed, and still validate as a memo;
- the file is replaced **atomically**, keeping its permissions, and only if it did
  not change on disk since it was read.

Anything outside those bounds (anchors/aliases on the entry, a file edited in the
meantime, a layout the edit cannot place a key into) is refused with a message
telling the analyst which line to edit by hand. Nothing is ever half-written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sourcedesk.core.domain.errors import UserError
from sourcedesk.core.files.atomic import atomic_write_bytes
from sourcedesk.core.memo.spec import Memo

PIN_MODES = ("entity", "none")


@dataclass
class PinEdit:
    section_id: str
    old: list[str]  # pin mode of each Exa entry before
    new: str
    changed: int  # entries whose pin changed


_NO_TIMESTAMPS = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _Loader(yaml.SafeLoader):
    """Dates stay text, as in sourcedesk.core.memo.loader (the comparison must see what the memo sees)."""

    yaml_implicit_resolvers = _NO_TIMESTAMPS


def _get(mapping: yaml.Node, *names: str) -> tuple[yaml.ScalarNode, yaml.Node] | None:
    if not isinstance(mapping, yaml.MappingNode):
        return None
    for key, value in mapping.value:
        if isinstance(key, yaml.ScalarNode) and key.value in names:
            return key, value
    return None


def _refuse(path: Path, line: int | None, why: str) -> UserError:
    where = f"{path.name}:{line}" if line else path.name
    return UserError(
        f"could not change the pin mode in {where} safely: {why}",
        hint="edit `pin: entity` / `pin: none` under the section's include-sources by hand",
    )


def _entries(root: yaml.Node, section_id: str, path: Path) -> list[yaml.MappingNode]:
    sections = _get(root, "sections")
    if sections is None or not isinstance(sections[1], yaml.SequenceNode):
        raise _refuse(path, None, "no sections list")
    for item in sections[1].value:
        found = _get(item, "id")
        if found and isinstance(found[1], yaml.ScalarNode) and found[1].value == section_id:
            sources = _get(item, "include-sources", "include_sources")
            if sources is None or not isinstance(sources[1], yaml.SequenceNode):
                return []
            out = []
            for entry in sources[1].value:
                provider = _get(entry, "provider")
                if provider and isinstance(provider[1], yaml.ScalarNode) and provider[1].value == "exa":
                    out.append(entry)
            return out
    raise _refuse(path, None, f"no section with id {section_id!r}")


def _scalar_text(node: yaml.ScalarNode, value: str) -> str:
    if node.style == '"':
        return f'"{value}"'
    if node.style == "'":
        return f"'{value}'"
    return value


def _plan_edits(text: str, entry: yaml.MappingNode, new: str, path: Path) -> list[tuple[int, int, str]]:
    """(start, end, replacement) spans for one entry."""
    line = entry.start_mark.line + 1
    found = _get(entry, "pin")
    if found is not None:
        key, value = found
        if not isinstance(value, yaml.ScalarNode) or value.style in ("|", ">") or value.tag != "tag:yaml.org,2002:str":
            raise _refuse(path, key.start_mark.line + 1, "the pin value is not a plain word")
        if value.value == new:
            return []
        return [(value.start_mark.index, value.end_mark.index, _scalar_text(value, new))]
    if new == "entity":
        return []  # absent means entity (the schema default)
    if entry.flow_style:
        close = entry.end_mark.index - 1
        if close < 0 or text[close] != "}":
            raise _refuse(path, line, "unexpected layout of the entry")
        at = close
        while at > 0 and text[at - 1] in " \t":
            at -= 1
        return [(at, at, f", pin: {new}")]
    found = _get(entry, "provider")
    assert found is not None  # _entries keeps only the entries that name their provider
    provider_key, provider_value = found
    newline = "\r\n" if "\r\n" in text else "\n"
    eol = text.find("\n", provider_value.end_mark.index)
    indent = " " * provider_key.start_mark.column
    if eol == -1:
        return [(len(text), len(text), f"{newline}{indent}pin: {new}{newline}")]
    return [(eol + 1, eol + 1, f"{indent}pin: {new}{newline}")]


def _expected(data: Any, section_id: str, new: str) -> Any:
    # A JSON round trip, not deepcopy: YAML aliases share one object, and the expectation must
    # change *only* this section's entries (an alias elsewhere must show up as a difference).
    want = json.loads(json.dumps(data, default=str))
    for section in want.get("sections", []):
        if isinstance(section, dict) and section.get("id") == section_id:
            key = "include-sources" if "include-sources" in section else "include_sources"
            for entry in section.get(key) or []:
                if isinstance(entry, dict) and entry.get("provider") == "exa" and ("pin" in entry or new != "entity"):
                    entry["pin"] = new
    return want


def set_section_pin(memo_path: Path, section_id: str, new: str) -> PinEdit:
    """Set every Exa entry of the section to ``pin: new``; returns what changed."""
    if new not in PIN_MODES:
        raise ValueError(f"pin mode must be one of {PIN_MODES}")
    path = Path(memo_path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        text = raw.decode("utf-8-sig")
        root = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise _refuse(path, None, f"it does not parse ({exc.__class__.__name__})") from None
    if root is None:
        raise _refuse(path, None, "no sections list")
    entries = _entries(root, section_id, path)
    if not entries:
        raise UserError(f"section {section_id!r} has no Exa entry: there is no pin mode to change")
    old = [str(pin[1].value) if (pin := _get(e, "pin")) else "entity" for e in entries]
    edits = [span for e in entries for span in _plan_edits(text, e, new, path)]
    result = PinEdit(section_id=section_id, old=old, new=new, changed=sum(1 for o in old if o != new))
    if not edits:
        return result
    edited = text
    for start, end, replacement in sorted(edits, key=lambda e: e[0], reverse=True):
        edited = edited[:start] + replacement + edited[end:]
    try:
        again = yaml.load(edited, Loader=_Loader)
    except yaml.YAMLError:
        raise _refuse(path, entries[0].start_mark.line + 1, "the edited file would not parse") from None
    if again != _expected(data, section_id, new):
        raise _refuse(path, entries[0].start_mark.line + 1, "the edit would change more than the pin")
    try:
        Memo.model_validate(again)
    except Exception:  # noqa: BLE001 - any validation failure means: do not write
        raise _refuse(path, entries[0].start_mark.line + 1, "the edited memo would not validate") from None
    try:
        if path.read_bytes() != raw:
            raise UserError(f"{path.name} changed on disk while it was being edited", hint="toggle the pin again")
        atomic_write_bytes(path, (b"\xef\xbb\xbf" if bom else b"") + edited.encode("utf-8"))  # keeps the mode
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}", hint="check the file's permissions") from None
    return result


def toggle_section_pin(memo_path: Path, section_id: str, current: list[str]) -> PinEdit:
    """entity ↔ none: a section with any pinned entry goes wide; an all-wide one gets pinned."""
    new = "none" if "entity" in current else "entity"
    return set_section_pin(memo_path, section_id, new)
