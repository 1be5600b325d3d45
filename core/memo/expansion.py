"""How large memo.yaml becomes once its YAML aliases are expanded — capped before anything expands it.

An alias (``*name``) stands for the whole node its anchor (``&name``) marks, so a few
hundred bytes of anchors nested ten deep stand for billions of values. PyYAML builds
them as shared objects, cheaply; what comes after does not share: the schema copies
every value (``contents.summary.schema`` is free-form, so nothing stops it there), the
fingerprint serialises them, the Exa request sends them. A 700-byte memo ran 110 s to
5 GB and a MemoryError; a smaller one sent a 7 MB body to Exa.

So the composed node tree is measured first — each distinct node once, its expanded
size remembered — and a memo whose document, or any one field of it, would hold more
than the caps is refused with the line of the field and the path to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from sourcedesk.core.memo.messages import Problem, node_line

MAX_FIELD_VALUES = 20_000  # values one field (a mapping value, a list item) may expand to
MAX_DOCUMENT_VALUES = 200_000  # values the whole memo may expand to (a real outline holds a few thousand)
MAX_ALIASES = 1_000  # alias references in one memo


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


@dataclass
class _Measure:
    sizes: dict[int, int]  # id(node) -> values it expands to
    aliases: int  # references to a node already seen (what an alias is, once composed)


def _measure(root: yaml.Node) -> _Measure:
    """Expanded sizes of every node, each distinct node computed once (no recursion: depth is the
    composer's problem, not this one's)."""
    sizes: dict[int, int] = {}
    aliases = 0
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    seen: set[int] = set()
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            sizes[key] = 1 + sum(sizes.get(id(c), 0) for c in _children(node))
            continue
        if key in seen:
            aliases += 1  # a node reached twice is an alias's target (or a cycle: counted, not followed)
            continue
        seen.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))
    return _Measure(sizes, aliases)


def _label(key: yaml.Node) -> str:
    return str(key.value) if isinstance(key, yaml.ScalarNode) else "?"


def _largest_field(root: yaml.Node, sizes: dict[int, int]) -> tuple[yaml.Node, str]:
    """The innermost field still over ``MAX_FIELD_VALUES`` on the way down from the root."""
    node, path = root, ""
    while True:
        if isinstance(node, yaml.MappingNode):
            named = [(v, f"{path}.{_label(k)}" if path else _label(k)) for k, v in node.value]
        elif isinstance(node, yaml.SequenceNode):
            named = [(v, f"{path}[{i}]") for i, v in enumerate(node.value)]
        else:
            return node, path
        over = [(v, p) for v, p in named if sizes.get(id(v), 1) > MAX_FIELD_VALUES]
        if not over:
            return node, path
        node, path = max(over, key=lambda pair: sizes.get(id(pair[0]), 1))


def expansion_problem(root: yaml.Node | None) -> Problem | None:
    """The problem with a memo whose aliases expand it past the caps, or None."""
    if root is None:
        return None
    measured = _measure(root)
    total = measured.sizes.get(id(root), 1)
    hint = "write the values out instead of repeating them with YAML anchors (&name) and aliases (*name)"
    if total > MAX_DOCUMENT_VALUES or any(size > MAX_FIELD_VALUES for size in measured.sizes.values()):
        node, path = _largest_field(root, measured.sizes)
        size = measured.sizes.get(id(node), 1)
        through = " through YAML aliases" if measured.aliases else ""
        if size > MAX_FIELD_VALUES:
            message = f"expands to {size:,} values{through}; one field may hold at most {MAX_FIELD_VALUES:,}"
        else:
            message = f"the memo expands to {total:,} values{through}; it may hold at most {MAX_DOCUMENT_VALUES:,}"
        return Problem(node_line(node), path, message, hint)
    if measured.aliases > MAX_ALIASES:
        return Problem(node_line(root), "", f"uses {measured.aliases:,} YAML aliases; at most {MAX_ALIASES:,}", hint)
    return None
