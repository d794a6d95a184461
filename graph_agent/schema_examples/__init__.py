"""Day-one few-shot examples built from the graph's own schema (no LLM by default), and the
retrieval that picks the ones covering a question's shape. Rooms: `wording` (English for schema
names, Cypher for values), `sampling` (shapes, report, the bounded sample of the graph's
values), `generation` (one builder per shape), `ranking` (retrieval), `natural_wording` (the
optional LLM pass that rewords the questions the way a person asks them)."""

from graph_agent.schema_examples.generation import generate_schema_examples
from graph_agent.schema_examples.natural_wording import natural_questions
from graph_agent.schema_examples.ranking import (
    Focus,
    cypher_cues,
    question_cues,
    question_focus,
    rank_examples,
    retrieval_query,
)
from graph_agent.schema_examples.sampling import (
    DEFAULT_CAP,
    SHAPES,
    GenerationReport,
    SchemaExample,
    Shape,
)
from graph_agent.schema_examples.wording import literal, relationship_phrase

__all__ = [
    "DEFAULT_CAP",
    "SHAPES",
    "Focus",
    "GenerationReport",
    "SchemaExample",
    "Shape",
    "cypher_cues",
    "generate_schema_examples",
    "literal",
    "natural_questions",
    "question_cues",
    "question_focus",
    "rank_examples",
    "relationship_phrase",
    "retrieval_query",
]
