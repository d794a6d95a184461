"""display_property: which property names a label's entities, on graphs we did not design."""

from __future__ import annotations

import pytest

from graph_agent.graphdb.protocol import LabelInfo, PropertyInfo
from graph_agent.graphdb.schema import display_property


def _label(name: str, *props: str, numeric: tuple[str, ...] = ()) -> LabelInfo:
    strings = tuple(PropertyInfo(p, ("STRING",)) for p in props)
    numbers = tuple(PropertyInfo(p, ("INTEGER",)) for p in numeric)
    return LabelInfo(name=name, count=1, properties=strings + numbers)


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        (_label("Person", "email", "name", "title"), "name"),
        (_label("Product", "productName", "quantityPerUnit"), "productName"),
        (_label("Category", "categoryName", "description"), "categoryName"),
        (_label("Customer", "companyName", "contactName", "city"), "companyName"),
        (_label("Employee", "firstName", "lastName", "title"), "lastName"),
        (_label("Movie", "tagline", "title", numeric=("released",)), "title"),
        (_label("Incident", "key", "severity", "title"), "title"),
        (_label("Airport", "code", "city"), "code"),
        (_label("Reading", "unit", numeric=("value",)), None),
        (_label("Order", "shipCity", "shipName", numeric=("orderID", "freight")), "orderID"),
        (_label("Supplier", "companyName", "contactName", "contactTitle"), "companyName"),
        (_label("Thing", numeric=("name",)), None),
        (_label("Filing", "id", "begin_date", "beneficiary_bank", numeric=("transactions",)), "id"),
        (_label("Order", "id", numeric=("orderID",)), "orderID"),
        (_label("Entity", "id", "name"), "name"),
    ],
)
def test_display_property(label: LabelInfo, expected: str | None) -> None:
    assert display_property(label) == expected
