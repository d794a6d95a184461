"""Channel policy: where the bot answers, and per-channel hidden names."""

from __future__ import annotations

import dataclasses

import pytest

from guardrails.channels import (
    ChannelPolicy,
    ChannelRestrictions,
    NoticeOnce,
    parse_channel_restrictions,
)
from guardrails.cypher_policy import CypherPolicy, check_cypher


@pytest.mark.parametrize(
    ("policy", "channel", "is_dm", "answer", "reason"),
    [
        (ChannelPolicy(), "C1", False, True, "allowed"),
        (ChannelPolicy(), "D1", True, True, "dm"),
        (ChannelPolicy(allow_dms=False), "D1", True, False, "dms_disabled"),
        (ChannelPolicy(allowed=["C1"]), "C1", False, True, "allowed"),
        (ChannelPolicy(allowed=["C1"]), "C2", False, False, "not_allowed"),
        (ChannelPolicy(allowed=["C1"]), "D1", True, True, "dm"),
        (ChannelPolicy(denied=["C2"]), "C2", False, False, "denied"),
        (ChannelPolicy(allowed=["C2"], denied=["C2"]), "C2", False, False, "denied"),
        (ChannelPolicy(denied=["D9"]), "D9", True, False, "denied"),
    ],
)
def test_decide(
    policy: ChannelPolicy, channel: str, is_dm: bool, answer: bool, reason: str
) -> None:
    decision = policy.decide(channel, is_dm)
    assert (decision.answer, decision.reason) == (answer, reason)
    assert (decision.message is None) == answer


def test_from_settings_trims_and_parses() -> None:
    policy = ChannelPolicy.from_settings([" C1 ", ""], ["C2"], False, "C1:Incident")
    assert policy.allowed == ["C1"] and policy.denied == ["C2"] and not policy.allow_dms
    assert policy.restrictions_for("C1").hidden_labels == {"Incident"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("  ;  ", {}),
        (
            "C123:Person.salary,Incident;C456:Salary",
            {
                "C123": ChannelRestrictions(
                    frozenset({"Incident"}), frozenset(), frozenset({"Person.salary"})
                ),
                "C456": ChannelRestrictions(frozenset({"Salary"})),
            },
        ),
        (
            "C1: .ssn , *.dob",
            {"C1": ChannelRestrictions(hidden_properties=frozenset({"ssn", "dob"}))},
        ),
        (
            "C1:[PAID],Person",
            {"C1": ChannelRestrictions(frozenset({"Person"}), frozenset({"PAID"}))},
        ),
        ("C1:A;C1:B", {"C1": ChannelRestrictions(frozenset({"A", "B"}))}),
        ("*:.ssn", {"*": ChannelRestrictions(hidden_properties=frozenset({"ssn"}))}),
        (
            "C1:Société.salaire",
            {"C1": ChannelRestrictions(hidden_properties=frozenset({"Société.salaire"}))},
        ),
    ],
)
def test_parse_channel_restrictions(text: str, expected: dict[str, ChannelRestrictions]) -> None:
    assert parse_channel_restrictions(text) == expected


@pytest.mark.parametrize("text", ["C1", ":Person", "C1:a.b.c", "C1:[", "C1:Person.", "C1:[A]]"])
def test_bad_restrictions_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_channel_restrictions(text)


def test_restrictions_merge_with_every_channel() -> None:
    policy = ChannelPolicy.from_settings([], [], True, "C1:Incident;*:.ssn")
    assert policy.restrictions_for("C1") == ChannelRestrictions(
        frozenset({"Incident"}), frozenset(), frozenset({"ssn"})
    )
    assert policy.restrictions_for("C2") == ChannelRestrictions(
        hidden_properties=frozenset({"ssn"})
    )
    assert not ChannelPolicy().restrictions_for("C1")


def test_restrictions_feed_the_cypher_policy() -> None:
    restrictions = ChannelPolicy.from_settings(
        [], [], True, "C1:Person.salary,Incident,[PAID]"
    ).restrictions_for("C1")
    policy = dataclasses.replace(CypherPolicy(), **restrictions._asdict())
    assert CypherPolicy(**restrictions._asdict()) == policy
    assert check_cypher("MATCH (p:Person) RETURN p.salary", policy).category == "hidden_label"
    assert check_cypher("MATCH (i:Incident) RETURN i", policy).category == "hidden_label"
    assert check_cypher("MATCH ()-[r:PAID]->() RETURN count(r)", policy).category == "hidden_label"
    assert check_cypher("MATCH (p:Person) RETURN p.name", policy).allowed
    assert check_cypher("MATCH (p:Person) RETURN p.salary").allowed  # other channels


def test_notice_once() -> None:
    once = NoticeOnce()
    assert once.first("C1")
    assert not once.first("C1")
    assert once.first("C2")
