"""Day-one few-shot examples: (question, Cypher) pairs built from the graph's own schema, no LLM;
one builder per shape of question."""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import statistics
import time
from collections.abc import Iterator

from graph_agent.graphdb.protocol import (
    GraphReader,
    GraphSchema,
    RelPattern,
)
from graph_agent.schema_examples.sampling import (
    DEFAULT_CAP,
    TOP_N,
    GenerationReport,
    Sampler,
    SchemaExample,
)
from graph_agent.schema_examples.wording import (
    FREE_TEXT,
    ID_LIKE,
    column_alias,
    cy_name,
    date_phrase,
    identifier_like,
    literal,
    relationship_phrase,
    words,
)

logger = logging.getLogger(__name__)


class _Generator(Sampler):
    """One builder per shape, each yielding examples whose Cypher returned rows."""

    def count(self) -> Iterator[SchemaExample]:
        for label in sorted(self.labels.values(), key=lambda item: -item.info.count):
            v = label.var
            yield SchemaExample(
                f"How many {label.nouns} are there?",
                f"MATCH {label.node()} RETURN count({v}) AS count",
                "count",
            )
            for prop in label.categories[:1]:
                alias = column_alias(prop.name, ["count"])
                yield SchemaExample(
                    f"How many {label.nouns} are there per {' '.join(words(prop.name))}?",
                    f"MATCH {label.node()} RETURN {v}.{cy_name(prop.name)} AS {alias}, "
                    f"count({v}) AS count ORDER BY count DESC, {alias}",
                    "count",
                )

    def list_(self) -> Iterator[SchemaExample]:
        for label in sorted(self.labels.values(), key=lambda item: item.info.count):
            if label.display is None:
                continue
            v, alias = label.var, column_alias(label.display)
            yield SchemaExample(
                f"List the {label.nouns}.",
                f"MATCH {label.node()} RETURN {v}.{cy_name(label.display)} AS {alias} ORDER BY {alias}",
                "list",
            )

    def lookup(self) -> Iterator[SchemaExample]:
        for label in sorted(self.labels.values(), key=lambda item: -item.info.count):
            if label.display is None or not label.values:
                continue
            value, v = label.values[0], label.var
            props = [*label.categories, *label.numbers, *label.dates]
            if not props:
                continue
            first = props[0]
            yield SchemaExample(
                f"What is the {' '.join(words(first.name))} of {label.subject(value)}?",
                f"MATCH {label.node(value=value)} "
                f"RETURN {v}.{cy_name(first.name)} AS {column_alias(first.name)}",
                "lookup",
            )
            shown = [label.display, *[p.name for p in props[:5]]]
            columns = ", ".join(f"{v}.{cy_name(p)} AS {column_alias(p)}" for p in shown)
            yield SchemaExample(
                f"Show the details of {label.subject(label.values[-1])}.",
                f"MATCH {label.node(value=label.values[-1])} RETURN {columns}",
                "lookup",
            )

    def _rel_columns(self, rel: RelPattern, var: str, taken: list[str]) -> list[str]:
        columns = []
        for prop in rel.properties[:2]:
            if FREE_TEXT.search(prop.name) or ID_LIKE.search(prop.name):
                continue
            alias = column_alias(prop.name, taken)
            taken.append(alias)
            columns.append(f"{var}.{cy_name(prop.name)} AS {alias}")
        return columns

    def one_hop(self) -> Iterator[SchemaExample]:
        for rel in self.rels:
            a, b = self.labels[rel.start], self.labels[rel.end]
            phrase = relationship_phrase(rel.type, rel.end)
            pairs = self.pairs(rel, 5)
            bv = b.var if b.var != a.var else b.var + "2"
            if a.display and b.display and pairs:
                x, _y = pairs[0]
                alias = column_alias(b.display)
                columns = [f"{bv}.{cy_name(b.display)} AS {alias}"]
                columns += self._rel_columns(rel, "r", [alias])
                rvar = "r" if len(columns) > 1 else ""
                yield SchemaExample(
                    f"Which {b.nouns} {phrase.ask(a.subject(x))}?",
                    f"MATCH {a.node(value=x)}-[{rvar}:{cy_name(rel.type)}]->{b.node(bv)} "
                    f"RETURN {', '.join(columns)} ORDER BY {alias}",
                    "one_hop",
                )
            if a.display and b.display and pairs:
                _x, y = pairs[-1]
                alias = column_alias(a.display)
                yield SchemaExample(
                    f"Which {a.nouns} {phrase.plural} {b.subject(y)}?",
                    f"MATCH {a.node()}-[:{cy_name(rel.type)}]->{b.node(bv, value=y)} "
                    f"RETURN {a.var}.{cy_name(a.display)} AS {alias} ORDER BY {alias}",
                    "one_hop",
                )

    def two_hop(self) -> Iterator[SchemaExample]:
        # Co-members first ("other people in the same team as X"), then chains through a
        # node two patterns share ("teams that own the services X affected").
        for rel in self.rels:
            a, m = self.labels[rel.start], self.labels[rel.end]
            if rel.start == rel.end or not a.display:
                continue
            pairs = self.pairs(rel, 5)
            if not pairs:
                continue
            x = pairs[0][0]
            phrase = relationship_phrase(rel.type, rel.end)
            alias = column_alias(a.display)
            yield SchemaExample(
                f"Which other {a.nouns} {phrase.plural} the same {m.noun} as {a.subject(x)}?",
                f"MATCH {a.node(value=x)}-[:{cy_name(rel.type)}]->{m.node()}"
                f"<-[:{cy_name(rel.type)}]-{a.node('other')} WHERE other <> {a.var} "
                f"RETURN DISTINCT other.{cy_name(a.display)} AS {alias} ORDER BY {alias}",
                "two_hop",
            )
        for first in self.rels:
            a, m = self.labels[first.start], self.labels[first.end]
            if not a.display or first.start == first.end:
                continue
            pairs = self.pairs(first, 5)
            if not pairs:
                continue
            x = pairs[0][0]
            p1 = relationship_phrase(first.type, first.end)
            for second in self.rels:
                if second == first or first.end not in (second.start, second.end):
                    continue
                if second.start == second.end:
                    continue
                into_m = second.end == first.end
                other = self.labels[second.start if into_m else second.end]
                if not other.display or other.name == a.name:
                    continue
                p2 = relationship_phrase(second.type, second.end)
                ov = other.var if other.var not in (a.var, m.var) else other.var + "2"
                alias = column_alias(other.display)
                hop = f"<-[:{cy_name(second.type)}]-" if into_m else f"-[:{cy_name(second.type)}]->"
                if into_m:
                    question = (
                        f"Which {other.nouns} {p2.plural} the {m.nouns} that "
                        f"{a.subject(x)} {p1.singular}?"
                    )
                else:
                    subject = f"the {m.nouns} that {a.subject(x)} {p1.singular}"
                    question = f"Which {other.nouns} {p2.ask(subject, many=True)}?"
                yield SchemaExample(
                    question,
                    f"MATCH {a.node(value=x)}-[:{cy_name(first.type)}]->{m.node()}{hop}"
                    f"{other.node(ov)} RETURN DISTINCT {ov}.{cy_name(other.display)} AS {alias} "
                    f"ORDER BY {alias}",
                    "two_hop",
                )

    def both(self) -> Iterator[SchemaExample]:
        for rel in self.rels:
            a, b = self.labels[rel.start], self.labels[rel.end]
            if not a.display or not b.display:
                continue
            bv = b.var if b.var != a.var else b.var + "2"
            d = cy_name(b.display)
            rows = self.read(
                f"MATCH {b.node('x')}<-[:{cy_name(rel.type)}]-{a.node()}-[:{cy_name(rel.type)}]->"
                f"{b.node('y')} WHERE x.{d} < y.{d} "
                f"WITH x.{d} AS first, y.{d} AS second LIMIT 5 RETURN first, second",
                max_rows=5,
            )
            rows = [r for r in rows if identifier_like(r[0]) and identifier_like(r[1])]
            if not rows:
                continue
            first, second = rows[0]
            phrase = relationship_phrase(rel.type, rel.end)
            alias = column_alias(a.display)
            yield SchemaExample(
                f"Which {a.nouns} {phrase.plural} both {b.subject(first)} and {b.subject(second)}?",
                f"MATCH {a.node()}-[:{cy_name(rel.type)}]->{b.node(bv, value=first)}, "
                f"({a.var})-[:{cy_name(rel.type)}]->{b.node(bv + 'b', value=second)} "
                f"RETURN DISTINCT {a.var}.{cy_name(a.display)} AS {alias} ORDER BY {alias}",
                "both",
            )
        # "who also": the same node linked by two different patterns.
        by_start: dict[str, list[RelPattern]] = {}
        for rel in self.rels:
            by_start.setdefault(rel.start, []).append(rel)
        for start, rels in by_start.items():
            a = self.labels[start]
            if not a.display:
                continue
            for r1, r2 in itertools.pairwise(rels):
                b, c = self.labels[r1.end], self.labels[r2.end]
                if not b.display or not c.display or b.name == a.name or c.name == a.name:
                    continue
                bv, cv = b.var, c.var if c.var != b.var else c.var + "2"
                rows = self.read(
                    f"MATCH {b.node(bv)}<-[:{cy_name(r1.type)}]-{a.node()}-[:{cy_name(r2.type)}]->"
                    f"{c.node(cv)} WHERE {cv} <> {bv} "
                    f"WITH {bv}.{cy_name(b.display)} AS first, {cv}.{cy_name(c.display)} AS second "
                    "LIMIT 5 RETURN first, second",
                    max_rows=5,
                )
                rows = [r for r in rows if identifier_like(r[0]) and identifier_like(r[1])]
                if not rows:
                    continue
                first, second = rows[0]
                p1 = relationship_phrase(r1.type, r1.end)
                p2 = relationship_phrase(r2.type, r2.end)
                alias = column_alias(a.display)
                yield SchemaExample(
                    f"Which {a.nouns} {p1.plural} {b.subject(first)} and also "
                    f"{p2.plural} {c.subject(second)}?",
                    f"MATCH {a.node()}-[:{cy_name(r1.type)}]->{b.node(bv, value=first)}, "
                    f"({a.var})-[:{cy_name(r2.type)}]->{c.node(cv, value=second)} "
                    f"RETURN DISTINCT {a.var}.{cy_name(a.display)} AS {alias} ORDER BY {alias}",
                    "both",
                )

    def top_count(self) -> Iterator[SchemaExample]:
        for rel in self.rels:
            a, b = self.labels[rel.start], self.labels[rel.end]
            phrase = relationship_phrase(rel.type, rel.end)
            bv = b.var if b.var != a.var else b.var + "2"
            if a.display:
                alias = column_alias(a.display, ["count"])
                yield SchemaExample(
                    f"Which {a.noun} {phrase.singular} the most {b.nouns}?",
                    f"MATCH {a.node()}-[:{cy_name(rel.type)}]->{b.node(bv)} "
                    f"RETURN {a.var}.{cy_name(a.display)} AS {alias}, count({bv}) AS count "
                    f"ORDER BY count DESC, {alias} LIMIT {TOP_N}",
                    "top_count",
                )
            if b.display and rel.start != rel.end:
                alias = column_alias(b.display, ["count"])
                yield SchemaExample(
                    f"Which {b.noun} has the most {a.nouns} that {phrase.plural} it?",
                    f"MATCH {a.node()}-[:{cy_name(rel.type)}]->{b.node(bv)} "
                    f"RETURN {bv}.{cy_name(b.display)} AS {alias}, count({a.var}) AS count "
                    f"ORDER BY count DESC, {alias} LIMIT {TOP_N}",
                    "top_count",
                )

    def top_value(self) -> Iterator[SchemaExample]:
        for label in sorted(self.labels.values(), key=lambda item: -item.info.count):
            if not label.display:
                continue
            for prop, order, word in (
                *((p, "DESC", "highest") for p in label.numbers[:2]),
                *((p, "ASC", "lowest") for p in label.numbers[:1]),
            ):
                v, name = label.var, column_alias(label.display)
                measure = column_alias(prop.name, [name])
                yield SchemaExample(
                    f"Which {label.nouns} have the {word} {' '.join(words(prop.name))}?",
                    f"MATCH {label.node()} WHERE {v}.{cy_name(prop.name)} IS NOT NULL "
                    f"RETURN {v}.{cy_name(label.display)} AS {name}, {v}.{cy_name(prop.name)} AS {measure} "
                    f"ORDER BY {measure} {order}, {name} LIMIT {TOP_N}",
                    "top_value",
                )

    def range_(self) -> Iterator[SchemaExample]:
        for label in sorted(self.labels.values(), key=lambda item: -item.info.count):
            if not label.display:
                continue
            v, name = label.var, column_alias(label.display)
            for prop in label.numbers[:1]:
                values = [x for x in self.values(label, prop) if isinstance(x, int | float)]
                if not values:
                    continue
                middle = statistics.median_low(sorted(values))
                measure = column_alias(prop.name, [name])
                yield SchemaExample(
                    f"Which {label.nouns} have a {' '.join(words(prop.name))} above {middle}?",
                    f"MATCH {label.node()} WHERE {v}.{cy_name(prop.name)} > {literal(middle)} "
                    f"RETURN {v}.{cy_name(label.display)} AS {name}, {v}.{cy_name(prop.name)} AS {measure} "
                    f"ORDER BY {measure} DESC, {name}",
                    "range",
                )
            for prop in label.dates[:1]:
                days = sorted(str(x)[:10] for x in self.values(label, prop))
                if len(days) < 2:
                    continue
                low, high = days[len(days) // 4], days[(3 * len(days)) // 4]
                try:
                    after = (dt.date.fromisoformat(high) + dt.timedelta(days=1)).isoformat()
                except ValueError:
                    continue
                measure = column_alias(prop.name, [name])
                p = f"{v}.{cy_name(prop.name)}"
                yield SchemaExample(
                    f"Which {label.nouns} {date_phrase(prop.name)} between {low} and {high}?",
                    f"MATCH {label.node()} WHERE {p} >= {self.date_literal(label, prop, low)} "
                    f"AND {p} < {self.date_literal(label, prop, after)} "
                    f"RETURN {v}.{cy_name(label.display)} AS {name}, {p} AS {measure} "
                    f"ORDER BY {measure}",
                    "range",
                )

    def negation(self) -> Iterator[SchemaExample]:
        for rel in self.rels:
            a, b = self.labels[rel.start], self.labels[rel.end]
            phrase = relationship_phrase(rel.type, rel.end)
            if a.display:
                alias = column_alias(a.display)
                yield SchemaExample(
                    f"Which {a.nouns} are without any {b.noun} they {phrase.plural}?",
                    f"MATCH {a.node()} WHERE NOT ({a.var})-[:{cy_name(rel.type)}]->(:{cy_name(b.name)}) "
                    f"RETURN {a.var}.{cy_name(a.display)} AS {alias} ORDER BY {alias}",
                    "negation",
                )
            if b.display and rel.start != rel.end:
                alias = column_alias(b.display)
                yield SchemaExample(
                    f"Which {b.nouns} are without any {a.noun} that {phrase.singular} them?",
                    f"MATCH {b.node()} WHERE NOT ({b.var})<-[:{cy_name(rel.type)}]-(:{cy_name(a.name)}) "
                    f"RETURN {b.var}.{cy_name(b.display)} AS {alias} ORDER BY {alias}",
                    "negation",
                )

    def follow_up(self) -> Iterator[SchemaExample]:
        # Stored in standalone form: the rewrite step turns "which of those are X?" into this.
        for rel in self.rels:
            a, b = self.labels[rel.start], self.labels[rel.end]
            if not a.display or not b.display or not (b.categories or b.numbers):
                continue
            pairs = self.pairs(rel, 5)
            if not pairs:
                continue
            x = pairs[0][0]
            bv = b.var if b.var != a.var else b.var + "2"
            phrase = relationship_phrase(rel.type, rel.end)
            base = f"MATCH {a.node(value=x)}-[:{cy_name(rel.type)}]->{b.node(bv)}"
            alias = column_alias(b.display)
            prop = (b.categories or b.numbers)[0]
            rows = self.read(
                f"{base} WHERE {bv}.{cy_name(prop.name)} IS NOT NULL "
                f"WITH {bv}.{cy_name(prop.name)} AS value LIMIT 1 RETURN value",
                max_rows=1,
            )
            if not rows or not (identifier_like(rows[0][0]) or isinstance(rows[0][0], int)):
                continue
            value = rows[0][0]
            measure = column_alias(prop.name, [alias])
            yield SchemaExample(
                f"Of the {b.nouns} that {a.subject(x)} {phrase.singular}, which have "
                f"{' '.join(words(prop.name))} {value}?",
                f"{base} WHERE {bv}.{cy_name(prop.name)} = {literal(value)} "
                f"RETURN {bv}.{cy_name(b.display)} AS {alias}, {bv}.{cy_name(prop.name)} AS {measure} "
                f"ORDER BY {alias}",
                "follow_up",
            )


def generate_schema_examples(
    db: GraphReader,
    schema: GraphSchema,
    *,
    cap_per_shape: int = DEFAULT_CAP,
    timeout_s: float = 5.0,
    budget_s: float = 60.0,
) -> GenerationReport:
    """Build question/Cypher pairs for every shape from `schema` and values sampled from `db`.

    Every read is bounded (LIMIT, engine timeout, row cap); each candidate runs read-only and
    is kept only when it returns rows; at most `cap_per_shape` are kept per shape. Stops
    early, keeping what it has, when `budget_s` is spent.
    """
    started = time.monotonic()
    gen = _Generator(
        db,
        schema,
        cap=max(0, cap_per_shape),
        timeout_s=timeout_s,
        deadline=started + budget_s,
    )
    if gen.cap and gen.labels:
        gen.sample()
        gen.run(
            {
                "count": gen.count,
                "list": gen.list_,
                "lookup": gen.lookup,
                "one_hop": gen.one_hop,
                "two_hop": gen.two_hop,
                "both": gen.both,
                "top_count": gen.top_count,
                "top_value": gen.top_value,
                "range": gen.range_,
                "negation": gen.negation,
                "follow_up": gen.follow_up,
            }
        )
    gen.report.seconds = time.monotonic() - started
    logger.info(
        "schema examples: kept %d of %d in %.2f s (%d queries)",
        len(gen.report.kept),
        sum(gen.report.tried.values()),
        gen.report.seconds,
        gen.report.queries,
    )
    return gen.report
