"""Few-shot examples: teaching by votes, retirement, candidates, retrieval, exact reuse, seeds."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory import Memory, Turn, open_memory
from memory.types import Outcome


@pytest.fixture
def mem(memory_location: str) -> Iterator[Memory]:
    memory = open_memory(memory_location)
    yield memory
    memory.close()


def _turn(
    mem: Memory,
    standalone: str,
    cypher: str | None,
    *,
    outcome: Outcome = "answered",
    example_ids: tuple[int, ...] = (),
    fingerprint: str | None = "fp1",
) -> Turn:
    turn_id = mem.conversations.record(
        "T:C:1",
        user="U0",
        question="and that?",
        standalone_question=standalone,
        cypher=cypher,
        answer="answer",
        outcome=outcome,
        example_ids=example_ids,
        schema_fingerprint=fingerprint,
    )
    turn = mem.conversations.turn(turn_id)
    assert turn is not None
    return turn


MOVIES_2000 = "MATCH (m:Movie) WHERE m.released = 2000 RETURN count(m)"


# --- teaching ----------------------------------------------------------------------------


def test_teach_creates_one_example_and_counts_distinct_users(mem: Memory) -> None:
    turn = _turn(mem, "How many movies were released in 2000?", MOVIES_2000)
    first = mem.examples.teach(turn, "U1")
    assert first.status == "created" and first.first_time_for_user
    example = mem.examples.get(first.example_id or 0)
    assert example is not None
    assert (example.source, example.status, example.up_votes) == ("thumbs_up", "active", 1)
    assert example.question == "How many movies were released in 2000?"
    assert example.taught_by == "U1" and example.schema_fingerprint == "fp1"

    again = mem.examples.teach(turn, "U1")  # same user twice, or the same event retried
    assert (again.status, again.example_id, again.first_time_for_user) == (
        "already",
        first.example_id,
        False,
    )
    other = mem.examples.teach(turn, "U2")
    assert (other.status, other.example_id, other.first_time_for_user) == (
        "voted",
        first.example_id,
        True,
    )
    # The same question and query from another turn (even spelled differently) is a vote too.
    paraphrase = _turn(mem, "how many movies were released in 2000", MOVIES_2000 + " ;")
    third = mem.examples.teach(paraphrase, "U3")
    assert third.status == "voted" and third.example_id == first.example_id
    # U1 teaching something else is not their first time any more.
    new = mem.examples.teach(_turn(mem, "Who acted in Top Gun?", "MATCH (p) RETURN p"), "U1")
    assert new.status == "created" and not new.first_time_for_user

    assert len(mem.examples.list(source="thumbs_up")) == 2
    example = mem.examples.get(first.example_id or 0)
    assert example is not None and example.up_votes == 3


def test_same_event_twice_is_recorded_once(mem: Memory) -> None:
    turn = _turn(mem, "How many movies?", "MATCH (m:Movie) RETURN count(m)")
    handled = []
    for _ in range(2):  # Slack retries the reaction event
        if mem.feedback.record_reaction(
            "Ev1",
            user="U1",
            reaction="+1",
            kind="up",
            added=True,
            turn_id=turn.id,
            channel="C",
            ts="1",
        ):
            handled.append(mem.examples.teach(turn, "U1"))
    assert [r.status for r in handled] == ["created"]


def test_thumbs_up_on_a_non_answer_teaches_nothing(mem: Memory) -> None:
    for outcome in ("failed", "no_data", "out_of_scope", "needs_clarification"):
        turn = _turn(mem, "Why?", "RETURN 1", outcome=outcome)  # type: ignore[arg-type]
        assert mem.examples.teach(turn, "U1").status == "not_answered"
    assert mem.examples.teach(_turn(mem, "hi", None), "U1").status == "not_answered"
    assert mem.examples.list() == []


def test_untaught_removes_only_when_nobody_vouches(mem: Memory) -> None:
    turn = _turn(mem, "How many movies?", "MATCH (m:Movie) RETURN count(m)")
    taught = mem.examples.teach(turn, "U1")
    mem.examples.teach(turn, "U2")

    kept = mem.examples.untaught(turn, "U1")
    assert (kept.status, kept.example_id) == ("kept", taught.example_id)
    example = mem.examples.get(taught.example_id or 0)
    assert example is not None and (example.status, example.up_votes) == ("active", 1)
    assert mem.examples.untaught(turn, "U1").status == "not_found"  # twice: no-op

    removed = mem.examples.untaught(turn, "U2")
    assert removed.status == "removed"
    example = mem.examples.get(taught.example_id or 0)
    assert example is not None and example.status == "retired"
    assert mem.examples.similar("How many movies?") == []

    # Teaching it again brings the same example back.
    back = mem.examples.teach(turn, "U3")
    assert back.example_id == taught.example_id
    example = mem.examples.get(taught.example_id or 0)
    assert example is not None and example.status == "active"


def test_vote_down_counts_against_used_and_own_examples_and_retires(mem: Memory) -> None:
    used = mem.examples.add(
        "Who directed The Matrix?", "MATCH (p)-[:DIRECTED]->(m) RETURN p", source="thumbs_up"
    )
    helper = mem.examples.teach(
        _turn(mem, "How many movies?", "MATCH (m:Movie) RETURN count(m)"), "U1"
    )
    bad = _turn(mem, "How many movies?", "MATCH (m:Movie) RETURN count(m)", example_ids=(used,))
    first = mem.examples.vote_down(bad, "U2")
    assert set(first.counted) == {used, helper.example_id}
    # `used` had no up-votes: one down-vote outweighs them. The taught one is tied 1-1.
    assert first.retired == (used,)
    example = mem.examples.get(helper.example_id or 0)
    assert example is not None and (example.status, example.down_votes) == ("active", 1)

    second = mem.examples.vote_down(bad, "U3")
    assert helper.example_id in second.retired
    example = mem.examples.get(helper.example_id or 0)
    assert example is not None and example.status == "retired"
    assert example.retired_reason == "votes"

    # Withdrawing a 👎 restores it when the votes no longer outweigh.
    mem.examples.undo_vote_down(bad, "U3")
    example = mem.examples.get(helper.example_id or 0)
    assert example is not None and example.status == "active"


def test_vote_down_spares_a_seed_with_a_single_vote(mem: Memory) -> None:
    seed = mem.examples.add("How many people?", "MATCH (p:Person) RETURN count(p)", source="seed")
    turn = _turn(mem, "Count the people", "MATCH (p:Person) RETURN count(p)", example_ids=(seed,))
    assert mem.examples.vote_down(turn, "U1").retired == ()
    assert mem.examples.vote_down(turn, "U2").retired == (seed,)


def test_a_user_vote_flips_rather_than_counts_twice(mem: Memory) -> None:
    turn = _turn(mem, "How many movies?", "MATCH (m:Movie) RETURN count(m)")
    taught = mem.examples.teach(turn, "U1")
    mem.examples.vote_down(turn, "U1")
    example = mem.examples.get(taught.example_id or 0)
    assert example is not None and (example.up_votes, example.down_votes) == (0, 1)
    assert example.status == "retired"


def test_self_healed_candidate_is_promoted_by_a_thumbs_up(mem: Memory) -> None:
    candidate = mem.examples.add_candidate(
        "Which movies did Keanu Reeves act in?",
        "MATCH (p:Person {name: 'Keanu Reeves'})-[:ACTED_IN]->(m) RETURN m.title",
        "fp1",
    )
    assert mem.examples.get(candidate).status == "candidate"  # type: ignore[union-attr]
    assert mem.examples.similar("Keanu Reeves movies") == []
    assert [e.id for e in mem.examples.similar("Keanu Reeves movies", include_candidates=True)] == [
        candidate
    ]
    # An answer that used the candidate (as a few-shot example) gets a 👍.
    turn = _turn(
        mem,
        "Which movies did Tom Hanks act in?",
        "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m) RETURN m.title",
        example_ids=(candidate,),
    )
    result = mem.examples.teach(turn, "U1")
    assert result.promoted_ids == (candidate,)
    promoted = mem.examples.get(candidate)
    assert promoted is not None and (promoted.status, promoted.source) == ("active", "self_healed")
    assert mem.examples.similar("Keanu Reeves movies")[0].id == candidate

    # The self-healed turn itself taught: its own candidate is promoted and voted.
    own = mem.examples.add_candidate("How many genres?", "MATCH (g:Genre) RETURN count(g)", "fp1")
    own_turn = _turn(mem, "How many genres?", "MATCH (g:Genre) RETURN count(g)")
    result = mem.examples.teach(own_turn, "U2")
    assert (result.status, result.example_id, result.promoted_ids) == ("voted", own, (own,))

    # Removing the only 👍 sends a promoted candidate back to candidate.
    assert mem.examples.untaught(own_turn, "U2").status == "removed"
    assert mem.examples.get(own).status == "candidate"  # type: ignore[union-attr]


def test_admin_promote_and_retire(mem: Memory) -> None:
    candidate = mem.examples.add_candidate("q", "RETURN 1", None)
    assert mem.examples.promote(candidate)
    assert mem.examples.get(candidate).status == "active"  # type: ignore[union-attr]
    assert mem.examples.retire(candidate)
    retired = mem.examples.get(candidate)
    assert retired is not None and (retired.status, retired.retired_reason) == ("retired", "admin")
    assert not mem.examples.retire(999)
    assert [e.id for e in mem.examples.list(status="retired")] == [candidate]


def test_mark_used(mem: Memory) -> None:
    a = mem.examples.add("a", "RETURN 1", source="seed")
    mem.examples.mark_used([a, a])
    mem.examples.mark_used([a, 12345])
    mem.examples.mark_used([])
    assert mem.examples.get(a).times_used == 2  # type: ignore[union-attr]


# --- retrieval -----------------------------------------------------------------------------

SEEDS = [
    ("How many movies are in the database?", "MATCH (m:Movie) RETURN count(m)"),
    (
        "Which movies did Tom Hanks act in?",
        "MATCH (:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m) RETURN m.title",
    ),
    (
        "Who directed The Matrix?",
        "MATCH (p)-[:DIRECTED]->(:Movie {title: 'The Matrix'}) RETURN p.name",
    ),
    (
        "What is the average rating of movies released after 2000?",
        "MATCH (m:Movie) WHERE m.released > 2000 RETURN avg(m.rating)",
    ),
    ("List the actors born before 1960", "MATCH (p:Person) WHERE p.born < 1960 RETURN p.name"),
    (
        "Which genres have the most movies?",
        "MATCH (m)-[:IN_GENRE]->(g) RETURN g.name, count(m) ORDER BY count(m) DESC",
    ),
    (
        "Who reviewed Cloud Atlas?",
        "MATCH (p)-[:REVIEWED]->(:Movie {title: 'Cloud Atlas'}) RETURN p.name",
    ),
    (
        "Which people both acted in and directed a movie?",
        "MATCH (p)-[:ACTED_IN]->(m)<-[:DIRECTED]-(p) RETURN p.name",
    ),
]


@pytest.fixture
def seeded(mem: Memory) -> dict[str, int]:
    return {q: mem.examples.add(q, c, source="seed", schema_fingerprint="fp1") for q, c in SEEDS}


@pytest.mark.parametrize(
    ("paraphrase", "expected"),
    [
        ("count of movies in the database", SEEDS[0][0]),
        ("What films has Tom Hanks acted in?", SEEDS[1][0]),
        ("the director of The Matrix", SEEDS[2][0]),
        ("average movie rating since 2000", SEEDS[3][0]),
        ("actors who were born before 1970", SEEDS[4][0]),
        ("which genre has the most films", SEEDS[5][0]),
        ("people who reviewed Cloud Atlas", SEEDS[6][0]),
        ("Who directed a movie they acted in?", SEEDS[7][0]),
    ],
)
def test_lexical_retrieval_finds_the_paraphrased_example_first(
    mem: Memory, seeded: dict[str, int], paraphrase: str, expected: str
) -> None:
    found = mem.examples.similar(paraphrase, k=3)
    assert found, paraphrase
    assert found[0].question == expected
    assert found[0].score > 0


def test_similar_skips_near_duplicates_and_inactive(mem: Memory, seeded: dict[str, int]) -> None:
    mem.examples.add(
        "How many movies are in the database", "MATCH (n:Movie) RETURN count(*)", source="admin"
    )
    mem.examples.add("Count movies in the database?", SEEDS[0][1], source="admin")
    found = mem.examples.similar("how many movies in the database", k=3)
    questions = [e.question.rstrip("?").lower() for e in found]
    assert len(set(questions)) == len(questions)
    assert sum("movies are in the database" in q for q in questions) == 1
    mem.examples.retire(seeded[SEEDS[6][0]])
    assert all(e.question != SEEDS[6][0] for e in mem.examples.similar("Cloud Atlas reviews"))
    assert mem.examples.similar("??") == []
    assert mem.examples.similar("movies", k=0) == []


def test_fingerprint_mismatch_is_flagged_for_revalidation(
    mem: Memory, seeded: dict[str, int]
) -> None:
    mem.examples.add(
        "How many movies in total?",
        "MATCH (m:Film) RETURN count(m)",
        source="admin",
        schema_fingerprint="fp0",
    )
    found = mem.examples.similar("how many movies", k=3, schema_fingerprint="fp1")
    flags = {e.question: e.verified_on_current for e in found}
    assert flags["How many movies are in the database?"] is True
    assert flags["How many movies in total?"] is False
    # Without a known current fingerprint nothing can be judged: nothing is flagged.
    assert all(e.verified_on_current for e in mem.examples.similar("how many movies"))
    mem.examples.schema_fingerprint = "fp2"
    assert not any(e.verified_on_current for e in mem.examples.similar("how many movies"))


def _fake_embedder(texts: list[str]) -> list[list[float]]:
    """Deterministic bag-of-words hashing into 64 dimensions, with a few synonyms folded."""
    synonyms = {"films": "movies", "film": "movies", "movie": "movies", "flicks": "movies"}
    vectors = []
    for text in texts:
        vector = [0.0] * 64
        for word in text.lower().replace("?", "").split():
            word = synonyms.get(word, word)
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        vectors.append(vector)
    return vectors


def test_semantic_retrieval_with_an_embedder(memory_location: str) -> None:
    calls: list[int] = []

    def embedder(texts: list[str]) -> list[list[float]]:
        calls.append(len(texts))
        return _fake_embedder(texts)

    path = memory_location
    with open_memory(path) as plain:
        for q, c in SEEDS:
            plain.examples.add(q, c, source="seed")
    with open_memory(path, embedder=embedder, embedder_name="fake-64") as mem:
        # "flicks" is not a word of the seed: the embedder relates it to "movies".
        found = mem.examples.similar("how many flicks are in the database", k=1)
        assert found[0].question == SEEDS[0][0]
        assert calls[0] == len(SEEDS)  # back-filled once, in one batch
        mem.examples.similar("who directed the matrix", k=1)
        assert sum(calls) == len(SEEDS) + 2  # only the queries now
        new = mem.examples.add("How many flicks came out in 1999?", "RETURN 1", source="admin")
        assert mem.examples.similar("how many films came out in 1999", k=1)[0].id == new


def test_semantic_falls_back_to_lexical_when_the_embedder_fails(memory_location: str) -> None:
    def broken(texts: list[str]) -> list[list[float]]:
        raise ConnectionError("embeddings endpoint down")

    with open_memory(memory_location, embedder=broken) as mem:
        mem.examples.add(*SEEDS[2], source="seed")
        assert mem.examples.similar("director of The Matrix")[0].question == SEEDS[2][0]


# --- exact reuse ---------------------------------------------------------------------------


def test_exact_match_requires_trust_and_normalised_equality(mem: Memory) -> None:
    taught = _turn(mem, "How many movies were released in 2000?", MOVIES_2000)
    mem.examples.teach(taught, "U1")
    assert mem.examples.exact("How many movies were released in 2000?") is None  # 1 vote
    mem.examples.teach(taught, "U2")
    hit = mem.examples.exact("  how many MOVIES were released in 2000 ")
    assert hit is not None and hit.cypher == MOVIES_2000
    # Near misses are merely similar: never reused.
    for near in (
        "How many movies were released in 2001?",
        "How many movies were released after 2000?",
        "How many movies were not released in 2000?",
        "How many movies were released in 2000 by Warner?",
    ):
        assert mem.examples.exact(near) is None, near
    admin = mem.examples.add("Who directed The Matrix?", SEEDS[2][1], source="admin")
    assert mem.examples.exact("who directed the matrix").id == admin  # type: ignore[union-attr]
    mem.examples.retire(admin)
    assert mem.examples.exact("who directed the matrix") is None
    cand = mem.examples.add_candidate("How many people?", "MATCH (p:Person) RETURN count(p)", None)
    assert cand and mem.examples.exact("How many people?") is None


# --- import / export -----------------------------------------------------------------------


def _validate(cypher: str) -> str | None:
    return (
        "Invalid input 'RETRN': expected RETURN (line 1, column 20)" if "RETRN" in cypher else None
    )


def test_import_yaml_reports_the_invalid_query(mem: Memory, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.yaml"
    seeds.write_text(
        "- question: How many movies?\n  cypher: MATCH (m:Movie) RETURN count(m)\n"
        "- question: Who acted in Top Gun?\n  cypher: MATCH (p)-[:ACTED_IN]->(m) RETRN p\n"
        "- question: Oldest person?\n  cypher: MATCH (p:Person) RETURN p ORDER BY p.born LIMIT 1\n"
        "- question: missing cypher\n",
        encoding="utf-8",
    )
    report = mem.examples.import_file(seeds, _validate)
    assert len(report.imported) == 2
    assert [(bad.index, bad.question) for bad in report.invalid] == [
        (2, "Who acted in Top Gun?"),
        (4, "missing cypher"),
    ]
    assert "RETRN" in report.invalid[0].error
    assert {e.source for e in mem.examples.list()} == {"seed"}
    again = mem.examples.import_file(seeds, _validate)
    assert again.imported == [] and sorted(again.already_present) == sorted(report.imported)


def test_import_jsonl_and_export_round_trip(mem: Memory, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(
        "\n".join(json.dumps({"question": q, "cypher": c}) for q, c in SEEDS) + "\n\nnot json\n",
        encoding="utf-8",
    )
    report = mem.examples.import_file(seeds, _validate, schema_fingerprint="fp1")
    assert len(report.imported) == len(SEEDS)
    assert [bad.index for bad in report.invalid] == [len(SEEDS) + 2]
    assert all(e.schema_fingerprint == "fp1" for e in mem.examples.list())

    for suffix in ("yaml", "jsonl"):
        out = tmp_path / f"export.{suffix}"
        assert mem.examples.export(out) == len(SEEDS)
        with open_memory(tmp_path / f"other-{suffix}.sqlite3") as other:
            assert len(other.examples.import_file(out, _validate).imported) == len(SEEDS)
            assert {e.question for e in other.examples.list()} == {q for q, _ in SEEDS}


def test_schema_examples_retired_by_votes_still_count_as_generated(mem: Memory) -> None:
    # A 👎 outlives regeneration: the fingerprint is not generated again for it.
    question, cypher = "How many movies?", "MATCH (m:Movie) RETURN count(m)"
    mem.examples.replace_schema_examples([(question, cypher, "count")], "fp1", cap_per_shape=3)
    (example,) = mem.examples.list(source="schema")
    mem.examples.vote_down(_turn(mem, question, cypher, example_ids=(example.id,)), "U2")
    (example,) = mem.examples.list(source="schema")
    assert (example.status, example.retired_reason) == ("retired", "votes")
    assert mem.examples.has_schema_examples("fp1")
