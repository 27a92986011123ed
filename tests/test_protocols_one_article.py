"""The one-article protocols (checklist, rating, count) on their own: answers, stored forms, the
metrics' values, the judge prompt and schema, and the reply parser (pure, no database)."""

import math

import pytest

import protocols
from protocols import checklist, count, nominal, rating
from protocols.base import CriterionSpec, InvalidResponse
from tests.helpers import strict_subset_problems

FIVE = protocols.criterion_response({"type": "rating", "points": [{"value": v, "label": f"p{v}"} for v in range(1, 6)]})[0]
NA = protocols.criterion_response({"type": "checklist", "allow_na": True})[0]
CLASSES = protocols.criterion_response({"type": "nominal", "classes": ["Oui", "Partiellement", "Non", "Sans réponse", "Hors sujet"]})[0]
SCORED = protocols.criterion_response(
    {"type": "count", "max": 50, "score": [{"at_most": 0, "score": 5}, {"at_most": 2, "score": 3}, {"score": 1}]}
)[0]


def reply(*answers):
    import json

    return json.dumps({"answers": [{"criterion": key, "reason": "because", "answer": value} for key, value in answers]})


def test_it_registers_the_three_one_article_protocols_but_lets_campaigns_run_pairwise_only():
    assert [protocols.get(name) for name in ("checklist", "rating", "count")] == [checklist, rating, count]
    assert protocols.NAMES == ("pairwise",)
    assert protocols.problem("rating") == "protocol 'rating' is not one of: pairwise"


def test_it_says_what_is_wrong_with_a_checklist_answer():
    assert checklist.answer_problems("yes") == []
    assert checklist.answer_problems("na") == ["Answer Yes or No."]
    assert checklist.answer_problems("na", response=NA) == []
    assert checklist.answer_problems("maybe", response=NA) == ["Answer Yes, No or N/A."]
    assert [checklist.metric_outcome(v) for v in ("yes", "no")] == [1.0, 0.0]
    assert math.isnan(checklist.metric_outcome("na"))


def test_it_says_what_is_wrong_with_a_rating_and_hands_the_point_to_the_metrics():
    assert rating.answer_problems("3", response=FIVE) == []
    assert rating.answer_problems("6", response=FIVE) == ["Choose a point from 1 to 5."]
    assert rating.answer_problems("3") == ["This criterion has no scale."]
    assert rating.scale(FIVE) == (1, 5)
    assert rating.metric_outcome("4") == 4.0


def test_it_scores_a_count_by_the_rubric_table():
    assert [count.score(n, SCORED) for n in (0, 1, 2, 3, 40)] == [5.0, 3.0, 3.0, 1.0, 1.0]
    assert count.metric_outcome("7") == 7.0
    assert count.metric_outcome("2", response=SCORED) == 3.0
    assert count.answer_problems("51", response=SCORED) == ["Give a whole number from 0 to 50."]
    assert count.answer_problems("-1") == ["Give a whole number from 0 to 100000."]
    assert count.stored_answer("007") == "7"


def test_it_names_statistics_the_metrics_compute_for_each_response_type():
    from calibration.metrics.pointwise_agreement import RATER_FIGURES
    from calibration.metrics.pointwise_panel import PANEL_FIGURES

    for module in (checklist, rating, count, nominal):
        known = set(RATER_FIGURES[module.METRIC_RESPONSE]) | set(PANEL_FIGURES[module.METRIC_RESPONSE])
        assert set(module.AGREEMENT_STATISTICS) <= known, module.NAME
    assert {"icc2_1", "icc2_k", "kappa_quadratic", "alpha_ordinal"} <= set(rating.AGREEMENT_STATISTICS)


@pytest.mark.parametrize(
    "module, response, allowed",
    [
        (checklist, NA, ["yes", "no", "na"]),
        (rating, FIVE, [1, 2, 3, 4, 5]),
        (nominal, CLASSES, ["Oui", "Partiellement", "Non", "Sans réponse", "Hors sujet"]),
    ],
)
def test_it_asks_one_article_with_a_schema_named_after_the_protocol(module, response, allowed):
    request = module.build_request(
        topic="Tides", article="Body text.", category="Form", category_description="How it looks",
        criteria=[CriterionSpec("k_1", "First?", response)], structured=True,
    )  # fmt: skip
    user = request.messages[1]["content"]
    assert "===== Article =====\nBody text.\n===== End of Article =====" in user
    assert "- k_1: First? [" in user
    schema = request.response_format["json_schema"]
    assert schema["name"] == module.NAME
    answers = schema["schema"]["properties"]["answers"]
    assert answers["required"] == ["k_1"] == list(answers["properties"]) and answers["additionalProperties"] is False
    assert answers["properties"]["k_1"]["properties"]["answer"]["enum"] == allowed
    assert strict_subset_problems(schema["schema"]) == []
    assert (request.protocol, request.criteria, request.responses) == (module.NAME, ("k_1",), (response,))


def test_it_reads_valid_replies_through_the_registry():
    request = rating.build_request(
        topic="T", article="A", category="C", category_description="",
        criteria=[CriterionSpec("a", "x", FIVE), CriterionSpec("b", "y", FIVE)], structured=False,
    )  # fmt: skip
    text = "<think>hmm</think>```json\n" + reply(("B", "2"), ("a", 5)) + "\n```"
    assert protocols.parse_reply(request, text) == {"a": ("5", "because"), "b": ("2", "because")}


@pytest.mark.parametrize(
    "module, response, content, message",
    [
        (checklist, {"type": "checklist", "allow_na": False}, reply(("a", "na")), "a: answer 'na' is not one of yes, no"),
        (checklist, NA, reply(("a", True)), "a: answer True is not one of yes, no, na"),
        (rating, FIVE, reply(("a", 0)), "a: answer 0 is not a point of the scale 1-5"),
        (nominal, CLASSES, reply(("a", "Peut-être")), "a: answer 'Peut-être' is not one of Oui, Partiellement, Non"),
        (nominal, CLASSES, reply(("a", 2)), "a: answer 2 is not one of Oui"),
        (nominal, CLASSES, reply(("a", "na")), "a: answer 'na' is not one of Oui"),
        (rating, FIVE, reply(("a", True)), "a: answer True is not a point of the scale 1-5"),
        (count, SCORED, reply(("a", 51)), "a: answer 51 is not a count from 0 to 50"),
        (count, SCORED, reply(("a", 2.0)), "a: answer 2.0 is not a count from 0 to 50"),
        (count, SCORED, reply(("z", 1)), "answer 1: unknown criterion 'z'; expected one of a"),
        (count, SCORED, reply(("a", 1), ("a", 2)), "criterion a is answered twice"),
        (count, SCORED, '{"answers": []}', "1 of 1 criteria have no answer: a"),
        (count, SCORED, '{"answers": [{"criterion": "a"', "the response holds no complete JSON object"),
        (count, SCORED, '{"verdicts": []}', "expected a JSON object with an 'answers' list"),
    ],
)
def test_it_never_turns_an_invalid_reply_into_an_answer(module, response, content, message):
    with pytest.raises(InvalidResponse) as caught:
        module.parse_verdicts(content, criteria=("a",), responses=(response,))
    assert str(caught.value).startswith(message)
