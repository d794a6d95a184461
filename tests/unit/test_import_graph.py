"""No import cycles between cypherbot's modules (issue 14: bot/cli.py ↔ bot/cli/* had one).

Every import counts, also those inside functions (they run, just later). `from pkg import mod`
is an edge to the submodule `pkg.mod`; `from pkg import name` an edge to the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "graph_agent", "memory", "guardrails", "rig")
PRODUCT = ("bot", "graph_agent", "memory", "guardrails")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = {f"{node.module}.{alias.name}" for alias in node.names}
            submodules = names & modules.keys()
            found |= submodules or ({node.module} & modules.keys())
    return found


def import_graph() -> dict[str, set[str]]:
    """module → the modules of ours it imports."""
    modules = _modules()
    return {name: _imports(path, modules) - {name} for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_back() -> None:
    graph = import_graph()
    assert len(graph) > 50 and "bot.cli" in graph
    assert cycles(graph) == []


def test_the_four_packages_keep_their_layering() -> None:
    # guardrails and memory depend on nothing of ours; graph_agent not on bot.
    graph = import_graph()
    for module, targets in graph.items():
        top = module.split(".")[0]
        tops = {t.split(".")[0] for t in targets}
        if top in ("guardrails", "memory"):
            assert tops <= {top}, (module, tops)
        if top == "graph_agent":
            assert "bot" not in tops, (module, tops)


def test_the_rooms_of_bot_keep_their_layering() -> None:
    # bot/slack/ is the Slack app: it knows nothing of the CLI or the playground. The
    # playground drives the real Slack app, never the CLI; only the CLI sees every room.
    graph = import_graph()
    for module, targets in graph.items():
        if module.startswith("bot.slack"):
            assert not any(t.startswith(("bot.cli", "bot.playground")) for t in targets), module
        if module.startswith("bot.playground"):
            assert not any(t.startswith("bot.cli") for t in targets), module
        if module in ("bot.settings", "bot.wiring", "bot.charts"):
            assert not any(t.startswith(("bot.cli", "bot.playground")) for t in targets), module


AGENT_ROOMS = ("graph_agent.nodes", "graph_agent.repair")
"""The agent's steps and its repair rules: they see a graph as a `GraphReader`."""
WRITES = {"run_write", "write_batches", "GraphDB"}


def test_the_agent_cannot_name_a_write() -> None:
    # The steps, the rules and the context read the graph through GraphReader, which has no
    # write method: no attribute or name that writes appears in them.
    rooms = [
        path
        for name, path in _modules().items()
        if name.startswith(AGENT_ROOMS) or name in ("graph_agent.context", "graph_agent.agent")
    ]
    assert len(rooms) > 10
    for path in rooms:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        used |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        used |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert not used & WRITES, (path, used & WRITES)


def test_the_repair_rules_live_in_their_room() -> None:
    # A repair rule is declared with @rule(...) only inside graph_agent/repair/.
    for name, path in _modules().items():
        if name.startswith("graph_agent.repair"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        decorators = [
            d.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            for d in n.decorator_list
            if isinstance(d, ast.Call) and isinstance(d.func, ast.Name)
        ]
        assert "rule" not in decorators, name


def test_the_product_never_imports_the_development_rig() -> None:
    graph = import_graph()
    assert any(m.startswith("rig") for m in graph)
    for module, targets in graph.items():
        if module.split(".")[0] in PRODUCT:
            assert not [t for t in targets if t.split(".")[0] == "rig"], module


def test_the_agent_uses_only_the_public_api_of_guardrails() -> None:
    # graph_agent imports `guardrails` itself (its __init__ says what is public), never a
    # module inside it: the policy's internals can change without the agent noticing.
    uses = 0
    for name, path in _modules().items():
        if not name.startswith("graph_agent"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("guardrails"):
                assert node.module == "guardrails", (name, node.module)
                uses += 1
            if isinstance(node, ast.Import):
                assert not [a.name for a in node.names if a.name.startswith("guardrails.")], name
    assert uses > 10
