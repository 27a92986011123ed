"""A campaign's design: its slots against its annotators, and the warning when they cannot fit.

Pure: `selectors.campaign_design` counts a campaign's pairs and annotators and
hands them to `Design`, which does the arithmetic and words the warning.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Design:
    """Whether a campaign's shape lets every annotator meet each topic at most once.

    Without repeats a topic holds at most one pair per annotator, so a topic
    with `s` slots (its pairs times the overlap) can use at most
    `min(s, annotators)` of them; the rest need somebody to meet it twice.
    """

    pairs_by_topic: tuple[int, ...]
    overlap: int
    annotators: int

    @property
    def pairs(self) -> int:
        return sum(self.pairs_by_topic)

    @property
    def topics(self) -> int:
        return len(self.pairs_by_topic)

    @property
    def slots(self) -> int:
        return self.pairs * self.overlap

    @property
    def forced_repeats(self) -> int:
        reachable = sum(min(pairs * self.overlap, self.annotators) for pairs in self.pairs_by_topic)
        return self.slots - reachable

    def warning(self, *, forbid_repeats: bool) -> str:
        if not self.forced_repeats:
            return ""
        shape = (
            f"{self.pairs} pairs on {self.topics} topics, each for {self.overlap} annotator(s), make {self.slots} slots, "
            f"but {self.annotators} annotator(s) meeting each topic once can fill only {self.slots - self.forced_repeats} of them."
        )
        if forbid_repeats:
            return f"{shape} Repeats are forbidden, so {self.forced_repeats} slot(s) will stay empty: add annotators or lower the overlap."
        return (
            f"{shape} {self.forced_repeats} assignment(s) will show an annotator a topic they have met, "
            "and with it the reference article they have already read: add annotators, lower the overlap, or forbid repeats."
        )
