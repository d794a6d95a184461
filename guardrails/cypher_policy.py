"""The read-only Cypher policy: a token-level check that refuses writes, admin commands and more.

How it reads a statement (and why):

* Tokens, not substrings: keywords inside strings, comments, `backticks` and `$parameters`
  never count, so `MATCH (n {name: 'Create Corp'})` and ``MATCH (n:`Delete`)`` pass.
* A bare word that spells a write keyword (CREATE, MERGE, DELETE, DETACH, SET, REMOVE, DROP,
  FOREACH, INSERT, LOAD) is refused wherever it is not unmistakably a name: after `.` or
  `:` (property, label, type), after AS, before `.` (a variable's property), as a map key or
  a lone pattern variable `(set)`. No write keyword has a read-only use in Cypher, so a
  variable literally named `set` used bare elsewhere is refused too; the model can rename it.
* Unicode: each word is folded before comparing (NFKC, then Cyrillic/Greek/small-capital
  look-alikes mapped to Latin, invisible characters dropped), so "СREATE" with a Cyrillic
  С, fullwidth "ＣＲＥＡＴＥ" and "CRE\u200bATE" are all read as CREATE.
* Comments: the engine treats `CRE/**/ATE` as two words (a syntax error, never a write),
  but the statement is also checked with its comments removed and the pieces glued, and
  refused if that spells a write. Being wrong in the conservative direction costs nothing:
  no honest query splits a word with a comment.
* Statements must start with a reading clause (MATCH, OPTIONAL MATCH, WITH, UNWIND, RETURN,
  CALL), after optional EXPLAIN / PROFILE / CYPHER options. Admin commands (ALTER, GRANT,
  DENY, REVOKE, START, STOP, RENAME, TERMINATE, …) and SHOW (unless `allow_show`) are refused.
  USE is refused: switching databases would sidestep the configured database and channel
  restrictions.
* Procedures: CALL of anything not on the allow-list is refused, and a never-list
  (dbms.*, apoc writes/periodic/load/cypher.run*, gds.*.write, db.create.*, …) wins even
  over a widened allow-list; namespaced functions on the never-list are refused too.
* Unterminated strings/comments/backticks are refused (category "syntax"): the engine would
  reject them, and a checker that has lost track of quoting should not guess.
* Channels with restrictions (hidden labels, types, properties): no hidden name anywhere,
  nothing whose values the row redaction could not check (whole entities, computed keys),
  and every node bound by an allowed label in its own pattern, scope by scope
  (`cypher_bindings`): `MATCH (i) WHERE i:Person OR true` is refused, whatever the WHERE says.
* Cost: lists from `range()` and `reduce()` are bounded from the text (`cypher_cost`).

The engine's read-only transaction and a read-only database user are the other two layers.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from guardrails.cypher_bindings import binding_problem
from guardrails.cypher_cost import cost_problem
from guardrails.cypher_tokens import KEYWORDS, Token, nesting, referenced_names, tokenize

logger = logging.getLogger(__name__)

DEFAULT_ALLOWED_PROCEDURES: frozenset[str] = frozenset(
    {
        "db.labels",
        "db.relationshipTypes",
        "db.propertyKeys",
        "db.schema.*",
        "db.indexes",
        "db.constraints",
        "db.index.fulltext.queryNodes",
        "db.index.fulltext.queryRelationships",
        "db.idx.fulltext.queryNodes",
        "db.idx.fulltext.queryRelationships",
        "db.meta.stats",
    }
)
"""Read-only schema and full-text query procedures (Neo4j and FalkorDB). `*` is a wildcard."""

NEVER_PROCEDURES: tuple[str, ...] = (
    "dbms.*",
    "db.create.*",
    "db.index.fulltext.create*",
    "db.index.fulltext.drop*",
    "db.index.vector.create*",
    "db.idx.fulltext.create*",
    "db.idx.fulltext.drop*",
    "db.clearquerycaches",
    "apoc.create.*",
    "apoc.merge.*",
    "apoc.refactor.*",
    "apoc.periodic.*",
    "apoc.load.*",
    "apoc.import.*",
    "apoc.export.*",
    "apoc.cypher.*",
    "apoc.do.*",
    "apoc.trigger.*",
    "apoc.schema.assert",
    "apoc.nodes.delete",
    "apoc.atomic.*",
    "apoc.lock.*",
    "apoc.systemdb.*",
    "apoc.custom.*",
    "apoc.uuid.*",
    "apoc.ttl.*",
    "apoc.util.sleep",
    "apoc.graph.fromcypher",
    "gds.*.write*",
    "gds.*.mutate*",
    "gds.graph.drop*",
    "gds.graph.project*",
)
"""Refused even when an allow-list pattern matches (compared case-insensitively)."""

# Introspection that would reveal hidden labels/properties of a restricted channel.
_SCHEMA_PROCEDURES = (
    "db.labels",
    "db.relationshiptypes",
    "db.propertykeys",
    "db.schema.*",
    "db.indexes",
    "db.constraints",
    "db.meta.stats",
)

_WRITE_WORDS = frozenset(
    {"CREATE", "MERGE", "DELETE", "DETACH", "SET", "REMOVE", "DROP", "FOREACH", "INSERT", "LOAD"}
)
# Admin commands that only make sense at the start of a statement (START/STOP are also
# common variable names in path queries, so they are only refused there).
_ADMIN_START_WORDS = frozenset(
    {
        "ALTER",
        "GRANT",
        "DENY",
        "REVOKE",
        "START",
        "STOP",
        "RENAME",
        "TERMINATE",
        "ENABLE",
        "DEALLOCATE",
        "REALLOCATE",
        "DRYRUN",
        "COPY",
    }
)
# Admin words refused wherever they stand as a clause (SHOW … TERMINATE TRANSACTIONS).
_ADMIN_ANYWHERE_WORDS = frozenset(
    {"ALTER", "GRANT", "DENY", "REVOKE", "RENAME", "TERMINATE", "DEALLOCATE", "REALLOCATE"}
)
_SCHEMA_OBJECT_WORDS = frozenset(
    {
        "INDEX",
        "CONSTRAINT",
        "DATABASE",
        "COMPOSITE",
        "ALIAS",
        "USER",
        "ROLE",
        "SERVER",
        "RANGE",
        "TEXT",
        "POINT",
        "LOOKUP",
        "FULLTEXT",
        "VECTOR",
        "BTREE",
        "OR",
    }
)
_READ_START_WORDS = frozenset({"MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN", "CALL"})
_PREFIX_WORDS = frozenset({"EXPLAIN", "PROFILE"})
_CLAUSE_WORDS = (
    _READ_START_WORDS
    | _WRITE_WORDS
    | _ADMIN_START_WORDS
    | {"SHOW", "USE", "USING", "EXPLAIN", "PROFILE"}
)
_LABEL_EXPR_PUNCT = ("|", "&", "!", "%")

# Look-alikes NFKC leaves alone: Cyrillic, Greek and small capitals that read as Latin.
_CONFUSABLES = str.maketrans(
    {
        **dict(zip("АВСЕНІЈКМОРЅТХУ", "ABCEHIJKMOPSTXY", strict=True)),
        **dict(zip("аеіјорѕсхуԁһԛԝ", "aeijopscxydhqw", strict=True)),
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX", strict=True)),
        **dict(zip("οιν", "oiv", strict=True)),
        **dict(zip("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ", "ABCDEFGHIJKLMNOPRSTUVWYZ", strict=True)),
        "ı": "i",
        "ȷ": "j",
        "Ɩ": "l",
    }
)
# Characters that render as nothing but are letters or symbols, not format characters.
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f")


def fold_name(word: str) -> str:
    """How a word reads to a person, case kept: NFKC, look-alikes to Latin, invisibles dropped."""
    text = unicodedata.normalize("NFKC", word).translate(_CONFUSABLES)
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf" and ch not in _INVISIBLE)


def fold_word(word: str) -> str:
    """`fold_name`, upper-cased: what the keyword checks compare."""
    return fold_name(word).upper()


def _gap(text: str) -> str:
    if any(ch in "\n\r\x0b\x0c\x85\u2028\u2029" for ch in text):
        return "\n"
    return " " if text else ""


def canonical_cypher(cypher: str) -> str:
    """The statement as the policy judges it and the engine runs it.

    Comments become a space (as the engine reads them: `CRE/**/ATE` is two words), every run
    of whitespace becomes one space or one line break (no exotic spaces or line separators),
    a trailing `;` goes, and a bare word that spells a keyword through look-alikes or
    invisible characters is written as that keyword. Other names keep their spelling: a
    label in Cyrillic or Greek is a real name, not a disguise.
    """
    return _canonical(cypher, tokenize(cypher, include_comments=True))


def _canonical(cypher: str, with_comments: list[Token]) -> str:
    if any(t.kind == "error" for t in with_comments):
        return cypher.strip()
    end = len(with_comments)
    while end and with_comments[end - 1].is_punct(";"):
        end -= 1
    tokens = with_comments[:end]
    pieces: list[str] = []
    pending = ""
    last = 0
    for tok in tokens:
        gap = _gap(cypher[last : tok.position])
        pending = "\n" if "\n" in (pending, gap) else pending or gap
        last = tok.end
        if tok.kind == "comment":
            pending = pending or " "
            continue
        if pieces:
            pieces.append(pending)
        pending = ""
        text = tok.text
        if tok.is_word and not text.isascii() and fold_word(text) in KEYWORDS:
            text = fold_name(text)
        pieces.append(text)
    return "".join(pieces)


@dataclass(frozen=True)
class CypherPolicy:
    """What a statement may do; the defaults are the strict read-only policy."""

    allowed_procedures: frozenset[str] = DEFAULT_ALLOWED_PROCEDURES
    """Procedure names (fnmatch `*` wildcards) CALL may use; the never-list still wins."""
    allow_show: bool = False
    """Allow SHOW … commands (they reveal users, transactions and settings: off by default)."""
    hidden_labels: frozenset[str] = frozenset()
    """Labels a channel may not see; any reference is refused."""
    hidden_rel_types: frozenset[str] = frozenset()
    """Relationship types a channel may not see."""
    hidden_properties: frozenset[str] = frozenset()
    """Property keys a channel may not see, as `key` or `Label.key` (refused on any label)."""

    def __post_init__(self) -> None:
        # Callers often pass lists from settings; keep the dataclass hashable and immutable.
        for name in (
            "allowed_procedures",
            "hidden_labels",
            "hidden_rel_types",
            "hidden_properties",
        ):
            value: Iterable[str] = getattr(self, name)
            if not isinstance(value, frozenset):
                object.__setattr__(self, name, frozenset(value))

    @property
    def has_hidden_names(self) -> bool:
        """True when the channel has restrictions."""
        return bool(self.hidden_labels or self.hidden_rel_types or self.hidden_properties)


DEFAULT_POLICY = CypherPolicy()


@dataclass(frozen=True)
class PolicyResult:
    """The verdict on one statement: allowed, or refused with a specific reason and category."""

    allowed: bool
    reason: str | None = None
    """For a refusal, a sentence the correction prompt and the user can read."""
    category: str | None = None
    """empty, syntax, multi_statement, write_clause, admin, database_switch, unknown_clause,
    procedure, load_csv, periodic, hidden_label, restricted (a form a channel with
    restrictions cannot check)."""
    details: dict[str, str] = field(default_factory=dict)
    """Extra facts for logs and tests, e.g. {"keyword": "MERGE"} or {"procedure": "apoc…"}."""
    canonical: str | None = field(default=None, compare=False)
    """For an allowed statement, `canonical_cypher` of it: the exact text that was judged and
    that EXPLAIN and the engine must be given (category "cost" marks a huge literal read)."""


_ALLOWED = PolicyResult(allowed=True)


class _Refusal(Exception):
    """Internal: carries a refusal out of the nested checks."""

    def __init__(self, category: str, reason: str, **details: str) -> None:
        super().__init__(reason)
        self.result = PolicyResult(False, reason, category, dict(details))


def _is_name_position(tokens: list[Token], i: int) -> bool:
    """True when the bare word at i can only be a name (label, property, variable, map key)."""
    prev = tokens[i - 1] if i > 0 else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    after = tokens[i + 2] if i + 2 < len(tokens) else None
    if prev is not None:
        if prev.is_punct(".", ":", "::") or prev.is_keyword("AS"):
            return True
        if prev.is_punct(*_LABEL_EXPR_PUNCT) and _in_label_expression(tokens, i - 1):
            return True
    if nxt is not None and nxt.is_punct(".") and after is not None and after.is_name:
        return True
    if prev is not None and prev.is_punct("(", "[", "{", ",") and nxt is not None:
        if nxt.is_punct(":"):
            return True
        if prev.is_punct("(", "[") and nxt.is_punct(")", "]", "{", ","):
            return True
    return False


def _in_label_expression(tokens: list[Token], j: int) -> bool:
    """Walk back from the label-expression operator at j to the ":" that opened it."""
    last_was_name = False
    while j >= 0:
        tok = tokens[j]
        if tok.is_punct(":"):
            return True
        if tok.is_punct(*_LABEL_EXPR_PUNCT, "(", ")"):
            last_was_name = False
        elif tok.is_name and not last_was_name:
            last_was_name = True
        else:
            return False
        j -= 1
    return False


def _procedure_name(tokens: list[Token], start: int) -> tuple[str, int]:
    """The dotted name starting at start (db.schema.visualization): (name, index after it)."""
    parts = [tokens[start].name]
    j = start + 1
    while j + 1 < len(tokens) and tokens[j].is_punct(".") and tokens[j + 1].is_name:
        parts.append(tokens[j + 1].name)
        j += 2
    return ".".join(parts), j


def _matches(name: str, patterns: Iterable[str]) -> bool:
    folded = name.lower()
    return any(fnmatchcase(folded, pattern.lower()) for pattern in patterns)


def _split_statements(tokens: list[Token]) -> list[list[Token]]:
    statements: list[list[Token]] = [[]]
    for tok in tokens:
        if tok.is_punct(";"):
            statements.append([])
        else:
            statements[-1].append(tok)
    # A trailing zero-width space or BOM after the last ";" is not another statement.
    return [s for s in statements if any(not t.is_word or fold_word(t.text) for t in s)]


def _first_clause_index(tokens: list[Token]) -> int:
    """Skip EXPLAIN / PROFILE / CYPHER [version] [option=value …] prefixes."""
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        word = fold_word(tok.text) if tok.is_word else ""
        if word in _PREFIX_WORDS:
            i += 1
        elif word == "CYPHER":
            # Options (runtime=slotted, FalkorDB's name=value parameters) run until a clause.
            i += 1
            while i < len(tokens):
                t = tokens[i]
                if t.is_word and fold_word(t.text) in _CLAUSE_WORDS and not _is_option(tokens, i):
                    break
                i += 1
        else:
            break
    return i


def _is_option(tokens: list[Token], i: int) -> bool:
    prev = tokens[i - 1] if i > 0 else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    return bool(
        (nxt is not None and nxt.is_punct("=")) or (prev is not None and prev.is_punct("="))
    )


def _check_start(tokens: list[Token], policy: CypherPolicy) -> None:
    i = _first_clause_index(tokens)
    if i >= len(tokens):
        raise _Refusal("empty", "the statement has no clause after its prefix")
    tok = tokens[i]
    word = fold_word(tok.text) if tok.is_word else ""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    next_word = fold_word(nxt.text) if nxt is not None and nxt.is_word else ""
    if word in ("CREATE", "DROP") and next_word in _SCHEMA_OBJECT_WORDS:
        raise _Refusal(
            "admin",
            f"the statement is {word} {next_word}, a schema/admin command that changes the database",
            keyword=f"{word} {next_word}",
        )
    if word in _ADMIN_START_WORDS:
        raise _Refusal("admin", f"the statement starts with {word}, an admin command", keyword=word)
    if word == "SHOW" and not policy.allow_show:
        raise _Refusal(
            "admin", "the statement is a SHOW command, which is not allowed here", keyword=word
        )
    if word == "USING" and next_word == "PERIODIC":
        raise _Refusal("periodic", "the statement uses PERIODIC COMMIT, which runs batched writes")
    if word == "SHOW" or word in _WRITE_WORDS or word == "USE":
        return  # SHOW allowed; writes and USE get their specific reason from the scan
    if word not in _READ_START_WORDS:
        shown = tok.text if len(tok.text) <= 30 else tok.text[:30] + "…"
        raise _Refusal(
            "unknown_clause",
            f"the statement starts with {shown!r}, not a reading clause (MATCH, WITH, UNWIND, "
            "RETURN, CALL)",
            keyword=shown,
        )


def _check_words(tokens: list[Token], policy: CypherPolicy) -> None:
    for i, tok in enumerate(tokens):
        if tok.is_word:
            _check_word(tokens, i, fold_word(tok.text), policy)
        if tok.is_keyword("CALL") or (tok.is_word and fold_word(tok.text) == "CALL"):
            _check_call(tokens, i, policy)
        elif tok.is_name and i + 1 < len(tokens) and tokens[i + 1].is_punct("."):
            prev = tokens[i - 1] if i else None
            if prev is None or not (prev.is_punct(".") or prev.is_keyword("CALL")):
                name, after = _procedure_name(tokens, i)
                is_call = after < len(tokens) and tokens[after].is_punct("(")
                if is_call and "." in name and _matches(name, NEVER_PROCEDURES):
                    raise _Refusal(
                        "procedure",
                        f"the statement calls the function {name}, which is not allowed",
                        procedure=name,
                    )


def _check_word(tokens: list[Token], i: int, word: str, policy: CypherPolicy) -> None:
    if (
        word not in _WRITE_WORDS
        and word not in _ADMIN_ANYWHERE_WORDS
        and word
        not in (
            "TRANSACTIONS",
            "SHOW",
            "PERIODIC",
            "USE",
        )
    ):
        return
    if _is_name_position(tokens, i):
        return
    prev_word = fold_word(tokens[i - 1].text) if i and tokens[i - 1].is_word else ""
    if word == "LOAD":
        raise _Refusal("load_csv", "the statement contains LOAD CSV, which reads files or URLs")
    if word == "PERIODIC":
        raise _Refusal("periodic", "the statement uses PERIODIC COMMIT, which runs batched writes")
    if word == "TRANSACTIONS":
        if prev_word in ("IN", "CONCURRENT"):
            raise _Refusal(
                "periodic",
                "the statement uses CALL { … } IN TRANSACTIONS, which runs batched writes",
            )
        return
    if word == "USE":
        raise _Refusal(
            "database_switch", "the statement contains USE, which switches to another database"
        )
    if word == "SHOW":
        if policy.allow_show:
            return
        raise _Refusal("admin", "the statement contains SHOW, which is not allowed here")
    if word in _ADMIN_ANYWHERE_WORDS:
        raise _Refusal("admin", f"the statement contains {word}, an admin command", keyword=word)
    if word == "DELETE" and prev_word == "DETACH":
        return  # already reported as DETACH DELETE
    shown = "DETACH DELETE" if word == "DETACH" else word
    raise _Refusal(
        "write_clause",
        f"the statement contains {shown}, which writes to the graph",
        keyword=shown,
    )


def _check_call(tokens: list[Token], i: int, policy: CypherPolicy) -> None:
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if nxt is None or not nxt.is_name or _is_name_position(tokens, i):
        return  # CALL { … } / CALL (x) { … } subqueries are checked token by token
    name, _ = _procedure_name(tokens, i + 1)
    if _matches(name, NEVER_PROCEDURES) or not _matches(name, policy.allowed_procedures):
        raise _Refusal(
            "procedure",
            f"the statement calls the procedure {name}, which is not on the allow-list",
            procedure=name,
        )
    if policy.has_hidden_names and _matches(name, _SCHEMA_PROCEDURES):
        raise _Refusal(
            "hidden_label",
            f"the procedure {name} would show schema this channel may not see; match the "
            "labels you need and return properties by name instead",
            procedure=name,
        )


def _check_hidden(cypher: str, tokens: list[Token], policy: CypherPolicy) -> None:
    if not policy.has_hidden_names:
        return
    hidden_labels = {n.casefold() for n in policy.hidden_labels}
    hidden_types = {n.casefold() for n in policy.hidden_rel_types}
    hidden_props = {n.rsplit(".", 1)[-1].casefold() for n in policy.hidden_properties}
    names = referenced_names(cypher)
    for label in sorted(names.labels):
        if label.casefold() in hidden_labels or label.casefold() in hidden_types:
            raise _Refusal("hidden_label", f"the label {label} is not available in this channel")
    for rel_type in sorted(names.rel_types):
        if rel_type.casefold() in hidden_types or rel_type.casefold() in hidden_labels:
            raise _Refusal(
                "hidden_label", f"the relationship type {rel_type} is not available in this channel"
            )
    for prop in sorted(names.properties):
        if prop.casefold() in hidden_props:
            raise _Refusal("hidden_label", f"the property {prop} is not available in this channel")
    every_hidden = hidden_labels | hidden_types | hidden_props
    # Names can also hide in the places above doesn't read: n['salary'], 'Salary' IN labels(n),
    # whole-property functions, `.*` projections and dynamic labels.
    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.kind in ("string", "quoted_identifier", "identifier", "keyword") and (
            tok.value.casefold() in every_hidden or fold_word(tok.value).casefold() in every_hidden
        ):
            raise _Refusal("hidden_label", f"the name {tok.value} is not available in this channel")
        if tok.is_word and nxt is not None and nxt.is_punct("("):
            function = tok.text.lower()
            reveals = {"properties", "keys"} if hidden_props else set()
            reveals |= {"labels"} if hidden_labels else set()
            reveals |= {"type"} if hidden_types else set()
            if function in reveals:
                raise _Refusal(
                    "hidden_label",
                    f"{function}() could show names this channel may not see; return "
                    "properties by name instead, e.g. n.name",
                )
        if tok.is_punct(".") and nxt is not None and nxt.is_punct("*") and hidden_props:
            raise _Refusal(
                "hidden_label",
                "a .* projection could show properties this channel may not see; list the "
                "properties by name, e.g. n {.name}",
            )
        if tok.is_punct(":") and nxt is not None and nxt.is_punct("$"):
            raise _Refusal(
                "hidden_label", "dynamic labels are not allowed in a channel with restrictions"
            )
        if (
            hidden_props
            and tok.is_punct("[")
            and i > 0
            and (
                tokens[i - 1].kind in ("identifier", "quoted_identifier")
                or tokens[i - 1].is_punct(")", "]")
            )
            and nxt is not None
            and nxt.kind not in ("number", "parameter")
            and not nxt.is_punct("-")
        ):
            raise _Refusal(
                "hidden_label",
                "dynamic property access is not allowed in a channel with restrictions; read "
                "properties by name, e.g. n.name",
            )


# --- restricted channels: refuse what the redaction of values could not check -------------

RESTRICTED_PROCEDURES: frozenset[str] = frozenset(
    {"db.idx.fulltext.queryNodes", "db.index.fulltext.queryNodes"}
)
"""The only procedures a channel with restrictions may CALL, each argument a literal."""
RESTRICTION_CATEGORIES = frozenset({"hidden_label", "restricted"})
"""Refusal categories that come from a channel's restrictions, not from the read-only rules."""

_BY_NAME = "return properties by name instead, e.g. n.name or count(n)"
# Functions that hand back a whole entity, all its keys, or its neighbours as entities.
_WHOLE_ENTITY_FUNCTIONS = frozenset(
    {"properties", "keys", "tojson", "nodes", "relationships", "startnode", "endnode"}
)
# Functions of an entity that return only a number or a boolean.
_SCALAR_FUNCTIONS = frozenset({"count", "id", "elementid", "length", "exists"})
_PATTERN_OPENERS = frozenset({"MATCH", "WHERE", "AND", "OR", "XOR", "NOT", "MERGE", "CREATE"})
_PATTERN_OPEN_PUNCT = (",", "-", ">", "<", "=", "(", "[", "{", "|")
_PATH_FUNCTIONS = frozenset({"shortestpath", "allshortestpaths"})
_YIELD_ENTITIES = frozenset({"node", "relationship", "path", "nodes", "relationships"})
_PROJECTION_ENDS = frozenset(
    {
        "MATCH",
        "OPTIONAL",
        "WHERE",
        "ORDER",
        "UNWIND",
        "WITH",
        "RETURN",
        "CALL",
        "LIMIT",
        "SKIP",
        "UNION",
    }
)
_CLAUSE_STARTS = _PROJECTION_ENDS | {"YIELD"}
_SUBQUERY_WORDS = ("CALL", "EXISTS", "COUNT", "COLLECT")


def _restricted(reason: str, **details: str) -> _Refusal:
    return _Refusal("restricted", reason, **details)


def _opens_node(tokens: list[Token], i: int) -> bool:
    """True when the "(" at i opens a node pattern rather than a call or a parenthesis."""
    prev = tokens[i - 1] if i else None
    if prev is None:
        return True
    if prev.is_punct(*_PATTERN_OPEN_PUNCT):
        return True
    return prev.is_word and fold_word(prev.text) in _PATTERN_OPENERS


@dataclass
class _Entities:
    """Variables bound to nodes, relationships or paths (which of them are nodes, too).

    Which nodes a label binds is decided in `cypher_bindings`, scope by scope."""

    variables: set[str] = field(default_factory=set)
    nodes: set[str] = field(default_factory=set)


def _entity_variables(tokens: list[Token], layout: _Layout) -> _Entities:
    found = _Entities()
    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        after = tokens[i + 2] if i + 2 < len(tokens) else None
        prev = tokens[i - 1] if i else None
        if tok.is_punct("(") and _opens_node(tokens, i) and nxt is not None and nxt.is_name:
            if after is not None and after.is_punct(":", ")", "{"):
                found.variables.add(nxt.name)
                found.nodes.add(nxt.name)
        elif (
            tok.is_punct("[")
            and prev is not None
            and prev.is_punct("-")
            and nxt is not None
            and nxt.is_name
            and after is not None
            and after.is_punct(":", "]", "*", "{")
        ):
            found.variables.add(nxt.name)
        elif tok.is_name and nxt is not None and nxt.is_punct("=") and after is not None:
            opens_path = after.is_punct("(") or (
                after.is_word and after.text.lower() in _PATH_FUNCTIONS
            )
            if opens_path and (prev is None or prev.is_punct(",") or prev.is_keyword("MATCH")):
                found.variables.add(tok.name)
        elif tok.is_keyword("YIELD"):
            _yielded_entities(tokens, i + 1, found)
    for _ in range(2):  # aliases of aliases: WITH n AS m WITH m AS k
        _alias_entities(tokens, found, layout)
    return found


def _yielded_entities(tokens: list[Token], start: int, found: _Entities) -> None:
    j = start
    while j < len(tokens) and tokens[j].is_name:
        name = tokens[j].name
        alias = name
        if j + 2 < len(tokens) and tokens[j + 1].is_keyword("AS") and tokens[j + 2].is_name:
            alias = tokens[j + 2].name
            j += 2
        if name.lower() in _YIELD_ENTITIES:
            # The procedure's literal first argument names the label (checked in the call).
            found.variables.add(alias)
            found.nodes.add(alias)
        j += 1
        if not (j < len(tokens) and tokens[j].is_punct(",")):
            break
        j += 1


def _alias_entities(tokens: list[Token], found: _Entities, layout: _Layout) -> None:
    for i, tok in enumerate(tokens):
        if not tok.is_keyword("AS") or i + 1 >= len(tokens) or not tokens[i + 1].is_name:
            continue
        start = _expression_start(tokens, i)
        expression = tokens[start:i]
        bare = [
            tokens[k].name
            for k in range(start, i)
            if tokens[k].is_name
            and tokens[k].name in found.variables
            and not _use_is_checkable(tokens, k, layout, carried=False)
        ]
        if not bare:
            continue
        alias = tokens[i + 1].name
        found.variables.add(alias)
        if len(expression) == 1 and bare[0] in found.nodes:
            found.nodes.add(alias)


def _expression_start(tokens: list[Token], as_index: int) -> int:
    """Index of the first token of the projection item that ends at the AS at as_index."""
    for j, tok, depth in nesting(tokens, 0, as_index, backward=True):
        if depth < 0:
            return j + 1  # the bracket the item is in
        if depth == 0 and (
            tok.is_punct(",")
            or (tok.is_word and fold_word(tok.text) in _CLAUSE_STARTS | {"DISTINCT"})
        ):
            return j + 1
    return 0


@dataclass
class _Layout:
    """Per token: the clause it belongs to at its own bracket depth, and whether the innermost
    bracket around it is a map literal. One pass, so the checks stay linear in the statement."""

    clause: list[str]
    in_map: list[bool]


def _layout(tokens: list[Token]) -> _Layout:
    clauses: list[str] = [""]
    maps: list[bool] = [False]
    layout = _Layout([], [])
    for j, tok in enumerate(tokens):
        layout.clause.append(clauses[-1])
        layout.in_map.append(maps[-1])
        if tok.is_punct("(", "[", "{"):
            before = tokens[j - 1] if j else None
            subquery = before is not None and (
                before.is_punct(")") or before.is_keyword(*_SUBQUERY_WORDS)
            )
            clauses.append("")
            maps.append(tok.is_punct("{") and not subquery)
        elif tok.is_punct(")", "]", "}") and len(clauses) > 1:
            clauses.pop()
            maps.pop()
        elif tok.is_word:
            word = fold_word(tok.text)
            if word in _CLAUSE_STARTS:
                clauses[-1] = word
    return layout


def _use_is_checkable(
    tokens: list[Token], i: int, layout: _Layout, *, carried: bool = True
) -> bool:
    """True when the entity variable at i is used in a way that shows no whole entity.

    With `carried`, a whole item of a WITH (`WITH n, m`) counts too: the variable goes on
    unchanged, and what is done with it later is checked where that happens."""
    prev = tokens[i - 1] if i else None
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if prev is not None and (
        prev.is_punct(".", "::") or (prev.is_punct(":") and not layout.in_map[i])
    ):
        return True  # a property or label that happens to share the variable's name
    if prev is not None and prev.is_keyword("AS"):
        return True  # the alias being defined; its own uses are checked
    if layout.clause[i] == "YIELD":
        return True  # a procedure's output being named; its uses are checked
    if nxt is not None and nxt.is_punct(".", ":", "{", "=", "<>"):
        return True  # n.name, n:Label, n {.name}, n = m, p = (…) definitions
    if nxt is not None and nxt.is_keyword("IS"):
        return True
    if prev is not None and prev.is_punct("=", "<>"):
        return True
    if prev is not None and prev.is_punct("(") and _opens_node(tokens, i - 1):
        return True
    if prev is not None and prev.is_punct("[") and i >= 2 and tokens[i - 2].is_punct("-"):
        return True
    call = i - 2 if prev is not None and prev.is_keyword("DISTINCT") else i - 1
    if (
        call >= 1
        and tokens[call].is_punct("(")
        and tokens[call - 1].is_word
        and tokens[call - 1].text.lower() in _SCALAR_FUNCTIONS
        and nxt is not None
        and nxt.is_punct(")")
    ):
        return True
    if carried and layout.clause[i] == "WITH" and prev is not None:
        whole_item = prev.is_punct(",") or prev.is_keyword("WITH", "DISTINCT")
        if nxt is None or nxt.is_punct(",") or nxt.is_keyword("AS"):
            return whole_item
        return whole_item and nxt.is_word and fold_word(nxt.text) in _PROJECTION_ENDS
    return False


def _check_restricted(tokens: list[Token], policy: CypherPolicy) -> None:
    """In a channel with restrictions, refuse every form whose values could not be checked.

    The redaction of the rows removes hidden entities and keys it can recognise; what it
    cannot recognise (a hidden node's property returned as a plain value, a name computed at
    run time) must never be asked for. Each reason says what to write instead.
    """
    if not policy.has_hidden_names:
        return
    layout = _layout(tokens)
    entities = _entity_variables(tokens, layout)
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.is_word and nxt is not None and nxt.is_punct("("):
            function = tok.text.lower()
            if function in _WHOLE_ENTITY_FUNCTIONS:
                raise _restricted(
                    f"{tok.text}() shows whole entities or all their keys, which this channel "
                    f"cannot check; {_BY_NAME}",
                    function=function,
                )
        if tok.is_word and tok.text.lower() == "apoc" and nxt is not None and nxt.is_punct("."):
            raise _restricted(
                f"APOC functions and procedures are not available in this channel; {_BY_NAME}"
            )
        if tok.is_keyword("CALL") and nxt is not None and nxt.is_name:
            _check_restricted_call(tokens, i + 1)
        if tok.is_keyword("NOT"):
            j = i + 1
            while j < len(tokens) and tokens[j].is_punct("("):
                j += 1
            if j + 1 < len(tokens) and tokens[j].is_name and tokens[j + 1].is_punct(":"):
                raise _restricted(
                    "label negation (NOT n:Label) can reach labels this channel may not see; "
                    "match the label you want, e.g. (n:Label)"
                )
        if tok.is_punct("!") or (
            tok.is_punct("%") and prev is not None and prev.is_punct(":", "|", "&")
        ):
            raise _restricted(
                "negated or wildcard labels and types can reach what this channel may not see; "
                "name the labels and types you want"
            )
        if (
            tok.is_punct(":", "|", "&")
            and nxt is not None
            and (nxt.kind == "parameter" or nxt.is_punct("$"))
        ):
            raise _restricted(
                "labels and types built from parameters are not allowed in this channel; "
                "write the label, e.g. (n:Label)"
            )
        if tok.is_punct(".") and nxt is not None and nxt.is_punct("*"):
            raise _restricted(f"a .* projection returns every property; {_BY_NAME}")
        if tok.is_punct("*") and prev is not None and prev.is_keyword("RETURN", "DISTINCT"):
            raise _restricted(f"RETURN * returns whole entities; {_BY_NAME}")
        if (
            tok.is_punct("[")
            and prev is not None
            and (
                prev.kind in ("identifier", "quoted_identifier", "parameter")
                or prev.is_punct(")", "]", "}")
            )
            and not _literal_subscript(tokens, i)
        ):
            raise _restricted(
                "a computed key or index (x[…]) is not allowed in this channel; read properties "
                "by name, e.g. n.name, and index lists with a number, e.g. list[0]"
            )
        if (
            tok.is_name
            and tok.name in entities.variables
            and not (nxt is not None and nxt.is_punct("["))  # refused as a computed key above
            and not _use_is_checkable(tokens, i, layout)
        ):
            raise _restricted(
                f"{tok.name} is a whole node, relationship or path here, which this channel "
                f"cannot check; return properties by name instead, e.g. {tok.name}.name or "
                f"count({tok.name})",
                variable=tok.name,
            )
    problem = binding_problem(
        tokens,
        labels_hidden=bool(policy.hidden_labels),
        types_hidden=bool(policy.hidden_rel_types),
    )
    if problem is not None:
        raise _restricted(problem.reason, **problem.details)


def _literal_subscript(tokens: list[Token], open_idx: int) -> bool:
    """`[0]`, `[-1]`, `[1..3]`, `[..2]`: numbers only, up to the matching "]"."""
    j = open_idx + 1
    while j < len(tokens) and not tokens[j].is_punct("]"):
        if not (tokens[j].kind == "number" or tokens[j].is_punct("-", "..")):
            return False
        j += 1
    return j < len(tokens) and j > open_idx + 1


def _check_restricted_call(tokens: list[Token], start: int) -> None:
    name, after = _procedure_name(tokens, start)
    if not _matches(name, RESTRICTED_PROCEDURES):
        raise _restricted(
            f"the procedure {name} is not available in this channel; match and return "
            "properties by name instead",
            procedure=name,
        )
    if after >= len(tokens) or not tokens[after].is_punct("("):
        raise _restricted(
            f"call {name} with its arguments written out, e.g. {name}('Label', 'text')"
        )
    j = after + 1
    while j < len(tokens) and not tokens[j].is_punct(")"):
        tok = tokens[j]
        if tok.kind not in ("string", "number") and not tok.is_punct(","):
            raise _restricted(
                f"the arguments of {name} must be written out as plain text or numbers in this "
                f"channel (no parameters, variables or joined pieces), e.g. {name}('Label', 'text')",
                procedure=name,
            )
        j += 1


def _glued_without_comments(cypher: str, tokens: list[Token]) -> str:
    pieces: list[str] = []
    last = 0
    for tok in tokens:
        if tok.kind == "comment":
            pieces.append(cypher[last : tok.position])
            last = tok.end
    pieces.append(cypher[last:])
    return "".join(pieces)


def _check_variant(cypher: str, policy: CypherPolicy) -> None:
    tokens = tokenize(cypher)
    for tok in tokens:
        if tok.kind == "error":
            raise _Refusal("syntax", f"the statement has an {tok.value}")
    statements = _split_statements(tokens)
    if not statements:
        raise _Refusal("empty", "the statement is empty")
    if len(statements) > 1:
        raise _Refusal(
            "multi_statement",
            f"the text holds {len(statements)} statements; send exactly one",
        )
    statement = statements[0]
    _check_start(statement, policy)
    _check_words(statement, policy)
    _check_hidden(cypher, statement, policy)
    _check_restricted(statement, policy)
    if (problem := cost_problem(statement)) is not None:
        raise _Refusal("cost", problem)


def check_cypher(cypher: str, policy: CypherPolicy | None = None) -> PolicyResult:
    """Decide whether one Cypher statement may run: read-only, one statement, allowed calls.

    Never raises. A single trailing `;` is fine; comments are ignored except for the
    glued-word check described in the module docstring.
    """
    policy = policy or DEFAULT_POLICY
    try:
        if not cypher or not cypher.strip():
            raise _Refusal("empty", "the statement is empty")
        with_comments = tokenize(cypher, include_comments=True)
        _check_variant(cypher, policy)
        if any(t.kind == "comment" for t in with_comments):
            _check_variant(_glued_without_comments(cypher, with_comments), policy)
        canonical = _canonical(cypher, with_comments)
        if canonical != cypher:
            # The text the engine will get is judged too, so nothing differs between the two.
            _check_variant(canonical, policy)
    except _Refusal as refusal:
        logger.debug("cypher refused (%s): %s", refusal.result.category, refusal.result.reason)
        return refusal.result
    return PolicyResult(allowed=True, canonical=canonical)
