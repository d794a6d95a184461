"""Where the bot answers (channel allow/deny lists, DMs) and what each channel may not see."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from guardrails.cypher_policy import CypherPolicy

logger = logging.getLogger(__name__)

NOT_ENABLED_MESSAGE = "I'm not enabled in this channel, so I won't answer questions here."
DMS_DISABLED_MESSAGE = "I don't answer direct messages here; please ask me in a channel."


class ChannelRestrictions(NamedTuple):
    """Hidden names for one channel; `CypherPolicy(**r._asdict())` or `replace(policy, **…)`."""

    hidden_labels: frozenset[str] = frozenset()
    hidden_rel_types: frozenset[str] = frozenset()
    hidden_properties: frozenset[str] = frozenset()

    def merged(self, other: ChannelRestrictions) -> ChannelRestrictions:
        """Both sets of hidden names."""
        return ChannelRestrictions(
            self.hidden_labels | other.hidden_labels,
            self.hidden_rel_types | other.hidden_rel_types,
            self.hidden_properties | other.hidden_properties,
        )

    def __bool__(self) -> bool:
        return bool(self.hidden_labels or self.hidden_rel_types or self.hidden_properties)


NO_RESTRICTIONS = ChannelRestrictions()

_NAME = r"[^\s.,;:\[\]]+"
_ENTRY = re.compile(
    rf"^(?:\[(?P<rel>{_NAME})\]|(?P<label>{_NAME}|\*)?\.(?P<prop>{_NAME})|(?P<bare>{_NAME}))$"
)


def parse_channel_restrictions(text: str) -> dict[str, ChannelRestrictions]:
    """Parse the compact per-channel restrictions setting.

    Format: `CHANNEL:ENTRY,ENTRY;CHANNEL:ENTRY…`, for example
    `C123:Person.salary,Incident;C456:Salary,[PAID];*:.ssn`, where an ENTRY is

    * `Label` — hide the label (nodes and schema);
    * `Label.property` — hide the property (the policy refuses the key on every label, as a
      variable's label is not always known);
    * `.property` or `*.property` — hide the property on every label;
    * `[TYPE]` — hide the relationship type.

    CHANNEL is a Slack channel ID, or `*` for restrictions every channel gets. Whitespace is
    ignored; an empty string means no restrictions. Raises ValueError naming the bad part.
    """
    result: dict[str, ChannelRestrictions] = {}
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        channel, sep, entries = part.partition(":")
        channel = channel.strip()
        if not sep or not channel:
            raise ValueError(f"channel restriction {part!r} needs the form CHANNEL:NAME,NAME")
        labels: set[str] = set()
        rel_types: set[str] = set()
        properties: set[str] = set()
        for raw in entries.split(","):
            entry = re.sub(r"\s+", "", raw)
            if not entry:
                continue
            match = _ENTRY.match(entry)
            if match is None:
                raise ValueError(f"channel restriction entry {entry!r} for {channel} is not valid")
            if match.group("rel"):
                rel_types.add(match.group("rel"))
            elif match.group("prop"):
                label = match.group("label")
                prop = match.group("prop")
                properties.add(f"{label}.{prop}" if label and label != "*" else prop)
            else:
                labels.add(match.group("bare"))
        found = ChannelRestrictions(frozenset(labels), frozenset(rel_types), frozenset(properties))
        result[channel] = result.get(channel, NO_RESTRICTIONS).merged(found)
    return result


@dataclass(frozen=True)
class ChannelDecision:
    """Whether to answer in a channel, why, and a short message for the person when not."""

    answer: bool
    reason: str
    """allowed, dm, dms_disabled, denied or not_allowed."""
    message: str | None = None


@dataclass(frozen=True)
class ChannelPolicy:
    """Allow-list (empty: every channel), deny-list (wins), DMs on/off, per-channel hidden names."""

    allowed: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    allow_dms: bool = True
    restrictions: Mapping[str, ChannelRestrictions] = field(default_factory=dict)

    @classmethod
    def from_settings(
        cls,
        allowed: Iterable[str],
        denied: Iterable[str],
        allow_dms: bool,
        restrictions: str = "",
    ) -> ChannelPolicy:
        """Build from setting values; `restrictions` uses parse_channel_restrictions' format."""
        return cls(
            [c.strip() for c in allowed if c.strip()],
            [c.strip() for c in denied if c.strip()],
            allow_dms,
            parse_channel_restrictions(restrictions),
        )

    def decide(self, channel_id: str, is_dm: bool) -> ChannelDecision:
        """Whether the bot answers a message in this channel (or DM)."""
        if channel_id in self.denied:
            return ChannelDecision(
                False, "denied", DMS_DISABLED_MESSAGE if is_dm else NOT_ENABLED_MESSAGE
            )
        if is_dm:
            if not self.allow_dms:
                return ChannelDecision(False, "dms_disabled", DMS_DISABLED_MESSAGE)
            return ChannelDecision(True, "dm")
        if self.allowed and channel_id not in self.allowed:
            return ChannelDecision(False, "not_allowed", NOT_ENABLED_MESSAGE)
        return ChannelDecision(True, "allowed")

    def restrictions_for(self, channel_id: str) -> ChannelRestrictions:
        """Hidden names for a channel: its own plus those given for every channel (`*`)."""
        own = self.restrictions.get(channel_id, NO_RESTRICTIONS)
        return own.merged(self.restrictions.get("*", NO_RESTRICTIONS))

    def cypher_policy_for(self, channel_id: str) -> CypherPolicy | None:
        """The read-only policy with the channel's hidden names, or None when it hides nothing
        (the agent's own policy applies)."""
        restrictions = self.restrictions_for(channel_id)
        return CypherPolicy(**restrictions._asdict()) if restrictions else None


class NoticeOnce:
    """Remembers which channels were told "not enabled here", so each is told only once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._told: set[str] = set()

    def first(self, key: str) -> bool:
        """True the first time a key is seen (then remembered), False afterwards."""
        with self._lock:
            if key in self._told:
                return False
            self._told.add(key)
            return True
