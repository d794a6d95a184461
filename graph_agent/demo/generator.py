"""The deterministic rows of the demo "engineering organisation" graph (no database code here)."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

FIRST_NAMES = [
    "Alice",
    "Bob",
    "Carol",
    "Dan",
    "Erin",
    "Farah",
    "Gustavo",
    "Hana",
    "Ivan",
    "Julia",
    "Kenji",
    "Leila",
    "Marco",
    "Nadia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sanjay",
    "Tara",
    "Umar",
    "Vera",
    "Wei",
    "Ximena",
    "Yusuf",
    "Zoe",
]
LAST_NAMES = [
    "Nguyen",
    "Smith",
    "Garcia",
    "Okafor",
    "Kowalski",
    "Tanaka",
    "Silva",
    "Müller",
    "Haddad",
    "Johansson",
    "Patel",
    "Rossi",
    "Kim",
    "Dubois",
    "Novak",
    "Mensah",
]
TITLES = (
    ("Software Engineer", 5),
    ("Senior Software Engineer", 4),
    ("Staff Engineer", 1),
    ("Site Reliability Engineer", 2),
    ("Data Engineer", 1),
    ("Product Manager", 1),
)
LOCATIONS = ("Berlin", "London", "Lisbon", "New York", "Singapore", "Toronto", "Remote")
DEPARTMENTS = ("Platform", "Product", "Data", "Infrastructure", "Security")
TEAM_NAMES = [
    "Payments",
    "Checkout",
    "Search",
    "Identity",
    "Notifications",
    "Billing",
    "Growth",
    "Mobile",
    "Observability",
    "Storage",
    "Networking",
    "Ledger",
    "Catalog",
    "Recommendations",
    "Messaging",
    "Fraud",
    "Onboarding",
    "Analytics",
    "Compliance",
    "Developer-Experience",
]
SERVICE_SUFFIXES = ("api", "worker", "gateway", "service", "scheduler", "indexer", "web")
LIFECYCLES = ("production", "production", "production", "beta", "deprecated")
PROJECT_NAMES = [
    "Atlas",
    "Borealis",
    "Cobalt",
    "Dynamo",
    "Ember",
    "Falcon",
    "Granite",
    "Helios",
    "Indigo",
    "Juniper",
    "Keystone",
    "Lighthouse",
    "Meridian",
    "Nimbus",
    "Orion",
    "Pegasus",
]
SEVERITIES = (("SEV1", 1), ("SEV2", 3), ("SEV3", 6), ("SEV4", 4))
INCIDENT_SYMPTOMS = (
    "Elevated error rate on {s}",
    "High latency in {s}",
    "{s} unavailable",
    "Memory leak in {s}",
    "Failed deploy of {s}",
    "Data inconsistency in {s}",
    "Certificate expiry on {s}",
)
# (name, category, aliases): synonym-prone on purpose, for value mapping.
TECHNOLOGIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("PostgreSQL", "Database", ("Postgres", "pg", "psql")),
    ("MySQL", "Database", ()),
    ("MongoDB", "Database", ("Mongo",)),
    ("Redis", "Database", ()),
    ("Apache Cassandra", "Database", ("Cassandra",)),
    ("Elasticsearch", "Database", ("ES", "Elastic")),
    ("Snowflake", "Database", ()),
    ("Kubernetes", "Orchestration", ("k8s", "kube")),
    ("Docker", "Orchestration", ()),
    ("Apache Kafka", "Messaging", ("Kafka",)),
    ("RabbitMQ", "Messaging", ("Rabbit",)),
    ("Go", "Language", ("Golang",)),
    ("Python", "Language", ("py",)),
    ("Java", "Language", ()),
    ("Kotlin", "Language", ()),
    ("TypeScript", "Language", ("TS",)),
    ("Rust", "Language", ()),
    ("Node.js", "Runtime", ("Node", "NodeJS")),
    ("React", "Framework", ("React.js", "ReactJS")),
    ("gRPC", "Framework", ()),
    ("GraphQL", "Framework", ()),
    ("Amazon Web Services", "Cloud", ("AWS",)),
    ("Google Cloud Platform", "Cloud", ("GCP", "Google Cloud")),
    ("Terraform", "Infrastructure as Code", ("TF",)),
    ("Prometheus", "Observability", ()),
    ("Grafana", "Observability", ()),
    ("Datadog", "Observability", ("DD",)),
    ("HashiCorp Vault", "Security", ("Vault",)),
    ("Apache Airflow", "Data", ("Airflow",)),
    ("Apache Spark", "Data", ("Spark",)),
    ("Nginx", "Networking", ()),
    ("Envoy", "Networking", ()),
)
LANGUAGES = ("Go", "Python", "Java", "Kotlin", "TypeScript", "Rust", "Node.js")
DATASTORES = ("PostgreSQL", "MySQL", "MongoDB", "Redis", "Apache Cassandra", "Elasticsearch")
PLATFORM = (
    "Kubernetes",
    "Docker",
    "Apache Kafka",
    "RabbitMQ",
    "Prometheus",
    "Datadog",
    "HashiCorp Vault",
)

LABELS = (
    "Technology",
    "Team",
    "Person",
    "Service",
    "Repository",
    "Project",
    "OnCallRotation",
    "Incident",
)
EPOCH = dt.date(2018, 1, 1)


@dataclass(frozen=True)
class DemoSizes:
    """How many nodes of each label a scale gives."""

    teams: int
    people: int
    services: int
    repositories: int
    projects: int
    incidents: int

    @classmethod
    def for_scale(cls, scale: int) -> DemoSizes:
        # Technologies are a fixed set; one rotation per team. The rest splits the scale.
        rest = max(60, scale - len(TECHNOLOGIES))
        teams = max(4, round(rest * 0.04))
        return cls(
            teams=teams,
            people=max(12, round(rest * 0.45)),
            services=max(6, round(rest * 0.14)),
            repositories=max(6, round(rest * 0.14)),
            projects=max(3, round(rest * 0.03)),
            incidents=max(6, rest - teams * 2 - round(rest * 0.76)),
        )

    @property
    def total(self) -> int:
        return (
            len(TECHNOLOGIES)
            + self.teams * 2
            + self.people
            + self.services
            + self.repositories
            + self.projects
            + self.incidents
        )


def _day(rng: random.Random, start: dt.date, span_days: int) -> str:
    return (start + dt.timedelta(days=rng.randrange(span_days))).isoformat()


def _numbered(base: str, index: int, pool: int) -> str:
    """`base`, with a number once the fixed name pool has been used up."""
    return base if index < pool else f"{base} {index // pool + 1}"


class DemoGenerator:
    """Yields node and relationship rows label by label; the same seed gives the same rows.

    Rows are produced lazily so a million-node graph never sits in memory at once; the
    consumption order is fixed by `load_demo`, which keeps the random stream deterministic.
    """

    def __init__(self, scale: int, seed: int) -> None:
        self.sizes = DemoSizes.for_scale(scale)
        self.rng = random.Random(seed)
        self._team_of_person: list[int] = []
        self._team_of_service: list[int] = []
        self._service_names: list[str] = []

    # ids are derived from indexes, so relationships need no lookup tables
    @staticmethod
    def key(label: str, index: int) -> str:
        return f"{label.lower()}-{index + 1}"

    def technologies(self) -> Iterator[dict[str, Any]]:
        for i, (name, category, aliases) in enumerate(TECHNOLOGIES):
            row: dict[str, Any] = {
                "id": self.key("Technology", i),
                "name": name,
                "category": category,
            }
            row["aliases"] = list(aliases) if aliases else None
            yield row

    def teams(self) -> Iterator[dict[str, Any]]:
        for i in range(self.sizes.teams):
            name = _numbered(TEAM_NAMES[i % len(TEAM_NAMES)], i, len(TEAM_NAMES))
            yield {
                "id": self.key("Team", i),
                "name": name,
                "department": DEPARTMENTS[self.rng.randrange(len(DEPARTMENTS))],
                "slack_channel": "#team-" + name.lower().replace(" ", "-"),
                "founded": _day(self.rng, EPOCH, 5 * 365),
            }

    def people(self) -> Iterator[dict[str, Any]]:
        rng, teams = self.rng, self.sizes.teams
        pool = len(FIRST_NAMES) * len(LAST_NAMES)
        titles = [t for t, _ in TITLES]
        weights = [w for _, w in TITLES]
        for i in range(self.sizes.people):
            first = FIRST_NAMES[i % len(FIRST_NAMES)]
            last = LAST_NAMES[(i // len(FIRST_NAMES)) % len(LAST_NAMES)]
            name = _numbered(f"{first} {last}", i, pool)
            team = i % teams
            self._team_of_person.append(team)
            # The first person of each team is its manager; the very first is the VP.
            if i == 0:
                title = "VP of Engineering"
            elif i < teams:
                title = "Engineering Manager"
            else:
                title = rng.choices(titles, weights)[0]
            yield {
                "id": self.key("Person", i),
                "name": name,
                "email": name.lower().replace(" ", ".").replace("ü", "ue") + "@example.com",
                "title": title,
                "level": 7 if i == 0 else 6 if i < teams else rng.randint(2, 5),
                "location": None
                if rng.random() < 0.1
                else LOCATIONS[rng.randrange(len(LOCATIONS))],
                "start_date": _day(rng, EPOCH, 7 * 365),
            }

    def services(self) -> Iterator[dict[str, Any]]:
        rng, teams = self.rng, self.sizes.teams
        for i in range(self.sizes.services):
            team = i % teams
            self._team_of_service.append(team)
            # Named after the owning team ("payments-api"), as services usually are.
            base = _numbered(TEAM_NAMES[team % len(TEAM_NAMES)], team, len(TEAM_NAMES))
            round_, suffix = divmod(i // teams, len(SERVICE_SUFFIXES))
            name = f"{base.lower().replace(' ', '-')}-{SERVICE_SUFFIXES[suffix]}"
            if round_:
                name = f"{name}-{round_ + 1}"
            self._service_names.append(name)
            yield {
                "id": self.key("Service", i),
                "name": name,
                # Services without a tier are realistic and make "IS NULL" questions real.
                "tier": None if rng.random() < 0.25 else rng.randint(1, 3),
                "lifecycle": LIFECYCLES[rng.randrange(len(LIFECYCLES))],
                "created": _day(rng, EPOCH, 6 * 365),
            }

    def repositories(self) -> Iterator[dict[str, Any]]:
        rng = self.rng
        for i in range(self.sizes.repositories):
            service = self._service_names[i % len(self._service_names)]
            name = (
                service
                if i < len(self._service_names)
                else f"{service}-{'lib' if i % 2 else 'infra'}"
            )
            if i >= 2 * len(self._service_names):
                name = f"{name}-{i // len(self._service_names)}"
            yield {
                "id": self.key("Repository", i),
                "name": name,
                "url": f"https://git.example.com/acme/{name}",
                "visibility": rng.choice(("private", "private", "internal", "public")),
                "stars": int(rng.expovariate(1 / 40)),
                "archived": rng.random() < 0.08,
            }

    def projects(self) -> Iterator[dict[str, Any]]:
        rng = self.rng
        for i in range(self.sizes.projects):
            start = dt.date(2023, 1, 1) + dt.timedelta(days=rng.randrange(700))
            yield {
                "id": self.key("Project", i),
                "name": "Project "
                + _numbered(PROJECT_NAMES[i % len(PROJECT_NAMES)], i, len(PROJECT_NAMES)),
                "status": rng.choice(("planned", "active", "active", "done")),
                "priority": rng.choice(("P0", "P1", "P1", "P2", "P3")),
                "start_date": start.isoformat(),
                "due_date": None
                if rng.random() < 0.2
                else (start + dt.timedelta(days=rng.randrange(60, 400))).isoformat(),
            }

    def rotations(self) -> Iterator[dict[str, Any]]:
        rng = self.rng
        for i in range(self.sizes.teams):
            team = _numbered(TEAM_NAMES[i % len(TEAM_NAMES)], i, len(TEAM_NAMES))
            yield {
                "id": self.key("OnCallRotation", i),
                "name": f"{team} primary",
                "schedule": rng.choice(("weekly", "weekly", "daily", "follow-the-sun")),
                "timezone": rng.choice(
                    ("UTC", "Europe/Berlin", "America/New_York", "Asia/Singapore")
                ),
            }

    def incidents(self) -> Iterator[dict[str, Any]]:
        rng = self.rng
        severities = [s for s, _ in SEVERITIES]
        weights = [w for _, w in SEVERITIES]
        start = dt.datetime(2023, 1, 1)
        for i in range(self.sizes.incidents):
            service = self._service_names[rng.randrange(len(self._service_names))]
            began = start + dt.timedelta(minutes=rng.randrange(3 * 365 * 24 * 60))
            status = rng.choice(("resolved",) * 8 + ("mitigated", "open"))
            minutes = int(rng.expovariate(1 / 90)) + 5
            yield {
                "id": self.key("Incident", i),
                "key": f"INC-{1000 + i}",
                "title": rng.choice(INCIDENT_SYMPTOMS).format(s=service),
                "severity": rng.choices(severities, weights)[0],
                "status": status,
                "started_at": began.isoformat(timespec="minutes"),
                "resolved_at": None
                if status != "resolved"
                else (began + dt.timedelta(minutes=minutes)).isoformat(timespec="minutes"),
                "duration_minutes": minutes if status == "resolved" else None,
                "_service": service,
            }

    # --- relationships: (type, start label, end label, rows with s/t keys and props) ---------

    def member_of(self) -> Iterator[dict[str, Any]]:
        for i, team in enumerate(self._team_of_person):
            yield {
                "s": self.key("Person", i),
                "t": self.key("Team", team),
                "since": _day(self.rng, EPOCH, 7 * 365),
            }

    def reports_to(self) -> Iterator[dict[str, Any]]:
        teams = self.sizes.teams
        for i, team in enumerate(self._team_of_person):
            if i == 0:
                continue
            manager = 0 if i < teams else team
            yield {"s": self.key("Person", i), "t": self.key("Person", manager)}

    def owns_service(self) -> Iterator[dict[str, Any]]:
        for i, team in enumerate(self._team_of_service):
            yield {"s": self.key("Team", team), "t": self.key("Service", i)}

    def owns_repository(self) -> Iterator[dict[str, Any]]:
        for i in range(self.sizes.repositories):
            team = self._team_of_service[i % len(self._team_of_service)]
            yield {"s": self.key("Team", team), "t": self.key("Repository", i)}

    def owns_rotation(self) -> Iterator[dict[str, Any]]:
        for i in range(self.sizes.teams):
            yield {"s": self.key("Team", i), "t": self.key("OnCallRotation", i)}

    def depends_on(self) -> Iterator[dict[str, Any]]:
        rng = self.rng
        for i in range(1, self.sizes.services):
            # Only on earlier services: the dependency graph stays acyclic, like a real one.
            for target in sorted({rng.randrange(i) for _ in range(rng.randint(0, 3))}):
                yield {
                    "s": self.key("Service", i),
                    "t": self.key("Service", target),
                    "critical": rng.random() < 0.4,
                }

    def uses(self) -> Iterator[tuple[str, dict[str, Any]]]:
        rng = self.rng
        index = {name: i for i, (name, _, _) in enumerate(TECHNOLOGIES)}
        for i in range(self.sizes.services):
            picks = {rng.choice(LANGUAGES), rng.choice(DATASTORES)}
            picks.update(rng.sample(PLATFORM, rng.randint(1, 3)))
            for tech in sorted(picks):
                yield (
                    "Service",
                    {"s": self.key("Service", i), "t": self.key("Technology", index[tech])},
                )
        for i in range(self.sizes.repositories):
            yield (
                "Repository",
                {
                    "s": self.key("Repository", i),
                    "t": self.key("Technology", index[rng.choice(LANGUAGES)]),
                },
            )

    def on_call(self) -> Iterator[dict[str, Any]]:
        for i, team in enumerate(self._team_of_person):
            if i >= self.sizes.teams and self.rng.random() < 0.5:
                yield {
                    "s": self.key("Person", i),
                    "t": self.key("OnCallRotation", team),
                    "order": self.rng.randint(1, 6),
                }

    def covers(self) -> Iterator[dict[str, Any]]:
        for i, team in enumerate(self._team_of_service):
            yield {"s": self.key("OnCallRotation", team), "t": self.key("Service", i)}

    def works_on(self) -> Iterator[dict[str, Any]]:
        rng = self.rng
        for i in range(self.sizes.people):
            if rng.random() < 0.35:
                yield {
                    "s": self.key("Person", i),
                    "t": self.key("Project", rng.randrange(self.sizes.projects)),
                    "allocation": rng.choice((20, 50, 50, 100)),
                }

    def incident_links(
        self, incidents: list[tuple[int, str]]
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """AFFECTED and RESPONDED_TO rows for (incident index, affected service name) pairs."""
        rng = self.rng
        service_index = {name: i for i, name in enumerate(self._service_names)}
        people_by_team: dict[int, list[int]] = {}
        # Responders come from the owning team; the list is built once, lazily.
        for person, team in enumerate(self._team_of_person):
            people_by_team.setdefault(team, []).append(person)
        for i, service in incidents:
            s_index = service_index[service]
            yield "AFFECTED", {"s": self.key("Incident", i), "t": self.key("Service", s_index)}
            if rng.random() < 0.2 and s_index > 0:
                yield (
                    "AFFECTED",
                    {
                        "s": self.key("Incident", i),
                        "t": self.key("Service", rng.randrange(s_index)),
                    },
                )
            crew = people_by_team[self._team_of_service[s_index]]
            for n, person in enumerate(rng.sample(crew, min(len(crew), rng.randint(1, 3)))):
                yield (
                    "RESPONDED_TO",
                    {
                        "s": self.key("Person", person),
                        "t": self.key("Incident", i),
                        "role": "commander" if n == 0 else "responder",
                    },
                )
