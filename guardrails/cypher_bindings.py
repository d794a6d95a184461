"""Which nodes and relationships a statement can touch, read from its patterns and scopes.

A channel that hides labels or relationship types needs more than "no hidden name appears in
the text": `MATCH (i) WHERE i:Person OR true RETURN i.title` names no hidden label, yet reads
every node. So in such a channel a statement is judged by how each node enters it:

* Every node pattern either carries a positive label expression (`(p:Person)`, `(:Team)`,
  `(s:Service|Team)`) or repeats a variable that such a pattern bound earlier in the same
  scope (`MATCH (p:Person) MATCH (p)-[:MEMBER_OF]->(t:Team)`). A label test in WHERE does not
  bind: it can be ORed away. Anonymous nodes `()` and first mentions without a label are
  refused, wherever the pattern stands (MATCH, OPTIONAL MATCH, WHERE pattern predicates,
  pattern comprehensions, EXISTS/COUNT/COLLECT and CALL subqueries, shortestPath).
* Scopes follow the language: each UNION branch starts empty; `WITH`/`RETURN` keep only what
  they project (`WITH p AS q` hands p's binding to q, `WITH *` keeps all); a CALL subquery
  sees only what it imports (`CALL { WITH p … }`, `CALL (p) { … }`); EXISTS/COUNT/COLLECT
  bodies, pattern comprehensions and predicates see the enclosing scope, and what they bind
  stays inside them.
* When relationship types are hidden, every relationship is typed (`-[:MEMBER_OF]->`). When
  anything structural is hidden, a variable-length relationship must be typed too (its inner
  nodes carry no label of their own). Quantified path patterns and other forms this reader
  cannot take apart are refused rather than guessed at.

Nodes can also arrive through functions (`startNode`, `nodes(path)`, …) and whole entities;
the policy refuses those in restricted channels separately. Hidden names anywhere in the text
are refused separately too, so a label expression here only has to be positive.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from guardrails.cypher_tokens import Token

_MAIN_CLAUSES = frozenset(
    {
        "MATCH",
        "OPTIONAL",
        "WITH",
        "UNWIND",
        "RETURN",
        "CALL",
        "CREATE",
        "MERGE",
        "DELETE",
        "DETACH",
        "SET",
        "REMOVE",
        "FOREACH",
        "LOAD",
        "USE",
        "FINISH",
        "SHOW",
    }
)
_SUB_CLAUSES = frozenset({"WHERE", "ORDER", "SKIP", "LIMIT", "YIELD", "USING"})
_SUBQUERY_WORDS = frozenset({"EXISTS", "COUNT", "COLLECT"})
_PATH_FUNCTIONS = frozenset({"shortestpath", "allshortestpaths"})
# Procedure outputs that are nodes; the restricted policy allows only full-text node queries,
# whose label is a literal argument checked against the hidden names.
_YIELDED_NODES = frozenset({"node"})
_OPENERS = {"(": ")", "[": "]", "{": "}"}

EXAMPLE_NODE = "bind every node with an allowed label in its own pattern, e.g. ({name}:Label)"
EXAMPLE_CHAIN = "e.g. (a:Label)-[:TYPE]->(b:Label)"


@dataclass(frozen=True)
class BindingProblem:
    """Why a statement could touch something the channel hides, as feedback for the model."""

    reason: str
    details: dict[str, str] = field(default_factory=dict)


class _Stop(Exception):
    def __init__(self, reason: str, **details: str) -> None:
        super().__init__(reason)
        self.problem = BindingProblem(reason, dict(details))


def _word(tok: Token) -> str:
    # Look-alike keywords are judged in the policy's canonical variant; plain upper-case here.
    return tok.text.upper() if tok.is_word else ""


def _unreadable(what: str) -> _Stop:
    return _Stop(
        f"{what} cannot be checked in this channel; write patterns as labelled nodes joined "
        f"by typed relationships, {EXAMPLE_CHAIN}",
        form=what,
    )


class _Reader:
    def __init__(self, tokens: list[Token], *, labels_hidden: bool, types_hidden: bool) -> None:
        self.t = tokens
        self.labels_hidden = labels_hidden
        self.types_hidden = types_hidden
        self.close: dict[int, int] = {}
        stack: list[int] = []
        for i, tok in enumerate(tokens):
            if tok.kind != "punct":
                continue
            if tok.text in _OPENERS:
                stack.append(i)
            elif tok.text in (")", "]", "}"):
                if not stack or _OPENERS[tokens[stack[-1]].text] != tok.text:
                    raise _unreadable("a statement with unbalanced brackets")
                self.close[stack.pop()] = i
        if stack:
            raise _unreadable("a statement with unbalanced brackets")

    # --- small helpers -----------------------------------------------------------------------

    def _tok(self, i: int) -> Token | None:
        return self.t[i] if 0 <= i < len(self.t) else None

    def _punct(self, i: int, *texts: str) -> bool:
        tok = self._tok(i)
        return tok is not None and tok.is_punct(*texts)

    def _skip(self, i: int) -> int:
        """Index after the token at i, or after the whole bracket group it opens."""
        return self.close[i] + 1 if i in self.close else i + 1

    def _clause_word(self, i: int, words: frozenset[str]) -> str:
        """The clause word at i (at the depth being walked), or ""."""
        tok = self.t[i]
        word = _word(tok)
        if word not in words:
            return ""
        prev = self._tok(i - 1)
        if prev is not None and (prev.is_punct(".", ":", "::", "$") or prev.is_keyword("AS")):
            return ""  # a property, label or alias that spells a keyword
        if word == "WITH" and prev is not None and prev.is_keyword("STARTS", "ENDS"):
            return ""
        if word == "OPTIONAL":
            nxt = self._tok(i + 1)
            return "OPTIONAL" if nxt is not None and nxt.is_keyword("MATCH") else ""
        return word

    def _top(self, a: int, b: int) -> list[int]:
        """Indices in [a, b) that are not inside a bracket group opened in [a, b)."""
        out: list[int] = []
        i = a
        while i < b:
            out.append(i)
            i = self._skip(i)
        return out

    def _split(self, a: int, b: int, sep: str = ",") -> list[tuple[int, int]]:
        parts: list[tuple[int, int]] = []
        start = a
        for i in self._top(a, b):
            if self.t[i].is_punct(sep):
                parts.append((start, i))
                start = i + 1
        parts.append((start, b))
        return parts

    # --- queries, branches and clauses --------------------------------------------------------

    def query(self, a: int, b: int, outer: set[str], *, imports_by_with: bool, top: bool) -> None:
        """A query of UNION branches; each branch starts from `outer` (see `branch`)."""
        start = a
        for i in self._top(a, b):
            if self._clause_word(i, frozenset({"UNION"})):
                self.branch(start, i, outer, imports_by_with=imports_by_with, top=top)
                top = False  # only the statement's first branch has a prefix (EXPLAIN, …)
                start = (
                    i + 2
                    if self._tok(i + 1) is not None and self.t[i + 1].is_keyword("ALL", "DISTINCT")
                    else i + 1
                )
        self.branch(start, b, outer, imports_by_with=imports_by_with, top=top)

    def branch(self, a: int, b: int, outer: set[str], *, imports_by_with: bool, top: bool) -> None:
        """One UNION branch. With `imports_by_with` (a CALL body) only a leading WITH brings in
        the outer variables; otherwise (EXISTS/COUNT/COLLECT bodies) the outer scope is seen."""
        clauses: list[tuple[str, int, int]] = []
        for i in self._top(a, b):
            word = self._clause_word(i, _MAIN_CLAUSES)
            if (
                word == "MATCH"
                and clauses
                and clauses[-1][0] == "OPTIONAL"
                and clauses[-1][1] == i - 1
            ):
                continue  # the MATCH of OPTIONAL MATCH
            if word:
                if clauses:
                    clauses[-1] = (clauses[-1][0], clauses[-1][1], i)
                clauses.append((word, i, b))
            elif not clauses and not top:
                raise _unreadable("a UNION branch or subquery that does not start with a clause")
        if not clauses:
            raise _unreadable("a statement without a reading clause")
        bound = set(outer)
        if imports_by_with and clauses[0][0] != "WITH":
            bound = set()
        for word, start, end in clauses:
            body = start + (2 if word == "OPTIONAL" else 1)
            if word in ("MATCH", "OPTIONAL"):
                self.match(body, end, bound)
            elif word in ("WITH", "RETURN"):
                bound = self.projection(body, end, bound)
            elif word == "UNWIND":
                self.unwind(body, end, bound)
            elif word == "CALL":
                self.call(body, end, bound)
            else:
                self.expression(body, end, bound)

    def _sub_clauses(self, a: int, b: int) -> list[tuple[str, int, int]]:
        """Split a clause body at WHERE/ORDER/SKIP/LIMIT/YIELD/USING: ("", a, first) first."""
        parts: list[tuple[str, int, int]] = [("", a, b)]
        for i in self._top(a, b):
            word = self._clause_word(i, _SUB_CLAUSES)
            if word:
                parts[-1] = (parts[-1][0], parts[-1][1], i)
                parts.append((word, i + 1, b))
        return parts

    def match(self, a: int, b: int, bound: set[str]) -> None:
        parts = self._sub_clauses(a, b)
        _, start, end = parts[0]
        for s, e in self._split(start, end):
            self.pattern_element(s, e, bound)
        for word, s, e in parts[1:]:
            if word == "WHERE":
                self.expression(s, e, bound)
            elif word != "USING":
                raise _unreadable(f"{word} after MATCH")

    def projection(self, a: int, b: int, bound: set[str]) -> set[str]:
        """WITH/RETURN items: the variables (and their bindings) that go on."""
        parts = self._sub_clauses(a, b)
        _, start, end = parts[0]
        if start < end and self.t[start].is_keyword("DISTINCT"):
            start += 1
        kept: set[str] = set()
        aliases: set[str] = set()
        for s, e in self._split(start, end):
            if e - s == 1 and self.t[s].is_punct("*"):
                kept |= bound
                continue
            as_at = next((i for i in reversed(self._top(s, e)) if self.t[i].is_keyword("AS")), None)
            expr_end = as_at if as_at is not None else e
            self.expression(s, expr_end, bound)
            alias_tok = self._tok(as_at + 1) if as_at is not None else None
            single = self.t[s] if expr_end - s == 1 and self.t[s].is_name else None
            name = alias_tok.name if alias_tok is not None and alias_tok.is_name else None
            if name is None and single is not None:
                name = single.name
            if name is None:
                continue
            aliases.add(name)
            if single is not None and single.name in bound:
                kept.add(name)
        later = kept | (bound - aliases)
        for word, s, e in parts[1:]:
            self.expression(s, e, kept if word == "WHERE" else later)
        return kept

    def unwind(self, a: int, b: int, bound: set[str]) -> None:
        as_at = next((i for i in self._top(a, b) if self.t[i].is_keyword("AS")), b)
        self.expression(a, as_at, bound)
        alias = self._tok(as_at + 1)
        if alias is not None and alias.is_name:
            bound.discard(alias.name)

    def call(self, a: int, b: int, bound: set[str]) -> None:
        tok = self._tok(a)
        if tok is None:
            return
        if tok.is_punct("{"):
            self.query(a + 1, self.close[a], bound, imports_by_with=True, top=False)
            rest = self.close[a] + 1
            self.expression(rest, b, bound)
            return
        if tok.is_punct("("):
            # CALL (x, y) { … } / CALL (*) { … }: the scope clause lists the imports.
            inner = {self.t[i].name for i in self._top(a + 1, self.close[a]) if self.t[i].is_name}
            star = any(self.t[i].is_punct("*") for i in self._top(a + 1, self.close[a]))
            brace = self.close[a] + 1
            if not self._punct(brace, "{"):
                raise _unreadable("a CALL without a body")
            imported = set(bound) if star else bound & inner
            self.query(brace + 1, self.close[brace], imported, imports_by_with=False, top=False)
            self.expression(self.close[brace] + 1, b, bound)
            return
        # A procedure: arguments, then YIELD items (a full-text query's `node` is a node whose
        # label is its literal first argument), then WHERE.
        parts = self._sub_clauses(a, b)
        self.expression(parts[0][1], parts[0][2], bound)
        for word, s, e in parts[1:]:
            if word == "YIELD":
                for item_start, item_end in self._split(s, e):
                    names = [self.t[i] for i in range(item_start, item_end) if self.t[i].is_name]
                    names = [n for n in names if not n.is_keyword("AS")]
                    if not names:
                        continue
                    alias = names[-1].name
                    if names[0].name.lower() in _YIELDED_NODES:
                        bound.add(alias)
                    else:
                        bound.discard(alias)
            else:
                self.expression(s, e, bound)

    # --- expressions: they may hold patterns and subqueries -----------------------------------

    def expression(self, a: int, b: int, bound: set[str]) -> None:
        i = a
        while i < b:
            tok = self.t[i]
            if tok.is_punct("{"):
                prev = self._tok(i - 1)
                end = self.close[i]
                if prev is not None and _word(prev) in _SUBQUERY_WORDS:
                    self.subquery_body(i + 1, end, bound)
                elif prev is not None and prev.is_keyword("CALL"):
                    self.query(i + 1, end, bound, imports_by_with=True, top=False)
                else:
                    self.expression(i + 1, end, set(bound))
                i = end + 1
            elif tok.is_punct("(") and self._rel_after(i):
                # A pattern (whatever its first node looks like): it binds nothing outside.
                i = self.chain(i, set(bound))
            elif tok.is_punct("[") and (start := self._comprehension_pattern(i + 1)) is not None:
                # [(a)-[:T]->(b:L) WHERE … | b.x]: the pattern's variables serve the rest.
                local = set(bound)
                after = self.chain(start, local)
                self.expression(after, self.close[i], local)
                i = self.close[i] + 1
            elif tok.is_punct("(", "["):
                end = self.close[i]
                self.expression(i + 1, end, set(bound))
                i = end + 1
            else:
                i += 1

    def _comprehension_pattern(self, i: int) -> int | None:
        """Where the pattern of a pattern comprehension starting at i opens, or None."""
        if self.t[i].is_name and self._punct(i + 1, "=") and self._punct(i + 2, "("):
            i += 2
        if self._punct(i, "(") and self._rel_after(i):
            return i
        return None

    def subquery_body(self, a: int, b: int, bound: set[str]) -> None:
        """EXISTS/COUNT/COLLECT { … }: a query, or a pattern with an optional WHERE."""
        local = set(bound)
        first = self._tok(a)
        if first is not None and self._clause_word(a, _MAIN_CLAUSES):
            self.query(a, b, local, imports_by_with=False, top=False)
            return
        self.match(a, b, local)

    # --- patterns -----------------------------------------------------------------------------

    def pattern_element(self, a: int, b: int, bound: set[str]) -> None:
        if a >= b:
            raise _unreadable("an empty pattern")
        i = a
        if self.t[i].is_name and self._punct(i + 1, "="):
            i += 2  # a path variable: p = (…)
        tok = self._tok(i)
        if (
            tok is not None
            and tok.is_word
            and tok.text.lower() in _PATH_FUNCTIONS
            and self._punct(i + 1, "(")
        ):
            end = self.close[i + 1]
            if end + 1 != b or not self._punct(i + 2, "("):
                raise _unreadable("this shortestPath form")
            if self.chain(i + 2, bound) != end:
                raise _unreadable("this shortestPath form")
            return
        if tok is None or not tok.is_punct("("):
            raise _unreadable("this pattern form (e.g. SHORTEST or a quantified path)")
        if self.chain(i, bound) != b:
            raise _unreadable("this pattern form (e.g. a quantified path)")

    def chain(self, open_idx: int, bound: set[str]) -> int:
        """Check a node (relationship node)* chain starting at "(": the index after it."""
        i = open_idx
        while True:
            self.node(i, bound)
            after = self.close[i] + 1
            rel = self._rel_after(i)
            if rel is None:
                return after
            detail, next_open = rel
            self.relationship(detail, bound)
            i = next_open

    def _rel_after(self, open_idx: int) -> tuple[tuple[int, int] | None, int] | None:
        """After the node at open_idx: `-[…]->`, `<-[…]-`, `--`, `-->`, `<--` then "(".

        Returns ((start, end) of the bracket contents or None, index of the next "(")."""
        j = self.close[open_idx] + 1
        if self._punct(j, "<"):
            j += 1
        if not self._punct(j, "-"):
            return None
        j += 1
        detail: tuple[int, int] | None = None
        if self._punct(j, "["):
            detail = (j + 1, self.close[j])
            j = self.close[j] + 1
            if not self._punct(j, "-"):
                return None
            j += 1
        elif self._punct(j, "-"):
            j += 1
        else:
            return None
        if self._punct(j, ">"):
            j += 1
        if not self._punct(j, "("):
            return None
        return detail, j

    def _labels(self, colon: int, end: int) -> tuple[bool, int]:
        """The label/type expression after ":" at colon: (positive, index after it)."""
        j = colon + 1
        named = False
        negative = False
        while j < end:
            tok = self.t[j]
            if tok.is_name:
                named = True
                j += 1
            elif tok.is_punct("|", "&", ":"):
                j += 1
            elif tok.is_punct("!", "%") or tok.kind == "parameter" or tok.is_punct("$"):
                negative = True
                j += 1
            elif tok.is_punct("(") and self.close[j] < end:
                inner_positive, _ = self._labels(j, self.close[j])
                named = named or inner_positive
                j = self.close[j] + 1
            else:
                break
        return named and not negative, j

    def _properties_and_where(self, j: int, end: int, bound: set[str], what: str) -> None:
        """The rest of a node or relationship pattern: a map or parameter, then WHERE."""
        if j < end and self.t[j].is_punct("{"):
            self.expression(j + 1, self.close[j], bound)
            j = self.close[j] + 1
        elif j < end and self.t[j].kind == "parameter":
            j += 1
        if j < end and self.t[j].is_keyword("WHERE"):
            self.expression(j + 1, end, bound)
            j = end
        if j != end:
            raise _unreadable(what)

    def node(self, open_idx: int, bound: set[str]) -> None:
        end = self.close[open_idx]
        j = open_idx + 1
        var: str | None = None
        tok = self._tok(j)
        if j < end and tok is not None and tok.is_name and not tok.is_keyword("WHERE", "IS"):
            var = tok.name
            j += 1
        positive = False
        has_labels = False
        if j < end and (self.t[j].is_punct(":") or self.t[j].is_keyword("IS")):
            has_labels = True
            positive, j = self._labels(j, end)
        if self.labels_hidden:
            if positive:
                if var is not None:
                    bound.add(var)
            elif has_labels:
                raise _Stop(
                    "negated, wildcard or computed labels can reach nodes this channel may not "
                    f"see; {EXAMPLE_NODE.format(name=var or 'x')}",
                    variable=var or "",
                )
            elif var is None:
                raise _Stop(
                    "a node without a label, e.g. (), could be one this channel may not see; "
                    + EXAMPLE_NODE.format(name="x")
                )
            elif var not in bound:
                raise _Stop(
                    f"({var}) has no label in the pattern that introduces it, so it could be a "
                    "node this channel may not see (a label test in WHERE does not count); "
                    + EXAMPLE_NODE.format(name=var),
                    variable=var,
                )
        self._properties_and_where(j, end, bound, "this node pattern")

    def relationship(self, detail: tuple[int, int] | None, bound: set[str]) -> None:
        typed = False
        variable_length = False
        if detail is not None:
            j, end = detail
            tok = self._tok(j)
            if j < end and tok is not None and tok.is_name and not tok.is_keyword("WHERE", "IS"):
                j += 1
            if j < end and (self.t[j].is_punct(":") or self.t[j].is_keyword("IS")):
                typed, j = self._labels(j, end)
            if j < end and self.t[j].is_punct("*"):
                variable_length = True
                j += 1
                while j < end and (self.t[j].kind == "number" or self.t[j].is_punct("..")):
                    j += 1
            self._properties_and_where(j, end, bound, "this relationship pattern")
        if typed:
            return
        if self.types_hidden:
            raise _Stop(
                "a relationship without a type could be one this channel may not see; give it "
                f"an allowed type, {EXAMPLE_CHAIN}"
            )
        if variable_length and self.labels_hidden:
            raise _Stop(
                "a variable-length relationship without a type can pass through nodes this "
                "channel may not see; give it an allowed type, e.g. (a:Label)-[:TYPE*1..3]->"
                "(b:Label)"
            )


def binding_problem(
    tokens: list[Token], *, labels_hidden: bool, types_hidden: bool
) -> BindingProblem | None:
    """Why the statement (one, already tokenized) could touch a hidden node or relationship.

    None when every node is bound by an allowed label in its own pattern (or is a variable such
    a pattern bound in the same scope) and every relationship satisfies the type rules above.
    """
    if not (labels_hidden or types_hidden) or not tokens:
        return None
    try:
        reader = _Reader(tokens, labels_hidden=labels_hidden, types_hidden=types_hidden)
        reader.query(0, len(tokens), set(), imports_by_with=False, top=True)
    except _Stop as stop:
        return stop.problem
    except RecursionError:
        return BindingProblem(
            "the statement nests too deeply to check in this channel; write it more simply, "
            f"{EXAMPLE_CHAIN}"
        )
    return None
