"""asks_to_change: instructions to change the graph, told apart from questions about changes."""

from __future__ import annotations

import pytest

from guardrails.intent import asks_to_change


@pytest.mark.parametrize(
    "question",
    [
        "Delete all the orders from 1996.",
        "Set the price of Chai to 20 dollars.",
        "Can you remove the product Chai?",
        "Please add a new supplier called Acme",
        "I want you to update every price",
        "Could you please rename the Seafood category",
        "Remove all airports in France",
        "Drop the graph",
        "Mark order 10248 as shipped",
        "Which customers are in London? Then delete them.",
        "  DETACH everything from node 5",
        "let's wipe the routes",
    ],
)
def test_instructions_to_change_data(question: str) -> None:
    assert asks_to_change(question)


@pytest.mark.parametrize(
    "question",
    [
        "Which products were added in 1997?",
        "When was the price set?",
        "How many orders were deleted?",
        "Add up the freight of all orders",
        "Then add them up",
        "Show me the orders",
        "List the products",
        "Create a list of customers in Berlin",
        "Set of customers in Berlin?",
        "Who updated the Chai product last?",
        "What changed in the Seafood category?",
        "Which suppliers supply products that were removed from sale?",
        "",
    ],
)
def test_reads_and_questions_about_changes(question: str) -> None:
    assert not asks_to_change(question)
