"""Result redaction for restricted channels: rows keep nothing of a hidden label, property or type.

The read-only policy judges the names a statement *writes*; this judges the values that come
*back*, so a statement that gets past the policy still cannot show what a channel may not see.
It reads the plain values both graph adapters return:

* a node is a map with a `_labels` list, a relationship a map with a `_type` string, a path a
  map with `_nodes` and `_relationships` lists (see `native()` in the adapters);
* a node carrying any hidden label and a relationship of a hidden type are removed;
* hidden property keys are stripped from nodes, relationships and every other map, at any depth;
* a path keeps its visible nodes and the visible relationships between two kept nodes (it may
  fall apart into pieces; the order of what is left is kept);
* a row whose own cell was a removed entity is dropped whole: its other cells most likely
  describe that entity (`RETURN n.name, n`); inside a list or map only the entity goes;
* text that holds JSON (`toJSON(n)`, a property holding a JSON document) is read, redacted
  the same way (there a node's labels are under `labels`, a relationship's type under
  `relationship`, as FalkorDB's toJSON writes them) and written back when anything went;
* a column whose name spells a hidden name (`p.email`, `incident`) is dropped: the policy
  refuses such names in honest statements, so only a statement that slipped past it has one.

Names compare case-insensitively, as in the policy; `Label.key` hides `key` on every label, as
the policy and the restricted schema do. Scalars that came from a hidden entity (`n.title` of a
node the statement never labelled) cannot be recognised here: the policy refuses the statements
that could return them, and a restricted database user is the layer that guarantees it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

logger = logging.getLogger(__name__)

LABELS_KEY = "_labels"
TYPE_KEY = "_type"
PATH_NODES_KEY = "_nodes"
PATH_RELS_KEY = "_relationships"
_MARKERS = frozenset({LABELS_KEY, TYPE_KEY, PATH_NODES_KEY, PATH_RELS_KEY})
# Inside JSON text the engine names them differently (FalkorDB's toJSON).
_JSON_LABELS_KEYS = (LABELS_KEY, "labels")
_JSON_TYPE_KEYS = (TYPE_KEY, "relationship")
_MAX_JSON_CHARS = 1_000_000
_WORD = re.compile(r"\w+")


class HiddenNames(Protocol):
    """Anything carrying a channel's hidden names (ChannelRestrictions, CypherPolicy)."""

    @property
    def hidden_labels(self) -> frozenset[str]: ...

    @property
    def hidden_rel_types(self) -> frozenset[str]: ...

    @property
    def hidden_properties(self) -> frozenset[str]: ...


class _Removed:
    """Stands for a value that must disappear (a hidden node or relationship)."""


_REMOVED = _Removed()


@dataclass
class RedactedRows:
    """What is left of one result, and how much was taken out (counts only: never the values)."""

    columns: list[str]
    rows: list[list[Any]]
    removed_rows: int = 0
    removed_columns: list[str] = field(default_factory=list)
    removed_values: int = 0
    """Nodes, relationships and property values taken out of the rows that were kept."""

    @property
    def changed(self) -> bool:
        """True when anything was taken out."""
        return bool(self.removed_rows or self.removed_columns or self.removed_values)


@dataclass(frozen=True)
class RowRedactor:
    """Removes a channel's hidden labels, relationship types and properties from result values."""

    labels: frozenset[str] = frozenset()
    """Hidden labels, case-folded."""
    rel_types: frozenset[str] = frozenset()
    """Hidden relationship types, case-folded."""
    properties: frozenset[str] = frozenset()
    """Hidden property keys (the part after `Label.`), case-folded."""

    @classmethod
    def for_names(cls, names: HiddenNames | None) -> RowRedactor:
        """The redactor for a channel's restrictions (None or no names: one that changes nothing)."""
        if names is None:
            return cls()
        return cls(
            frozenset(n.casefold() for n in names.hidden_labels),
            frozenset(n.casefold() for n in names.hidden_rel_types),
            frozenset(n.rsplit(".", 1)[-1].casefold() for n in names.hidden_properties),
        )

    def __bool__(self) -> bool:
        return bool(self.labels or self.rel_types or self.properties)

    # --- whole results ---------------------------------------------------------------------

    def redact(self, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> RedactedRows:
        """The rows as this channel may see them."""
        if not self:
            return RedactedRows(list(columns), [list(row) for row in rows])
        keep = [i for i, name in enumerate(columns) if not self._names_hidden(name)]
        result = RedactedRows(
            [columns[i] for i in keep],
            [],
            removed_columns=[c for i, c in enumerate(columns) if i not in keep],
        )
        for row in rows:
            counter = _Counter()
            cells = [self._value(row[i], counter) if i < len(row) else None for i in keep]
            if any(cell is _REMOVED for cell in cells):
                result.removed_rows += 1
                continue
            result.rows.append(cells)
            result.removed_values += counter.count
        return result

    def value(self, value: Any) -> Any:
        """One value as this channel may see it; None when the whole value is hidden."""
        cleaned = self._value(value, _Counter())
        return None if cleaned is _REMOVED else cleaned

    # --- values ----------------------------------------------------------------------------

    def _names_hidden(self, text: str) -> bool:
        hidden = self.labels | self.rel_types | self.properties
        return any(word.casefold() in hidden for word in _WORD.findall(text))

    def _value(self, value: Any, counter: _Counter, *, in_json: bool = False) -> Any:
        if isinstance(value, Mapping):
            if _is_path(value):
                return self._path(value, counter)
            label_keys = _JSON_LABELS_KEYS if in_json else (LABELS_KEY,)
            type_keys = _JSON_TYPE_KEYS if in_json else (TYPE_KEY,)
            if any(k in value and self._hides_labels(value[k]) for k in label_keys):
                return counter.removed()
            if any(k in value and self._hides_type(value[k]) for k in type_keys):
                return counter.removed()
            return self._map(value, counter, in_json=in_json)
        if isinstance(value, list | tuple):
            kept = [self._value(item, counter, in_json=in_json) for item in value]
            return [item for item in kept if item is not _REMOVED]
        if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
            return self._json_text(value, counter)
        return value

    def _json_text(self, text: str, counter: _Counter) -> Any:
        if len(text) > _MAX_JSON_CHARS:
            return text
        try:
            parsed = json.loads(text)
        except ValueError:
            return text
        before = counter.count
        cleaned = self._value(parsed, counter, in_json=True)
        if cleaned is _REMOVED or counter.count == before:
            return cleaned if cleaned is _REMOVED else text
        return json.dumps(cleaned, ensure_ascii=False)

    def _map(self, value: Mapping[Any, Any], counter: _Counter, *, in_json: bool = False) -> Any:
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = str(key)
            if name not in _MARKERS and name.casefold() in self.properties:
                counter.count += 1
                continue
            cleaned = self._value(item, counter, in_json=in_json)
            if cleaned is not _REMOVED:
                out[name] = cleaned
        return out

    def _path(self, value: Mapping[Any, Any], counter: _Counter) -> Any:
        nodes = list(value.get(PATH_NODES_KEY) or [])
        rels = list(value.get(PATH_RELS_KEY) or [])
        kept_nodes = [self._value(node, counter) for node in nodes]
        kept_rels = []
        for i, rel in enumerate(rels):
            # rels[i] joins nodes[i] and nodes[i + 1]; without both ends it would point at
            # something hidden.
            ends_kept = all(
                j < len(kept_nodes) and kept_nodes[j] is not _REMOVED for j in (i, i + 1)
            )
            cleaned = self._value(rel, counter) if ends_kept else counter.removed()
            kept_rels.append(cleaned)
        return {
            PATH_NODES_KEY: [n for n in kept_nodes if n is not _REMOVED],
            PATH_RELS_KEY: [r for r in kept_rels if r is not _REMOVED],
        }

    def _hides_labels(self, labels: Any) -> bool:
        if not self.labels:
            return False
        names = [labels] if isinstance(labels, str) else labels
        if not isinstance(names, list | tuple | set | frozenset):
            return False
        return any(str(label).casefold() in self.labels for label in names)

    def _hides_type(self, rel_type: Any) -> bool:
        return isinstance(rel_type, str) and rel_type.casefold() in self.rel_types


class _Counter:
    """Counts what one row lost."""

    def __init__(self) -> None:
        self.count = 0

    def removed(self) -> _Removed:
        self.count += 1
        return _REMOVED


def _is_path(value: Mapping[Any, Any]) -> bool:
    return PATH_NODES_KEY in value and PATH_RELS_KEY in value


def redact_rows(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], names: HiddenNames | None
) -> RedactedRows:
    """The rows as a channel with these hidden names may see them (see the module docstring)."""
    redacted = RowRedactor.for_names(names).redact(columns, rows)
    if redacted.changed:
        logger.info(
            "redacted a result: %d rows, %d columns (%s), %d values removed",
            redacted.removed_rows,
            len(redacted.removed_columns),
            ", ".join(redacted.removed_columns),
            redacted.removed_values,
        )
    return redacted
