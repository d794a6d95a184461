"""Few-shot examples: retrieval (FTS5/BM25 or embeddings), exact reuse, teaching by votes, seeds."""

from __future__ import annotations

import json
import logging
import math
import operator
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from memory import clock
from memory.db import Conns, Db, rows
from memory.errors import MemoryStoreError
from memory.pg_migrations import TEXT_SEARCH_CONFIG
from memory.text import (
    fts_query,
    jaccard,
    normalise_cypher,
    normalise_question,
    search_words,
    token_set,
)
from memory.types import Example, ExampleSource, ExampleStatus, Turn

log = logging.getLogger(__name__)

Embedder = Callable[[list[str]], list[list[float]]]

# Two retrieved examples this alike (content-word Jaccard) are near-duplicates: the prompt
# gains more from a different example than from a second wording of the same one.
NEAR_DUPLICATE = 0.8
# Seeds and admin examples carry one implicit vouch, so a single 👎 does not retire them.
_TRUSTED_SOURCES = ("seed", "admin")
_EMBED_BATCH = 128


@dataclass(frozen=True)
class TeachResult:
    """What a 👍 did."""

    status: Literal["created", "voted", "already", "not_answered"]
    example_id: int | None = None
    first_time_for_user: bool = False
    """True the first time this user teaches anything: the Slack layer thanks them once."""
    promoted_ids: tuple[int, ...] = ()
    """Self-healed candidates promoted to active because the answer used them."""


@dataclass(frozen=True)
class UntaughtResult:
    """What removing a 👍 did."""

    status: Literal["removed", "kept", "not_found"]
    """`removed`: nobody vouches any more, the example is out of use; `kept`: others still do."""
    example_id: int | None = None


@dataclass(frozen=True)
class VoteDownResult:
    """What a 👎 did to the examples behind an answer."""

    counted: tuple[int, ...] = ()
    """Examples the down-vote was counted against."""
    retired: tuple[int, ...] = ()
    """Examples retired because their down-votes now outweigh their up-votes."""


@dataclass(frozen=True)
class InvalidExample:
    """One entry of an import file that was not imported."""

    index: int
    """1-based position (line number for JSONL)."""
    question: str
    error: str


@dataclass
class ImportReport:
    """The outcome of `import_file`."""

    imported: list[int] = field(default_factory=list)
    already_present: list[int] = field(default_factory=list)
    invalid: list[InvalidExample] = field(default_factory=list)


def _example(row: dict[str, Any], fingerprint: str | None = None, score: float = 0.0) -> Example:
    return Example(
        id=row["id"],
        question=row["question"],
        cypher=row["cypher"],
        source=row["source"],
        status=row["status"],
        up_votes=row["up_votes"],
        down_votes=row["down_votes"],
        schema_fingerprint=row["schema_fingerprint"],
        taught_by=row["taught_by"],
        times_used=row["times_used"],
        verified_on_current=fingerprint is None or row["schema_fingerprint"] == fingerprint,
        score=score,
        created_at=clock.from_text(row["created_at"]),
        retired_reason=row["retired_reason"],
        shape=row.get("shape"),
    )


_COLUMNS = (
    "e.id, e.question, e.cypher, e.source, e.status, e.up_votes, e.down_votes, "
    "e.schema_fingerprint, e.taught_by, e.times_used, e.created_at, e.retired_reason, e.shape"
)
# A schema-generated example yields to a taught one of equal similarity: people vouched for
# the taught one, a generator for the other.
SCHEMA_WEIGHT = 0.95


def _weighted(source: str, score: float) -> float:
    if source != "schema":
        return score
    return score * SCHEMA_WEIGHT if score > 0 else score / SCHEMA_WEIGHT - 1e-9


@dataclass(frozen=True)
class SchemaRefresh:
    """What `replace_schema_examples` did."""

    added: int = 0
    kept: int = 0
    """Already stored for this fingerprint (or re-activated)."""
    retired: int = 0
    """Schema examples of another fingerprint or no longer generated."""
    skipped: int = 0
    """Over the cap of their shape, or already taught under another source."""


def _native_rows(db: Any, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cursor = db.execute_native(sql, params)
    keys = [d[0] for d in cursor.description]
    return [dict(zip(keys, row, strict=True)) for row in cursor.fetchall()]


def _unit(vector: Sequence[float]) -> array[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return array("f", (x / norm for x in vector))


class SqliteExampleStore:
    """Examples in SQLite; implements `memory.types.ExampleStore` for the agent.

    Retrieval is lexical (FTS5, BM25) unless an `embedder` is given: then question vectors are
    stored as float32 BLOBs and ranked by cosine similarity, brute force in Python (this
    Python's sqlite3 cannot load extensions such as sqlite-vec).
    """

    def __init__(
        self,
        conns: Conns,
        *,
        embedder: Embedder | None = None,
        embedder_name: str = "default",
        schema_fingerprint: str | None = None,
        include_candidates: bool = False,
    ) -> None:
        self._conns = conns
        self._embedder = embedder
        self._embedder_name = embedder_name
        self.schema_fingerprint = schema_fingerprint
        """Default for `similar`/`exact` callers that pass none (the CLI's listings); the agent
        passes the fingerprint of the schema it answers on with every call."""
        self.include_candidates = include_candidates
        self._vectors: dict[int, array[float]] = {}

    # --- retrieval ---------------------------------------------------------------------

    def similar(
        self,
        question: str,
        k: int = 3,
        *,
        include_candidates: bool | None = None,
        schema_fingerprint: str | None = None,
    ) -> list[Example]:
        """The k active examples most like `question`, best first, without near-duplicates.

        Examples verified on another schema fingerprint than `schema_fingerprint` (or the
        store's) come back with `verified_on_current=False`: re-validate before use.
        """
        if k <= 0:
            return []
        with_candidates = (
            self.include_candidates if include_candidates is None else include_candidates
        )
        statuses = ("active", "candidate") if with_candidates else ("active",)
        fingerprint = schema_fingerprint or self.schema_fingerprint
        ranked: list[tuple[dict[str, Any], float]] | None = None
        if self._embedder is not None:
            try:
                ranked = self._semantic(question, statuses, k * 4 + 8)
            except MemoryStoreError:
                raise
            except Exception:
                # An embeddings outage must not stop answering: fall back to lexical.
                log.warning("embedding retrieval failed; using lexical retrieval", exc_info=True)
        if ranked is None:
            ranked = self._lexical(question, statuses, k * 4 + 8)
        ranked = sorted(ranked, key=lambda item: -_weighted(item[0]["source"], item[1]))
        chosen: list[Example] = []
        chosen_words: list[frozenset[str]] = []
        chosen_cypher: set[str] = set()
        for row, score in ranked:
            words = token_set(row["question"])
            cypher = normalise_cypher(row["cypher"])
            if cypher in chosen_cypher or any(
                jaccard(words, w) >= NEAR_DUPLICATE for w in chosen_words
            ):
                continue
            chosen.append(_example(row, fingerprint, score))
            chosen_words.append(words)
            chosen_cypher.add(cypher)
            if len(chosen) == k:
                break
        return chosen

    def _lexical(
        self, question: str, statuses: tuple[str, ...], limit: int
    ) -> list[tuple[dict[str, Any], float]]:
        if self._conns.dialect == "postgresql":
            return self._lexical_postgres(question, statuses, limit)
        match = fts_query(question)
        if match is None:
            return []
        marks = ", ".join("?" for _ in statuses)
        found = self._conns.read(
            lambda db: rows(
                db,
                f"SELECT {_COLUMNS}, f.rank AS rank FROM examples_fts f "
                "JOIN examples e ON e.id = f.rowid "
                f"WHERE examples_fts MATCH ? AND e.status IN ({marks}) "
                "ORDER BY f.rank LIMIT ?",
                [match, *statuses, limit],
            )
        )
        # FTS5's rank is BM25 negated (lower is better); flip it so higher means closer.
        return [(r, -float(r["rank"])) for r in found]

    def _lexical_postgres(
        self, question: str, statuses: tuple[str, ...], limit: int
    ) -> list[tuple[dict[str, Any], float]]:
        """Full-text search: the question's content words OR-ed, ranked by `ts_rank`.

        Normalisation 1 divides by the log of the document's length, so a short question
        that shares the words ranks above a long one, as BM25 does on SQLite.
        """
        words = search_words(question)
        if not words:
            return []
        marks = ", ".join("%s" for _ in statuses)
        sql = (
            f"SELECT {_COLUMNS}, ts_rank(e.search, q, 1) AS rank "
            f"FROM examples e, websearch_to_tsquery('{TEXT_SEARCH_CONFIG}', %s) q "
            f"WHERE e.search @@ q AND e.status IN ({marks}) "
            "ORDER BY rank DESC, e.id LIMIT %s"
        )
        found = self._conns.read(
            lambda db: _native_rows(db, sql, [" or ".join(words), *statuses, limit])
        )
        return [(r, float(r["rank"])) for r in found]

    def _semantic(
        self, question: str, statuses: tuple[str, ...], limit: int
    ) -> list[tuple[dict[str, Any], float]]:
        assert self._embedder is not None
        self._backfill_vectors(statuses)
        self._load_vectors()
        query = _unit(self._embedder([question])[0])
        marks = ", ".join("?" for _ in statuses)
        ids = self._conns.read(
            lambda db: [
                r[0]
                for r in db.execute(f"SELECT id FROM examples WHERE status IN ({marks})", statuses)
            ]
        )
        vectors = self._vectors
        scored = [
            (sum(map(operator.mul, query, vectors[i])), i)
            for i in ids
            if i in vectors and len(vectors[i]) == len(query)
        ]
        scored.sort(reverse=True)
        best = scored[:limit]
        if not best:
            return []
        by_id = {
            r["id"]: r
            for r in self._conns.read(
                lambda db: rows(
                    db,
                    f"SELECT {_COLUMNS} FROM examples e WHERE e.id IN "
                    f"({', '.join('?' for _ in best)})",
                    [i for _, i in best],
                )
            )
        }
        return [(by_id[i], float(score)) for score, i in best if i in by_id]

    def _backfill_vectors(self, statuses: tuple[str, ...]) -> None:
        """Embed examples that have no vector from this embedder yet."""
        assert self._embedder is not None
        marks = ", ".join("?" for _ in statuses)
        missing = self._conns.read(
            lambda db: rows(
                db,
                "SELECT e.id, e.question FROM examples e LEFT JOIN example_vectors v "
                "ON v.example_id = e.id AND v.model = ? "
                f"WHERE v.example_id IS NULL AND e.status IN ({marks})",
                [self._embedder_name, *statuses],
            )
        )
        for start in range(0, len(missing), _EMBED_BATCH):
            batch = missing[start : start + _EMBED_BATCH]
            vectors = self._embedder([r["question"] for r in batch])
            values = [
                (r["id"], self._embedder_name, len(v), array("f", v).tobytes())
                for r, v in zip(batch, vectors, strict=True)
            ]
            self._conns.write(
                lambda db, values=values: db.conn.executemany(  # type: ignore[misc]
                    "INSERT OR REPLACE INTO example_vectors (example_id, model, dim, vector) "
                    "VALUES (?, ?, ?, ?)",
                    values,
                )
            )
        if missing:
            log.info("embedded %d example questions", len(missing))

    def _load_vectors(self) -> None:
        """Bring the in-process vector cache up to date (vectors never change once written)."""
        count = self._conns.read(
            lambda db: db.execute(
                "SELECT count(*) FROM example_vectors WHERE model = ?", [self._embedder_name]
            ).fetchone()[0]
        )
        if count == len(self._vectors):
            return
        loaded = self._conns.read(
            lambda db: db.execute(
                "SELECT example_id, vector FROM example_vectors WHERE model = ?",
                [self._embedder_name],
            ).fetchall()
        )
        vectors: dict[int, array[float]] = {}
        for example_id, blob in loaded:
            raw = array("f")
            raw.frombytes(blob)
            vectors[example_id] = _unit(raw)
        self._vectors = vectors

    def exact(self, question: str, *, schema_fingerprint: str | None = None) -> Example | None:
        """An active, trusted example (≥ 2 up-votes, or admin/seed) with the same normalised
        question; never a merely similar one, never a schema-generated one (a 👍 turns those
        into taught examples first). Flagged for re-validation when verified on another
        schema than `schema_fingerprint` (or the store's default)."""
        normalised = normalise_question(question)
        if not normalised:
            return None
        found = self._conns.read(
            lambda db: rows(
                db,
                f"SELECT {_COLUMNS} FROM examples e WHERE e.normalised = ? "
                "AND e.status = 'active' AND e.source <> 'schema' "
                "AND (e.up_votes >= 2 OR e.source IN ('admin', 'seed')) "
                "ORDER BY e.source = 'admin' DESC, e.up_votes - e.down_votes DESC, e.id DESC "
                "LIMIT 1",
                [normalised],
            )
        )
        return _example(found[0], schema_fingerprint or self.schema_fingerprint) if found else None

    # --- plain access ------------------------------------------------------------------

    def get(self, example_id: int) -> Example | None:
        """The example with this id, whatever its status."""
        found = self._conns.read(
            lambda db: rows(db, f"SELECT {_COLUMNS} FROM examples e WHERE e.id = ?", [example_id])
        )
        return _example(found[0], self.schema_fingerprint) if found else None

    def list(
        self,
        status: ExampleStatus | None = None,
        source: ExampleSource | None = None,
        limit: int = 50,
    ) -> list[Example]:
        """Newest examples first, optionally of one status and/or source."""
        where: list[str] = []
        params: list[Any] = []
        if status is not None:
            where.append("e.status = ?")
            params.append(status)
        if source is not None:
            where.append("e.source = ?")
            params.append(source)
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        found = self._conns.read(
            lambda db: rows(
                db,
                f"SELECT {_COLUMNS} FROM examples e {clause} ORDER BY e.id DESC LIMIT ?",
                [*params, limit],
            )
        )
        return [_example(r, self.schema_fingerprint) for r in found]

    def add(
        self,
        question: str,
        cypher: str,
        *,
        source: ExampleSource,
        status: ExampleStatus = "active",
        taught_by: str | None = None,
        schema_fingerprint: str | None = None,
    ) -> int:
        """Store an example; the same question and query again returns the existing id
        (re-activating it when it had been retired)."""

        def insert(db: Db) -> int:
            existing = _find(db, question, cypher)
            if existing is not None:
                if existing["status"] == "retired" and status != "retired":
                    db.execute(
                        "UPDATE examples SET status = ?, retired_reason = NULL, updated_at = ? "
                        "WHERE id = ?",
                        [status, clock.to_text(clock.now()), existing["id"]],
                    )
                return int(existing["id"])
            return _insert(db, question, cypher, source, status, taught_by, schema_fingerprint)

        return self._conns.write(insert)

    def add_many(
        self,
        pairs: Iterable[tuple[str, str]],
        *,
        source: ExampleSource,
        status: ExampleStatus = "active",
        schema_fingerprint: str | None = None,
    ) -> int:
        """Store many (question, Cypher) pairs in one transaction, skipping ones already
        present; return how many were added."""
        items = list(pairs)

        def insert(db: Db) -> int:
            added = 0
            for question, cypher in items:
                if _find(db, question, cypher) is None:
                    _insert(db, question, cypher, source, status, None, schema_fingerprint)
                    added += 1
            return added

        return self._conns.write(insert)

    def add_candidate(self, question: str, cypher: str, schema_fingerprint: str | None) -> int:
        """Record a self-healed (question, Cypher) pair as a candidate; return its id."""
        return self.add(
            question,
            cypher,
            source="self_healed",
            status="candidate",
            schema_fingerprint=schema_fingerprint,
        )

    def retire(self, example_id: int) -> bool:
        """Take an example out of use (admin); False when there is no such example."""
        return self._set_status(example_id, "retired", "admin")

    def promote(self, example_id: int) -> bool:
        """Make a candidate (or retired) example active (admin); False when there is none."""
        return self._set_status(example_id, "active", None)

    def _set_status(self, example_id: int, status: ExampleStatus, reason: str | None) -> bool:
        changed = self._conns.write(
            lambda db: (
                db.execute(
                    "UPDATE examples SET status = ?, retired_reason = ?, updated_at = ? WHERE id = ?",
                    [status, reason, clock.to_text(clock.now()), example_id],
                ).rowcount
            )
        )
        return bool(changed)

    def mark_used(self, ids: Iterable[int]) -> None:
        """Count one more use of each example (shown in a prompt or reused)."""
        unique = sorted({int(i) for i in ids})
        if not unique:
            return
        stamp = clock.to_text(clock.now())
        self._conns.write(
            lambda db: db.conn.executemany(
                "UPDATE examples SET times_used = times_used + 1, last_used_at = ? WHERE id = ?",
                [(stamp, i) for i in unique],
            )
        )

    # --- teaching ----------------------------------------------------------------------

    def teach(self, turn: Turn, user: str) -> TeachResult:
        """A 👍 by `user` on the answer of `turn`.

        The turn's (standalone question, Cypher) becomes an active example, or gains this
        user's vote when it already is one; a second 👍 by the same user changes nothing.
        Self-healed candidates the answer used are promoted. Answers whose outcome was not
        `answered` teach nothing.
        """
        if turn.outcome != "answered" or not turn.cypher:
            return TeachResult("not_answered")
        cypher = turn.cypher
        question = turn.standalone_question or turn.question

        def apply(db: Db) -> TeachResult:
            now = clock.to_text(clock.now())
            turn_id = _existing_turn_id(db, turn.id)
            promoted: list[int] = []
            for used in _examples_with_status(db, turn.example_ids, "candidate"):
                _vote(db, used, user, 1, turn_id, now)
                db.execute(
                    "UPDATE examples SET status = 'active', updated_at = ? WHERE id = ?",
                    [now, used],
                )
                promoted.append(used)
            existing = _find(db, question, cypher)
            status: Literal["created", "voted", "already"]
            if existing is None:
                example_id = _insert(
                    db,
                    question,
                    cypher,
                    "thumbs_up",
                    "active",
                    user,
                    turn.schema_fingerprint,
                    origin_turn_id=turn_id,
                )
                status = "created"
            else:
                example_id = int(existing["id"])
                status = "voted" if _vote(db, example_id, user, 1, turn_id, now) else "already"
                if existing["source"] == "schema":
                    # A person vouched for it: it is taught now, and survives regeneration.
                    db.execute(
                        "UPDATE examples SET source = 'thumbs_up', taught_by = ?, updated_at = ? "
                        "WHERE id = ?",
                        [user, now, example_id],
                    )
                if existing["status"] == "candidate" or existing["retired_reason"] == "untaught":
                    db.execute(
                        "UPDATE examples SET status = 'active', retired_reason = NULL, "
                        "updated_at = ? WHERE id = ?",
                        [now, example_id],
                    )
                    if existing["status"] == "candidate":
                        promoted.append(example_id)
            if status == "created":
                _vote(db, example_id, user, 1, turn_id, now)
            for touched in {example_id, *promoted}:
                _recount(db, touched, now)
            first = bool(
                db.execute(
                    "INSERT OR IGNORE INTO teachers (user, first_taught_at) VALUES (?, ?)",
                    [user, now],
                ).rowcount
            )
            return TeachResult(status, example_id, first and status != "already", tuple(promoted))

        result = self._conns.write(apply)
        log.info("teach on turn %s: %s example %s", turn.id, result.status, result.example_id)
        return result

    def untaught(self, turn: Turn, user: str) -> UntaughtResult:
        """The 👍 by `user` on `turn` was removed: withdraw their vote.

        The example stays in use while another user (or its seed/admin origin) vouches for
        it; otherwise a taught example is retired and a promoted candidate goes back to
        being a candidate.
        """
        if not turn.cypher:
            return UntaughtResult("not_found")
        cypher = turn.cypher
        question = turn.standalone_question or turn.question

        def apply(db: Db) -> UntaughtResult:
            now = clock.to_text(clock.now())
            existing = _find(db, question, cypher)
            for used in turn.example_ids:
                if used != (existing or {}).get("id") and _unvote(db, used, user, positive=True):
                    _recount(db, used, now)
                    _fall_back_if_unvouched(db, used, now)
            if existing is None:
                return UntaughtResult("not_found")
            example_id = int(existing["id"])
            if not _unvote(db, example_id, user, positive=True):
                return UntaughtResult("not_found", example_id)
            _recount(db, example_id, now)
            removed = _fall_back_if_unvouched(db, example_id, now)
            return UntaughtResult("removed" if removed else "kept", example_id)

        return self._conns.write(apply)

    def vote_down(self, turn: Turn, user: str) -> VoteDownResult:
        """A 👎 by `user` on `turn`: counts against the examples it used and its own example.

        An example whose down-votes then outweigh its up-votes is retired (seed and admin
        examples count one implicit up-vote).
        """

        def apply(db: Db) -> VoteDownResult:
            now = clock.to_text(clock.now())
            turn_id = _existing_turn_id(db, turn.id)
            targets = _targets(db, turn)
            retired: list[int] = []
            for example_id in targets:
                _vote(db, example_id, user, -1, turn_id, now)
                if _recount(db, example_id, now) == "retired_now":
                    retired.append(example_id)
            return VoteDownResult(tuple(targets), tuple(retired))

        result = self._conns.write(apply)
        if result.retired:
            log.info("down-votes retired examples %s", list(result.retired))
        return result

    def undo_vote_down(self, turn: Turn, user: str) -> VoteDownResult:
        """The 👎 by `user` on `turn` was removed: withdraw it (examples it retired come back)."""

        def apply(db: Db) -> VoteDownResult:
            now = clock.to_text(clock.now())
            counted = []
            for example_id in _targets(db, turn):
                if _unvote(db, example_id, user, positive=False):
                    _recount(db, example_id, now)
                    counted.append(example_id)
            return VoteDownResult(tuple(counted))

        return self._conns.write(apply)

    # --- schema-generated examples ------------------------------------------------------

    def has_schema_examples(self, schema_fingerprint: str) -> bool:
        """True when this schema fingerprint's generated examples are in use: some are active,
        or were retired by votes. Not when every one was retired because another schema's
        took their place: a memory shared by two graphs (GRAPH_NAME switched back, or the
        eval sets on one DATA_DIR) would otherwise never give the first graph its examples
        again (the air routes graph ran without any after the network graph's playground
        had retired them, fifteenth session)."""
        found = self._conns.read(
            lambda db: rows(
                db,
                "SELECT 1 AS x FROM examples WHERE source = 'schema' AND schema_fingerprint = ? "
                "AND (status <> 'retired' OR retired_reason IS NULL OR retired_reason <> 'schema') "
                "LIMIT 1",
                [schema_fingerprint],
            )
        )
        return bool(found)

    def replace_schema_examples(
        self,
        examples: Iterable[tuple[str, str, str]],
        schema_fingerprint: str,
        *,
        cap_per_shape: int,
    ) -> SchemaRefresh:
        """Make (question, Cypher, shape) triples the schema examples of `schema_fingerprint`.

        At most `cap_per_shape` per shape, first come first kept; schema examples of other
        fingerprints, and of this one that were not generated again, are retired (reason
        `schema`). Pairs already taught under another source are left to that source.
        """
        items = list(examples)

        def apply(db: Db) -> SchemaRefresh:
            now = clock.to_text(clock.now())
            per_shape: dict[str, int] = {}
            wanted: set[int] = set()
            added = kept = skipped = 0
            for question, cypher, shape in items:
                if per_shape.get(shape, 0) >= cap_per_shape:
                    skipped += 1
                    continue
                existing = _find(db, question, cypher)
                if existing is not None and existing["source"] != "schema":
                    skipped += 1
                    continue
                per_shape[shape] = per_shape.get(shape, 0) + 1
                if existing is None:
                    example_id = _insert(
                        db, question, cypher, "schema", "active", None, schema_fingerprint
                    )
                    added += 1
                else:
                    example_id = int(existing["id"])
                    kept += 1
                    if existing["retired_reason"] != "votes":  # a 👎 outlives regeneration
                        db.execute(
                            "UPDATE examples SET status = 'active', retired_reason = NULL, "
                            "schema_fingerprint = ?, updated_at = ? WHERE id = ?",
                            [schema_fingerprint, now, example_id],
                        )
                db.execute("UPDATE examples SET shape = ? WHERE id = ?", [shape, example_id])
                wanted.add(example_id)
            stale = [
                r["id"]
                for r in rows(
                    db,
                    "SELECT id FROM examples WHERE source = 'schema' AND status <> 'retired'",
                    [],
                )
                if r["id"] not in wanted
            ]
            db.conn.executemany(
                "UPDATE examples SET status = 'retired', retired_reason = 'schema', "
                "updated_at = ? WHERE id = ?",
                [(now, i) for i in stale],
            )
            return SchemaRefresh(added, kept, len(stale), skipped)

        result = self._conns.write(apply)
        log.info(
            "schema examples for %s: %d added, %d kept, %d retired, %d skipped",
            schema_fingerprint,
            result.added,
            result.kept,
            result.retired,
            result.skipped,
        )
        return result

    # --- seeds -------------------------------------------------------------------------

    def import_file(
        self,
        path: Path,
        validate: Callable[[str], str | None],
        *,
        source: ExampleSource = "seed",
        schema_fingerprint: str | None = None,
    ) -> ImportReport:
        """Import question/Cypher pairs from YAML or JSONL, each checked with `validate`
        (which returns the engine's error, or None); invalid ones are reported, not stored."""
        report = ImportReport()
        for index, entry in _read_entries(path):
            question = str(entry.get("question") or "").strip()
            cypher = str(entry.get("cypher") or "").strip()
            if not question or not cypher:
                report.invalid.append(
                    InvalidExample(index, question, "needs both `question` and `cypher`")
                )
                continue
            error = validate(cypher)
            if error is not None:
                report.invalid.append(InvalidExample(index, question, error))
                continue
            before = self._conns.read(lambda db, q=question, c=cypher: _find(db, q, c))  # type: ignore[misc]
            example_id = self.add(
                question, cypher, source=source, schema_fingerprint=schema_fingerprint
            )
            if before is not None and before["status"] != "retired":
                report.already_present.append(example_id)
            else:
                report.imported.append(example_id)
        log.info(
            "imported %d examples from %s (%d present, %d invalid)",
            len(report.imported),
            path.name,
            len(report.already_present),
            len(report.invalid),
        )
        return report

    def export(self, path: Path, statuses: Sequence[ExampleStatus] = ("active",)) -> int:
        """Write examples of these statuses to YAML (.yaml/.yml) or JSONL; return the count."""
        marks = ", ".join("?" for _ in statuses)
        found = self._conns.read(
            lambda db: rows(
                db,
                "SELECT question, cypher, source, status, up_votes, down_votes, "
                f"schema_fingerprint FROM examples WHERE status IN ({marks}) ORDER BY id",
                list(statuses),
            )
        )
        if path.suffix.lower() in (".yaml", ".yml"):
            text = yaml.safe_dump(found, sort_keys=False, allow_unicode=True, width=1000)
        else:
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in found)
        path.write_text(text, encoding="utf-8")
        return len(found)


# --- helpers that run inside a write transaction -----------------------------------------


def _find(db: Db, question: str, cypher: str) -> dict[str, Any] | None:
    """The example with this normalised question and query; live ones before retired ones."""
    wanted = normalise_cypher(cypher)
    candidates = [
        r
        for r in rows(
            db,
            "SELECT id, cypher, status, retired_reason, source FROM examples WHERE normalised = ? "
            "ORDER BY status = 'retired', id",
            [normalise_question(question)],
        )
        if normalise_cypher(r["cypher"]) == wanted
    ]
    return candidates[0] if candidates else None


def _insert(
    db: Db,
    question: str,
    cypher: str,
    source: str,
    status: str,
    taught_by: str | None,
    schema_fingerprint: str | None,
    *,
    origin_turn_id: int | None = None,
) -> int:
    now = clock.to_text(clock.now())
    cursor = db.execute(
        "INSERT INTO examples (question, normalised, cypher, source, status, taught_by, "
        "schema_fingerprint, origin_turn_id, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        [
            question.strip(),
            normalise_question(question),
            cypher.strip(),
            source,
            status,
            taught_by,
            schema_fingerprint,
            origin_turn_id,
            now,
            now,
        ],
    )
    return int(cursor.fetchall()[0][0])


def _existing_turn_id(db: Db, turn_id: int | None) -> int | None:
    if turn_id is None:
        return None
    return turn_id if rows(db, "SELECT 1 AS x FROM turns WHERE id = ?", [turn_id]) else None


def _examples_with_status(db: Db, ids: Iterable[int], status: str) -> list[int]:
    unique = sorted({int(i) for i in ids})
    if not unique:
        return []
    marks = ", ".join("?" for _ in unique)
    return [
        r["id"]
        for r in rows(
            db, f"SELECT id FROM examples WHERE id IN ({marks}) AND status = ?", [*unique, status]
        )
    ]


def _targets(db: Db, turn: Turn) -> list[int]:
    """The examples a vote on `turn` is about: those it used and its own, if any."""
    targets = (
        [
            r["id"]
            for r in rows(
                db,
                f"SELECT id FROM examples WHERE id IN ({', '.join('?' for _ in turn.example_ids)})",
                list(turn.example_ids),
            )
        ]
        if turn.example_ids
        else []
    )
    if turn.cypher:
        own = _find(db, turn.standalone_question or turn.question, turn.cypher)
        if own is not None and own["id"] not in targets:
            targets.append(int(own["id"]))
    return targets


def _vote(db: Db, example_id: int, user: str, vote: int, turn_id: int | None, now: str) -> bool:
    """Set `user`'s vote on an example; True when that changed anything."""
    found = rows(
        db, "SELECT vote FROM example_votes WHERE example_id = ? AND user = ?", [example_id, user]
    )
    if found and found[0]["vote"] == vote:
        return False
    db.execute(
        "INSERT OR REPLACE INTO example_votes (example_id, user, vote, turn_id, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        [example_id, user, vote, turn_id, now],
    )
    return True


def _unvote(db: Db, example_id: int, user: str, *, positive: bool) -> bool:
    sign = "vote > 0" if positive else "vote < 0"
    return bool(
        db.execute(
            f"DELETE FROM example_votes WHERE example_id = ? AND user = ? AND {sign}",
            [example_id, user],
        ).rowcount
    )


def _recount(db: Db, example_id: int, now: str) -> str:
    """Refresh the vote counts and apply the rule "down-votes outweigh up-votes → retired"."""
    found = rows(
        db,
        "SELECT e.source, e.status, e.retired_reason, "
        "(SELECT count(*) FROM example_votes v WHERE v.example_id = e.id AND v.vote > 0) AS up, "
        "(SELECT count(*) FROM example_votes v WHERE v.example_id = e.id AND v.vote < 0) AS down "
        "FROM examples e WHERE e.id = ?",
        [example_id],
    )
    if not found:
        return "missing"
    row = found[0]
    up, down = int(row["up"]), int(row["down"])
    vouch = up + (1 if row["source"] in _TRUSTED_SOURCES else 0)
    status, reason, outcome = row["status"], row["retired_reason"], "unchanged"
    if status in ("active", "candidate") and down > vouch:
        status, reason, outcome = "retired", "votes", "retired_now"
    elif status == "retired" and reason == "votes" and down <= vouch:
        status, reason, outcome = "active", None, "restored"
    db.execute(
        "UPDATE examples SET up_votes = ?, down_votes = ?, status = ?, retired_reason = ?, "
        "updated_at = ? WHERE id = ?",
        [up, down, status, reason, now, example_id],
    )
    return outcome


def _fall_back_if_unvouched(db: Db, example_id: int, now: str) -> bool:
    """Nobody vouches for a taught/promoted example any more: take it out of use."""
    found = rows(db, "SELECT source, status, up_votes FROM examples WHERE id = ?", [example_id])
    if not found or found[0]["up_votes"] > 0 or found[0]["status"] != "active":
        return False
    if found[0]["source"] == "thumbs_up":
        db.execute(
            "UPDATE examples SET status = 'retired', retired_reason = 'untaught', updated_at = ? "
            "WHERE id = ?",
            [now, example_id],
        )
        return True
    if found[0]["source"] == "self_healed":
        db.execute(
            "UPDATE examples SET status = 'candidate', updated_at = ? WHERE id = ?",
            [now, example_id],
        )
        return True
    return False


def _read_entries(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(position, entry) pairs from a YAML list (or {examples: [...]}) or a JSONL file."""
    text = path.read_text(encoding="utf-8")
    entries: list[tuple[int, dict[str, Any]]] = []
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            data = yaml.safe_load(text) or []
        except yaml.YAMLError as exc:
            raise ValueError(f"{path} is not valid YAML: {exc}") from exc
        if isinstance(data, dict):
            data = data.get("examples", [])
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a list of {{question, cypher}} entries")
        for index, item in enumerate(data, start=1):
            entries.append((index, item if isinstance(item, dict) else {}))
        return entries
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            item = {}
        entries.append((number, item if isinstance(item, dict) else {}))
    return entries
