"""Northwind, the retail graph of neo4j-graph-examples/northwind: products, orders, customers, staff."""

from __future__ import annotations

from graph_agent.datasets.loading import GraphWriter, Kind, Progress, Rel, read_csv
from graph_agent.graphdb.protocol import GraphDB

PACKAGE = "graph_agent.datasets.northwind"
PROBE = "MATCH (c:Category {categoryName: 'Beverages'})<-[:PART_OF]-(:Product) RETURN count(c)"
"""Returns a positive count when Northwind is loaded."""

FILES = {
    "Category": "categories.csv",
    "Supplier": "suppliers.csv",
    "Product": "products.csv",
    "Customer": "customers.csv",
    "Employee": "employees.csv",
    "Order": "orders.csv",
    "ORDERS": "order_details.csv",
}
KINDS = {
    "categoryID": Kind.INT,
    "supplierID": Kind.INT,
    "productID": Kind.INT,
    "employeeID": Kind.INT,
    "orderID": Kind.INT,
    "reportsTo": Kind.INT,
    "shipVia": Kind.INT,
    "unitsInStock": Kind.INT,
    "unitsOnOrder": Kind.INT,
    "reorderLevel": Kind.INT,
    "quantity": Kind.INT,
    "unitPrice": Kind.FLOAT,
    "freight": Kind.FLOAT,
    "discount": Kind.FLOAT,
    "discontinued": Kind.BOOL,
}
DATES = {
    "Employee": ("birthDate", "hireDate"),
    "Order": ("orderDate", "requiredDate", "shippedDate"),
}
KEYS = {
    "Category": "categoryID",
    "Supplier": "supplierID",
    "Product": "productID",
    "Customer": "customerID",
    "Employee": "employeeID",
    "Order": "orderID",
}
FULLTEXT = (
    ("Product", "productName"),
    ("Category", "categoryName"),
    ("Supplier", "companyName"),
    ("Customer", "companyName"),
)
# Nodes plus relationships, roughly; it only drives the progress bar.
_ESTIMATE = 5000


def load(db: GraphDB, progress: Progress | None = None) -> tuple[int, int]:
    """Write Northwind into `db`; return (nodes, relationships) written."""
    writer = GraphWriter(db, _ESTIMATE, progress)
    for label, key in KEYS.items():
        writer.index(label, key)
    rows = {label: read_csv(PACKAGE, name, KINDS) for label, name in FILES.items()}
    for label in KEYS:
        writer.nodes_of(label, rows[label], DATES.get(label, ()))

    def node(label: str) -> tuple[str, str]:
        return (label, KEYS[label])

    products, orders, employees = rows["Product"], rows["Order"], rows["Employee"]
    writer.rels_of(
        "PART_OF",
        node("Product"),
        node("Category"),
        (Rel(p["productID"], p["categoryID"]) for p in products if "categoryID" in p),
    )
    writer.rels_of(
        "SUPPLIES",
        node("Supplier"),
        node("Product"),
        (Rel(p["supplierID"], p["productID"]) for p in products if "supplierID" in p),
    )
    writer.rels_of(
        "PURCHASED",
        node("Customer"),
        node("Order"),
        (Rel(o["customerID"], o["orderID"]) for o in orders if "customerID" in o),
    )
    writer.rels_of(
        "SOLD",
        node("Employee"),
        node("Order"),
        (Rel(o["employeeID"], o["orderID"]) for o in orders if "employeeID" in o),
    )
    writer.rels_of(
        "REPORTS_TO",
        node("Employee"),
        node("Employee"),
        (Rel(e["employeeID"], e["reportsTo"]) for e in employees if "reportsTo" in e),
    )
    # Order details are a join table: each line becomes the ORDERS relationship, as in the
    # original, carrying what was sold at which price and discount.
    writer.rels_of(
        "ORDERS",
        node("Order"),
        node("Product"),
        (
            Rel(
                line["orderID"],
                line["productID"],
                {k: v for k, v in line.items() if k not in ("orderID", "productID")},
            )
            for line in rows["ORDERS"]
        ),
    )
    for label, prop in FULLTEXT:
        writer.fulltext(label, prop)
    writer.finish()
    return writer.nodes, writer.relationships
