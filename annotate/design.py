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
    with `s` slots (its pairs times the overlap; a calibration pair counts a
    slot per annotator instead) can use at most `min(s, annotators)` of them;
    the rest need somebody to meet it twice. `calibration_by_topic`, when
    given, holds the calibration pairs of each topic of `pairs_by_topic`.
    """

    pairs_by_topic: tuple[int, ...]
    overlap: int
    annotators: int
    calibration_by_topic: tuple[int, ...] = ()
    noun: str = "pairs"  # what the campaign hands out: its pairs, or its other items when it asks nothing of pairs

    @property
    def pairs(self) -> int:
        return sum(self.pairs_by_topic)

    @property
    def topics(self) -> int:
        return len(self.pairs_by_topic)

    @property
    def calibration_pairs(self) -> int:
        return sum(self.calibration_by_topic)

    def _slots_by_topic(self) -> list[int]:
        calibration = self.calibration_by_topic or (0,) * self.topics
        return [(pairs - c) * self.overlap + c * self.annotators for pairs, c in zip(self.pairs_by_topic, calibration, strict=True)]

    @property
    def slots(self) -> int:
        return sum(self._slots_by_topic())

    @property
    def forced_repeats(self) -> int:
        reachable = sum(min(slots, self.annotators) for slots in self._slots_by_topic())
        return self.slots - reachable

    def warning(self, *, forbid_repeats: bool) -> str:
        if not self.forced_repeats:
            return ""
        calibration = f" and the {self.calibration_pairs} calibration pair(s) for all {self.annotators}" if self.calibration_pairs else ""
        shape = (
            f"{self.pairs} {self.noun} on {self.topics} topics, each for {self.overlap} annotator(s){calibration}, make {self.slots} slots, "
            f"but {self.annotators} annotator(s) meeting each topic once can fill only {self.slots - self.forced_repeats} of them."
        )
        if forbid_repeats:
            return f"{shape} Repeats are forbidden, so {self.forced_repeats} slot(s) will stay empty: add annotators or lower the overlap."
        return (
            f"{shape} {self.forced_repeats} assignment(s) will show an annotator a topic they have met, "
            "and with it the reference article they have already read: add annotators, lower the overlap, or forbid repeats."
        )
