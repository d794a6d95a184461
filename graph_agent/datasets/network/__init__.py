"""A data-centre network shaped like neo4j-graph-examples/network-management, generated here.

Upstream builds its graph with a Cypher script that draws machine software at random; this
module builds a smaller one of the same model (labels, relationship types and directions,
property names, the script's fixed lists) from `random.Random(SEED)`, so every load is the
same graph. See SOURCE.md beside it for what differs from the upstream script.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from graph_agent.datasets.loading import BATCH_ROWS, GraphWriter, Progress, Rel
from graph_agent.graphdb.protocol import GraphDB, batched

PACKAGE = "graph_agent.datasets.network"
PROBE = "MATCH (r:Rack {name: 'DC1-RCK-1-1'})-[:HOLDS]->(:Machine) RETURN count(r)"
"""Returns a positive count when the network graph is loaded."""

SEED = 20261146
DATA_CENTER = {"name": "DC1", "location": "Iceland, Rekjavik"}  # upstream's spelling
ZONES = 4
RACKS_PER_ZONE = 10
SLOTS = 200
"""Machine slots in a rack; upstream fills all 200 of each rack (8,000 machines)."""
MACHINES_PER_RACK = (20, 50)
"""How many slots of a rack hold a machine here (drawn per rack, inclusive)."""
ALWAYS_FILLED = {"DC1-RCK-1-1": (1,), "DC1-RCK-2-3": (17,), "DC1-RCK-2-5": (150,)}
"""Slots named by the questions of docs/eval.md (evals/network.yaml): always hold a machine."""
SPARE_SHARE = 0.02
"""Machines set up with an operating system but no application yet (upstream has none)."""
TYPE_NAMES = ("xs", "s", "m", "l", "xl", "xxl")
OPERATING_SYSTEMS: tuple[dict[str, Any], ...] = (
    {"name": "RHEL", "versions": ["7.1", "7.2", "7.3"]},
    {"name": "Ubuntu", "versions": ["14.04", "16.04", "16.10", "17.04"]},
    {"name": "Debian", "versions": ["6-Squeeze", "7-Wheezy", "8-Jessie"]},
)
SERVICES: tuple[dict[str, Any], ...] = (
    {"name": "java", "versions": ["8"]},
    {
        "name": "neo4j",
        "ports": [7474, 7473, 7687],
        "versions": ["3.0", "3.1"],
        "dependencies": ["java/8"],
    },
    {"name": "postgres", "ports": [5432], "versions": ["9.4", "9.5", "9.6"]},
    {
        "name": "couchbase",
        "ports": [8091, 8092, 11207, 11209, 11210, 11211, 11214, 11215, 18091, 18092, 4369],
        "versions": ["3.0", "4.0", "4.5", "4.6"],
    },
    {
        "name": "elasticsearch",
        "ports": [9200, 9300, 9500, 9700],
        "versions": ["2.4", "5.0", "5.1", "5.2"],
        "dependencies": ["java/8"],
    },
)
APPLICATIONS: tuple[dict[str, Any], ...] = (
    {"name": "webserver", "ports": [80, 443], "dependencies": ["postgres/9.4"]},
    {"name": "crm", "ports": [80, 443], "dependencies": ["java/8", "neo4j/3.1"]},
    {"name": "cms", "ports": [8080], "dependencies": ["php", "webserver", "couchbase"]},
    {"name": "webapp", "ports": [8080], "dependencies": ["java", "neo4j"]},
    {"name": "logstash", "ports": [5000], "dependencies": ["elasticsearch/5.2"]},
)
"""The upstream script's lists, as it writes them onto the Software nodes (`SET s = sw`)."""
KEYS = {
    "DataCenter": "name",
    "Router": "name",
    "Interface": "ip",
    "Zone": "zone",
    "Rack": "name",
    "Switch": "ip",
    "Type": "name",
    "Machine": "name",
    "Software": "name",
}
"""The property each label's nodes are matched on while loading (unique within the label)."""
FULLTEXT = (("Software", "name"), ("Machine", "name"), ("Rack", "name"), ("Type", "name"))
REFERENCE_MS = int(datetime(2026, 11, 25, tzinfo=UTC).timestamp() * 1000)
"""`timestamp()` of the upstream script: process start times are drawn back from it."""
DAY_MS = 24 * 3600 * 1000
Advance = Callable[[int], None]


@dataclass(frozen=True)
class Dependency:
    """What a software depends on: a software (`version` None) or one version of it."""

    software: str
    version: str | None

    @property
    def name(self) -> str:
        """The name of the node depended on (upstream names a dependency process after it)."""
        return self.version if self.version is not None else self.software


def _dependency(text: str) -> Dependency:
    software, _, version = text.partition("/")
    return Dependency(software, version or None)


def _software() -> dict[str, dict[str, Any]]:
    """Every Software node's properties by name, with php (named only as a dependency)."""
    found = {sw["name"]: dict(sw) for sw in (*OPERATING_SYSTEMS, *SERVICES, *APPLICATIONS)}
    for sw in list(found.values()):
        for dep in map(_dependency, sw.get("dependencies", [])):
            found.setdefault(dep.software, {"name": dep.software})
    return found


def _versions() -> list[tuple[str, str]]:
    """(software, version) pairs: the listed versions, then those only a dependency names."""
    pairs = [(sw["name"], v) for sw in (*OPERATING_SYSTEMS, *SERVICES) for v in sw["versions"]]
    for sw in (*SERVICES, *APPLICATIONS):
        for dep in map(_dependency, sw.get("dependencies", [])):
            if dep.version is not None and (dep.software, dep.version) not in pairs:
                pairs.append((dep.software, dep.version))
    return pairs


@dataclass
class Machine:
    """One machine of the plan and what runs on it."""

    name: str
    ip: str
    rack: str
    type: str
    os: tuple[str, str]
    """(operating system, version)."""
    os_start: int
    app: str | None = None
    app_pid: int = 0
    app_start: int = 0
    dependencies: list[dict[str, Any]] = field(default_factory=list)
    """One row per dependency process: its name, pid, startTime and what it is an instance of."""


def _type_of(slot: int) -> int:
    """The upstream rule: types get rarer as they get bigger (index into TYPE_NAMES)."""
    return len(TYPE_NAMES) - int(math.log(SLOTS - slot + 1)) - 1


def _types() -> list[dict[str, Any]]:
    """The machine types, as upstream: cpu 2^i, ram 4^i, disk 5^i, named like `xs-1/1/1`."""
    types = []
    for idx, type_name in enumerate(TYPE_NAMES):
        cpu, ram, disk = 2**idx, 4**idx, 5**idx
        name = f"{type_name}-{cpu}/{ram}/{disk}"
        types.append(
            {"id": idx, "cpu": cpu, "ram": ram, "disk": disk, "type": type_name, "name": name}
        )
    return types


def _machines(rng: random.Random, software: dict[str, dict[str, Any]]) -> list[Machine]:
    """The machines of every rack, in rack order, with their operating system and software."""
    os_versions = [(os["name"], v) for os in OPERATING_SYSTEMS for v in os["versions"]]
    apps = [app["name"] for app in APPLICATIONS]
    types = _types()
    machines: list[Machine] = []
    for zone in range(1, ZONES + 1):
        for rack_id in range(1, RACKS_PER_ZONE + 1):
            rack = f"DC1-RCK-{zone}-{rack_id}"
            count = rng.randint(*MACHINES_PER_RACK)
            slots = set(rng.sample(range(1, SLOTS + 1), count)) | set(ALWAYS_FILLED.get(rack, ()))
            for slot in sorted(slots):
                machine = Machine(
                    name=f"{rack}-M-{slot}",
                    ip=f"10.{zone}.{rack_id}.{slot}",
                    rack=rack,
                    type=types[_type_of(slot)]["name"],
                    os=rng.choice(os_versions),
                    os_start=REFERENCE_MS - int((rng.random() * 10 + 5) * DAY_MS),
                )
                if rng.random() >= SPARE_SHARE:
                    machine.app = rng.choice(apps)
                    machine.app_pid = int(rng.random() * 10000)
                    machine.app_start = REFERENCE_MS - int(rng.random() * 10 * DAY_MS)
                    for dep in map(_dependency, software[machine.app].get("dependencies", [])):
                        machine.dependencies.append(
                            {
                                "machine": machine.name,
                                "name": dep.name,
                                "software": dep.software,
                                "version": dep.version,
                                "pid": int(rng.random() * 10000),
                                "startTime": REFERENCE_MS - int(rng.random() * 10 * DAY_MS),
                                "ports": list(software[dep.software].get("ports", []))
                                if dep.version is None
                                else [],
                            }
                        )
                machines.append(machine)
    return machines


def _ports(machine: Machine, software: dict[str, dict[str, Any]]) -> list[int]:
    """The port numbers the machine's interface exposes: its processes' ports, each once.

    As upstream (`MERGE (port:Port {port: n})<-[:EXPOSES]-(i)`), a Port node belongs to one
    machine's interface, and the processes of that machine listening on that number share it.
    """
    if machine.app is None:
        return []
    numbers = list(software[machine.app].get("ports", []))
    for dep in machine.dependencies:
        numbers += dep["ports"]
    return list(dict.fromkeys(numbers))


def _create(db: GraphDB, cypher: str, rows: list[dict[str, Any]], advance: Advance) -> None:
    """Run `cypher` over `rows` in UNWIND batches (the statements GraphWriter has no form for)."""
    for batch in batched(rows, BATCH_ROWS):
        db.write_batches(cypher, [batch])
        advance(len(batch))


def _hardware_rels(machines: list[Machine]) -> list[tuple[str, str, str, list[Rel]]]:
    """(type, start label, end label, rels) of the data centre, zones, racks and machines.

    Nodes are matched by their key (KEYS); the zone network is matched by its zone number.
    """
    zones = range(1, ZONES + 1)
    racks = [(z, r) for z in zones for r in range(1, RACKS_PER_ZONE + 1)]
    return [
        (
            "CONTAINS",
            "DataCenter",
            "Router",
            [Rel("DC1", "DC1-RE"), *(Rel("DC1", f"DC1-R-{z}") for z in zones)],
        ),
        ("ROUTES", "Router", "Interface", [Rel("DC1-RE", "10.0.0.254")]),
        ("CONNECTS", "Interface", "Zone", [Rel("10.0.0.254", z) for z in zones]),
        ("ROUTES", "Router", "Interface", [Rel(f"DC1-R-{z}", f"10.{z}.0.254") for z in zones]),
        ("CONNECTS", "Interface", "Zone", [Rel(f"10.{z}.0.254", z) for z in zones]),
        ("CONTAINS", "DataCenter", "Rack", [Rel("DC1", f"DC1-RCK-{z}-{r}") for z, r in racks]),
        ("HOLDS", "Rack", "Switch", [Rel(f"DC1-RCK-{z}-{r}", f"10.{z}.{r}") for z, r in racks]),
        (
            "ROUTES",
            "Switch",
            "Interface",
            [Rel(f"10.{z}.{r}", f"10.{z}.{r}.254") for z, r in racks],
        ),
        ("ROUTES", "Zone", "Interface", [Rel(z, f"10.{z}.{r}.254") for z, r in racks]),
        ("HOLDS", "Rack", "Machine", [Rel(m.rack, m.name) for m in machines]),
        ("ROUTES", "Machine", "Interface", [Rel(m.name, m.ip) for m in machines]),
        (
            "CONNECTS",
            "Interface",
            "Interface",
            [Rel(m.ip, m.ip.rsplit(".", 1)[0] + ".254") for m in machines],
        ),
        ("TYPE", "Machine", "Type", [Rel(m.name, m.type) for m in machines]),
    ]


def _hardware_nodes(machines: list[Machine]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(labels, rows) of the data centre, routers, zone networks, racks, switches, machines."""
    zones = range(1, ZONES + 1)
    racks = [(z, r) for z in zones for r in range(1, RACKS_PER_ZONE + 1)]
    return [
        ("DataCenter", [dict(DATA_CENTER)]),
        ("Router:Egress", [{"name": "DC1-RE"}]),
        ("Router", [{"name": f"DC1-R-{z}", "zone": z} for z in zones]),
        ("Network:Zone", [{"ip": f"10.{z}", "size": 16, "zone": z} for z in zones]),
        ("Rack", [{"name": f"DC1-RCK-{z}-{r}", "rack": r, "zone": z} for z, r in racks]),
        ("Switch", [{"ip": f"10.{z}.{r}", "rack": r} for z, r in racks]),
        (
            "Interface",
            [
                {"ip": "10.0.0.254"},
                *({"ip": f"10.{z}.0.254"} for z in zones),
                *({"ip": f"10.{z}.{r}.254"} for z, r in racks),
                *({"ip": m.ip} for m in machines),
            ],
        ),
        ("Type", _types()),
        ("Machine", [{"name": m.name} for m in machines]),
    ]


def _software_steps(software: dict[str, dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(statement, rows) writing the Software and Version nodes and what depends on what."""
    groups = (("OS", OPERATING_SYSTEMS), ("Service", SERVICES), ("Application", APPLICATIONS))
    listed = {sw["name"] for _, group in groups for sw in group}
    needs = [
        (sw["name"], dep)
        for sw in (*SERVICES, *APPLICATIONS)
        for dep in map(_dependency, sw.get("dependencies", []))
    ]
    steps = [
        (
            f"UNWIND $rows AS r CREATE (n:Software:{extra}) SET n = r",
            [software[sw["name"]] for sw in group],
        )
        for extra, group in groups
    ]
    return [
        *steps,
        (
            "UNWIND $rows AS r CREATE (n:Software) SET n = r",
            [sw for name, sw in software.items() if name not in listed],
        ),
        (
            "UNWIND $rows AS r MATCH (s:Software {name: r.software}) "
            "CREATE (s)-[:VERSION]->(:Version {name: r.version})",
            [{"software": s, "version": v} for s, v in _versions()],
        ),
        # Each listed version points to the one before it, newer to older.
        (
            "UNWIND $rows AS r MATCH (s:Software {name: r.software}) "
            "MATCH (s)-[:VERSION]->(v:Version {name: r.newer}) "
            "MATCH (s)-[:VERSION]->(v0:Version {name: r.older}) CREATE (v)-[:PREVIOUS]->(v0)",
            [
                {"software": sw["name"], "older": older, "newer": newer}
                for sw in (*OPERATING_SYSTEMS, *SERVICES)
                for older, newer in zip(sw["versions"], sw["versions"][1:], strict=False)
            ],
        ),
        # A dependency with a version points to that Version node, otherwise to the Software.
        (
            "UNWIND $rows AS r MATCH (s:Software {name: r.name}) "
            "MATCH (d:Software {name: r.software}) CREATE (s)-[:DEPENDS_ON]->(d)",
            [{"name": n, "software": d.software} for n, d in needs if d.version is None],
        ),
        (
            "UNWIND $rows AS r MATCH (s:Software {name: r.name}) "
            "MATCH (:Software {name: r.software})-[:VERSION]->(v:Version {name: r.version}) "
            "CREATE (s)-[:DEPENDS_ON]->(v)",
            [
                {"name": n, "software": d.software, "version": d.version}
                for n, d in needs
                if d.version is not None
            ],
        ),
    ]


_SERVICE = "(p:Service:Process {name: r.name, pid: r.pid, startTime: r.startTime})"
_LISTENS = (
    " WITH m, p, r UNWIND r.ports AS number "
    "MATCH (m)-[:ROUTES]->(:Interface)-[:EXPOSES]->(port:Port {port: number}) "
    "CREATE (p)-[:LISTENS]->(port)"
)
"""The tail of a statement that created process `p` on machine `m`: it listens on `r.ports`."""


def _process_steps(
    machines: list[Machine], software: dict[str, dict[str, Any]]
) -> list[tuple[str, list[dict[str, Any]]]]:
    """(statement, rows) writing each machine's ports, then its processes listening on them."""
    dependencies = [dep for m in machines for dep in m.dependencies]
    return [
        (
            "UNWIND $rows AS r MATCH (i:Interface {ip: r.ip}) "
            "CREATE (i)-[:EXPOSES]->(:Port {port: r.port})",
            [{"ip": m.ip, "port": port} for m in machines for port in _ports(m, software)],
        ),
        (
            "UNWIND $rows AS r MATCH (m:Machine {name: r.machine}) "
            "MATCH (:Software {name: r.os})-[:VERSION]->(v:Version {name: r.version}) "
            "CREATE (m)-[:RUNS]->(:OS:Process {name: r.version, startTime: r.startTime})"
            "-[:INSTANCE]->(v)",
            [
                {"machine": m.name, "os": m.os[0], "version": m.os[1], "startTime": m.os_start}
                for m in machines
            ],
        ),
        (
            "UNWIND $rows AS r MATCH (m:Machine {name: r.machine}) "
            "MATCH (a:Software {name: r.app}) "
            "CREATE (m)-[:RUNS]->(p:Application:Process {name: r.app, pid: r.pid, "
            "startTime: r.startTime})-[:INSTANCE]->(a)" + _LISTENS,
            [
                {
                    "machine": m.name,
                    "app": m.app,
                    "pid": m.app_pid,
                    "startTime": m.app_start,
                    "ports": software[m.app].get("ports", []),
                }
                for m in machines
                if m.app is not None
            ],
        ),
        (
            "UNWIND $rows AS r "
            "MATCH (m:Machine {name: r.machine})-[:RUNS]->(a:Application:Process) "
            "MATCH (d:Software {name: r.software}) "
            f"CREATE (m)-[:RUNS]->{_SERVICE}-[:INSTANCE]->(d), (a)-[:DEPENDS_ON]->(p)" + _LISTENS,
            [dep for dep in dependencies if dep["version"] is None],
        ),
        (
            "UNWIND $rows AS r "
            "MATCH (m:Machine {name: r.machine})-[:RUNS]->(a:Application:Process) "
            "MATCH (:Software {name: r.software})-[:VERSION]->(d:Version {name: r.version}) "
            f"CREATE (m)-[:RUNS]->{_SERVICE}-[:INSTANCE]->(d), (a)-[:DEPENDS_ON]->(p)" + _LISTENS,
            [dep for dep in dependencies if dep["version"] is not None],
        ),
    ]


def load(db: GraphDB, progress: Progress | None = None) -> tuple[int, int]:
    """Write the network graph into `db`; return (nodes, relationships) written."""
    software = _software()
    machines = _machines(random.Random(SEED), software)
    nodes = _hardware_nodes(machines)
    rels = _hardware_rels(machines)
    steps = [*_software_steps(software), *_process_steps(machines, software)]
    total = sum(
        [len(rows) for _, rows in nodes]
        + [len(r) for *_, r in rels]
        + [len(rows) for _, rows in steps]
    )
    # GraphWriter reports its own rows; the statements it has no form for add theirs.
    written = {"writer": 0, "other": 0}

    def show(part: str, done: int) -> None:
        written[part] = done
        if progress is not None:
            progress(min(total, sum(written.values())), total)

    def advance(n: int) -> None:
        show("other", written["other"] + n)

    before = db.counts()
    writer = GraphWriter(db, total, lambda done, _total: show("writer", done))
    for label, key in KEYS.items():
        writer.index(label, key)
    for labels, rows in nodes:
        if ":" in labels:
            _create(db, f"UNWIND $rows AS r CREATE (n:{labels}) SET n = r", rows, advance)
        else:
            writer.nodes_of(labels, rows)
    for rel_type, start, end, pairs in rels:
        writer.rels_of(rel_type, (start, KEYS[start]), (end, KEYS[end]), pairs)
    for cypher, rows in steps:
        _create(db, cypher, rows, advance)
    for label, prop in FULLTEXT:
        writer.fulltext(label, prop)
    writer.finish()
    after = db.counts()
    return after[0] - before[0], after[1] - before[1]
