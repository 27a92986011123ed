"""The guess question's request and reply (protocols/pairwise/guess.py), pure: no database."""

import pytest

import protocols
from protocols.base import InvalidResponse
from protocols.pairwise import guess
from protocols.pairwise.prompt import build_request as verdicts_request
from tests.helpers import strict_subset_problems


def request(structured=True, name="Wikipedia"):
    return guess.build_request(topic="Marrow River", article_1="One.", article_2="Two, longer.", reference_name=name, structured=structured)


@pytest.mark.parametrize(
    "content, answer",
    [
        ('{"guess": "first"}', "first"),
        ('{"guess": "second"}', "second"),
        ('{"guess": "unknown"}', "unknown"),
        ('```json\n{"guess": "Article 2"}\n```', "second"),
        ('<think>the first is long</think>{"guess": 1}', "first"),
        ('I think so. {"answer": "don\'t know"}', "unknown"),
        ('"second"', "second"),
    ],
)
def test_it_reads_the_answers_it_tolerates(content, answer):
    assert guess.parse_verdicts(content) == {"guess": (answer, "")}
    assert protocols.parse_reply(request(), content) == {"guess": (answer, "")}


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"guess": "perhaps"}', "not one of first, second, unknown"),
        ('{"guess": 3}', "not one of"),
        ('{"guess": null}', "not one of"),
        ('{"guess": true}', "not one of"),
        ('{"verdicts": {}}', "with a 'guess'"),
        ("", "empty"),
        ('{"guess": "fir', "incomplete"),
    ],
)
def test_it_refuses_anything_else_never_reading_it_as_dont_know(content, message):
    with pytest.raises(InvalidResponse, match=message):
        guess.parse_verdicts(content)


def test_it_asks_in_the_annotators_words_after_the_verdicts_opening():
    asked = request(name="Encyclopaedia  Britannica")
    verdicts = verdicts_request(
        topic="Marrow River", article_1="One.", article_2="Two, longer.", category="c", category_description="",
        criteria=[protocols.base.CriterionSpec(key="k", text="t")], allow_tie=False, structured=True,
    )  # fmt: skip
    user = asked.messages[1]["content"]
    assert "Which article do you think is the Encyclopaedia Britannica article?" in user
    assert asked.messages[0] == verdicts.messages[0]
    opening = verdicts.messages[1]["content"].split("Category: ")[0]
    assert user.startswith(opening) and "Category" not in user
    assert asked.protocol == guess.NAME and asked.criteria == ("guess",)
    schema = asked.response_format["json_schema"]
    assert schema["name"] == "guess" and strict_subset_problems(schema["schema"]) == []
    assert request(structured=False).response_format is None


def test_it_is_no_protocol_of_the_registry():
    with pytest.raises(ValueError, match="protocol 'guess' is not one of"):
        protocols.get(guess.NAME)
    assert protocols.reader(guess.NAME) is guess and protocols.problem(guess.NAME)
