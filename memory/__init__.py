"""SQLite stores (sqlite-utils): conversation turns, few-shot examples, feedback, processed events."""

from memory.conversations import ConversationStore
from memory.errors import MemoryStoreError
from memory.events import EventStore
from memory.examples import (
    Embedder,
    ImportReport,
    InvalidExample,
    SqliteExampleStore,
    TeachResult,
    UntaughtResult,
    VoteDownResult,
)
from memory.feedback import FailingQuestion, FeedbackStore, Stats
from memory.store import Memory, open_memory
from memory.text import normalise_question
from memory.types import Example, ExampleSource, ExampleStatus, ExampleStore, Outcome, Turn

__all__ = [
    "ConversationStore",
    "Embedder",
    "EventStore",
    "Example",
    "ExampleSource",
    "ExampleStatus",
    "ExampleStore",
    "FailingQuestion",
    "FeedbackStore",
    "ImportReport",
    "InvalidExample",
    "Memory",
    "MemoryStoreError",
    "Outcome",
    "SqliteExampleStore",
    "Stats",
    "TeachResult",
    "Turn",
    "UntaughtResult",
    "VoteDownResult",
    "normalise_question",
    "open_memory",
]
