"""The demo's simulated study: labels from simulated annotators and judges, made from a seed.

Pure Python, no Django. `load_demo` writes these rows as a labels file and imports it through
`import_labels`' own path into a labels-only campaign, so that the demo's report has every headline
figure to show (the alt-test needs 3 annotators with 30 pairs each; selective judging needs
confidences and enough calibration items; the human ceiling needs 10 pairs for its interval).

The model, stated so that the figures can be read against it: every item (pair, criterion) has a
true answer, drawn once (the reference wins, the other system wins, or a tie, with the
probabilities of :data:`TRUTH`, which differ by system so that the systems rank apart). An
annotator gives the true answer with its accuracy (:data:`ANNOTATORS`) and otherwise one of the two
other answers at random. A judge draws a confidence per item, uniform in its range, and is right
with a probability that rises with it (:func:`judge_correct_probability`): confidences that mean
something, as selective judging assumes. Display orders are drawn per rater and pair. Nothing here
is real data.
"""

import random
from dataclasses import dataclass

REFERENCE = "wikipedia"
SYSTEMS = ("atlas_agent", "quill_researcher")
# The criteria the simulated raters answer (ids of fixtures/criteria/wiki_writing.json).
CRITERIA = ("ww_cc_1", "ww_cc_2", "ww_cc_3", "ww_ls_1", "ww_ls_2", "ww_ls_3", "ww_wtw_1", "ww_wtw_2")
PLACES = ("Alderwick", "Brackmoor", "Corrandale", "Dunholm", "Eskerby")
FEATURES = ("Bridge", "Mill", "Priory", "Harbour")
# P(reference wins), P(the system wins); a tie takes the rest.
TRUTH = {"atlas_agent": (0.50, 0.40), "quill_researcher": (0.65, 0.25)}
ANNOTATORS = (("sim_rater1", 0.93), ("sim_rater2", 0.9), ("sim_rater3", 0.88), ("sim_rater4", 0.85))
# Judge name -> (lowest confidence, highest confidence).
JUDGES = {"sim-judge-careful": (0.5, 1.0), "sim-judge-hasty": (0.3, 0.9)}
SEED = 41
HEADER = ("topic", "criterion", "rater_kind", "rater", "left_system", "right_system", "winner_system", "confidence")


@dataclass(frozen=True)
class Row:
    topic: str
    criterion: str
    rater_kind: str
    rater: str
    left_system: str
    right_system: str
    winner_system: str
    confidence: str = ""

    def cells(self) -> tuple[str, ...]:
        return (
            self.topic,
            self.criterion,
            self.rater_kind,
            self.rater,
            self.left_system,
            self.right_system,
            self.winner_system,
            self.confidence,
        )


def topics() -> list[str]:
    """The simulated study's topic titles: every place with every feature (20)."""
    return [f"{place} {feature}" for place in PLACES for feature in FEATURES]


def judge_correct_probability(confidence: float) -> float:
    """How often a simulated judge is right at a given confidence: 0.6 at 0.5, 0.98 from 0.88 up."""
    return min(0.98, 0.1 + confidence)


def _other_answer(rng: random.Random, truth: str, answers: tuple[str, str, str]) -> str:
    return rng.choice([a for a in answers if a != truth])


def study_rows(seed: int = SEED) -> list[Row]:
    """Every row of the simulated study, in a fixed order: the same rows for the same seed."""
    rng = random.Random(seed)
    rows = []
    for topic in topics():
        for system in SYSTEMS:
            answers = (REFERENCE, system, "tie")
            p_reference, p_system = TRUTH[system]
            truths = {}
            for criterion in CRITERIA:
                draw = rng.random()
                truths[criterion] = REFERENCE if draw < p_reference else system if draw < p_reference + p_system else "tie"
            for rater, accuracy in ANNOTATORS:
                left, right = (REFERENCE, system) if rng.random() < 0.5 else (system, REFERENCE)
                for criterion in CRITERIA:
                    truth = truths[criterion]
                    winner = truth if rng.random() < accuracy else _other_answer(rng, truth, answers)
                    rows.append(Row(topic, criterion, "human", rater, left, right, winner))
            for judge, (low, high) in JUDGES.items():
                left, right = (REFERENCE, system) if rng.random() < 0.5 else (system, REFERENCE)
                for criterion in CRITERIA:
                    truth = truths[criterion]
                    confidence = round(low + (high - low) * rng.random(), 3)
                    right_answer = rng.random() < judge_correct_probability(confidence)
                    winner = truth if right_answer else _other_answer(rng, truth, answers)
                    rows.append(Row(topic, criterion, "judge", judge, left, right, winner, f"{confidence:.3f}"))
    return rows


def gold_rows(items: list[tuple[str, str, list[str]]], seed: int = SEED) -> list[Row]:
    """The simulated annotators' answers on known-answer pairs: `items` are (topic, the degraded
    copy's system, the criteria its damage targets), the original being the reference's article. An
    annotator names the original with its accuracy, else the copy (no tie: the demo campaign allows none)."""
    rng = random.Random(f"{seed}:gold")
    rows = []
    for topic, copy_system, criteria in items:
        for rater, accuracy in ANNOTATORS:
            left, right = (REFERENCE, copy_system) if rng.random() < 0.5 else (copy_system, REFERENCE)
            for criterion in criteria:
                winner = REFERENCE if rng.random() < accuracy else copy_system
                rows.append(Row(topic, criterion, "human", rater, left, right, winner))
    return rows
