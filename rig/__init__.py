"""The played parts the tests and the benchmarks run the real bot against: a scripted chat
model (the LLM), a rig of the real Slack app on the Slack emulator, a bot instance in its own
process, and a throwaway PostgreSQL cluster.

Development only: not in the wheel (pyproject's package list leaves it out), and no product
module imports it (tests/unit/test_import_graph.py)."""
