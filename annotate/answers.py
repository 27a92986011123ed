"""When an answer to a criterion is complete, and how the page names a criterion in a short line.

One rule for the submit check, the amendment check, the progress counter, the
criterion's border and the keyboard's "next unanswered": a criterion is done when
it has a winner (a tie only where the campaign allows ties), when the campaign
requires a rationale, one of at least the minimum length once stripped of spaces,
and, when the campaign asks for evidence (on every criterion, or on every winner
that is not a tie), at least one passage marked as the criterion's evidence.
"Cannot judge" (`CANNOT_JUDGE`, where the campaign allows it) stands for a winner:
it needs the rationale, never evidence; it is stored without a winner, so every
statistic, which reads winners only, leaves it out and never takes it for a tie.
static/annotate.js applies the same rule to what is typed before it is saved.

Pure: no Django, no database.
"""

from __future__ import annotations

from dataclasses import dataclass

import protocols
from protocols.pairwise import TIE

CHOOSE_WINNER = "choose a winner"
CHOOSE_ANSWER = "give an answer"
NO_TIES = "ties are not allowed in this campaign"
CHOOSE_OVERALL = "choose which article is better overall"
MARK_EVIDENCE = "mark a passage as evidence"
NO_CANNOT_JUDGE = "this campaign does not allow “cannot judge”"
# The answer "I cannot judge this criterion here", on the page, in the API and in exports.
CANNOT_JUDGE = "cannot_judge"
EVIDENCE_NONE, EVIDENCE_EVERY, EVIDENCE_WINNERS = "none", "every", "winners"  # Campaign.Evidence
SHORT_TEXT = 70  # characters of a criterion's text in a list of what is missing


@dataclass(frozen=True)
class Rules:
    """What a campaign asks of each criterion's answer."""

    allow_tie: bool
    rationale_min_length: int  # 0 when no rationale is required
    evidence: str = EVIDENCE_NONE
    allow_cannot_judge: bool = False

    @classmethod
    def of(cls, campaign) -> Rules:
        return cls(
            campaign.allow_tie,
            campaign.rationale_min_length if campaign.rationale_required else 0,
            campaign.evidence_required,
            campaign.allow_cannot_judge,
        )

    def needs_evidence(self, winner: str) -> bool:
        """Whether an answer naming `winner` needs a passage marked as its evidence."""
        return self.evidence == EVIDENCE_EVERY or (self.evidence == EVIDENCE_WINNERS and bool(winner) and winner != TIE)


def criterion_problems(rules: Rules, *, winner: str, rationale: str, evidence: int = 0, cannot_judge: bool = False) -> list[str]:
    """What one answer still lacks, as short phrases ("choose a winner", ...); empty when it is complete.

    `evidence` is the number of passages marked as the criterion's evidence; `cannot_judge`, whether
    the answer is "cannot judge" (then `winner` is "")."""
    if cannot_judge:
        return ([] if rules.allow_cannot_judge else [NO_CANNOT_JUDGE]) + _rationale_problems(rules, rationale)
    problems = []
    if not winner:
        problems.append(CHOOSE_WINNER)
    elif winner == TIE and not rules.allow_tie:
        problems.append(NO_TIES)
    problems += _rationale_problems(rules, rationale)
    if not evidence and rules.needs_evidence(winner):
        problems.append(MARK_EVIDENCE)
    return problems


def reading_problems(rules: Rules, *, value: str, rationale: str) -> list[str]:
    """What one answer about one article (a reading) still lacks; empty when it is complete. The
    value itself was checked by its protocol when it was saved: here only whether there is one."""
    return ([] if value else [CHOOSE_ANSWER]) + _rationale_problems(rules, rationale)


def _rationale_problems(rules: Rules, rationale: str) -> list[str]:
    if rules.rationale_min_length:
        length = len(rationale.strip())
        if length < rules.rationale_min_length:
            return [f"write a rationale of at least {rules.rationale_min_length} characters ({length} so far)"]
    return []


def on_pair(response: dict) -> bool:
    """Whether a criterion whose `response` is this is answered on a pair (two articles compared), not
    on one article alone or on a group of three or more. {} is the campaign's pairwise verdict."""
    return protocols.arity(response) == 2


COMPLETE, PARTIAL = "complete", "partial"


def answer_state(problems: list[str], *, winner: str) -> str:
    """How a criterion's border shows it: COMPLETE, PARTIAL (a winner, but something lacks) or "" (no winner).

    Pass CANNOT_JUDGE as `winner` for that answer: it counts as one given."""
    if not problems:
        return COMPLETE
    return PARTIAL if winner else ""


def sentence(phrase: str) -> str:
    """A phrase from `criterion_problems` as a sentence of its own."""
    return phrase[:1].upper() + phrase[1:] + "."


def shorten(text: str, limit: int = SHORT_TEXT) -> str:
    """`text` on one line, cut at a word boundary to at most `limit` characters, with "…" when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut and not text[limit - 1].isspace():
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.-–—") + "…"
