"""SQLite stores (sqlite-utils): conversation turns, few-shot examples, feedback, processed events."""
