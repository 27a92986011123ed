"""annotate.answers: when a criterion's answer is complete, and the short name of a criterion (pure, no database)."""

from annotate.answers import COMPLETE, PARTIAL, Rules, answer_state, criterion_problems, sentence, shorten

STRICT = Rules(allow_tie=False, rationale_min_length=10)
LENIENT = Rules(allow_tie=True, rationale_min_length=0)


def test_it_wants_a_winner_and_a_rationale_of_the_minimum_length():
    assert criterion_problems(STRICT, winner="a", rationale="Clearer lead.") == []
    assert criterion_problems(STRICT, winner="", rationale="") == [
        "choose a winner",
        "write a rationale of at least 10 characters (0 so far)",
    ]
    assert criterion_problems(STRICT, winner="b", rationale="too short") == ["write a rationale of at least 10 characters (9 so far)"]


def test_it_counts_the_rationale_without_surrounding_white_space():
    assert criterion_problems(STRICT, winner="a", rationale="  \n\t  short \n\n\n\n") == [
        "write a rationale of at least 10 characters (5 so far)"
    ]
    assert criterion_problems(STRICT, winner="a", rationale="\u3000" * 12) == ["write a rationale of at least 10 characters (0 so far)"]


def test_it_refuses_a_tie_only_where_ties_are_not_allowed():
    assert criterion_problems(STRICT, winner="tie", rationale="Equal on this.") == ["ties are not allowed in this campaign"]
    assert criterion_problems(LENIENT, winner="tie", rationale="") == []


def test_it_asks_only_for_a_winner_when_no_rationale_is_required():
    assert criterion_problems(LENIENT, winner="", rationale="") == ["choose a winner"]
    assert criterion_problems(LENIENT, winner="a", rationale="") == []


def test_it_tells_complete_from_partial_from_unanswered():
    assert answer_state([], winner="a") == COMPLETE
    assert answer_state(criterion_problems(STRICT, winner="a", rationale=""), winner="a") == PARTIAL
    assert answer_state(criterion_problems(STRICT, winner="", rationale="Long enough reason."), winner="") == ""


def test_it_makes_a_phrase_a_sentence():
    assert sentence("choose a winner") == "Choose a winner."


def test_it_shortens_a_criterion_at_a_word_boundary():
    text = "A better article can be understood on its own: unfamiliar ideas are briefly explained in the text."
    short = shorten(text)
    assert short == "A better article can be understood on its own: unfamiliar ideas are…"
    assert len(short) <= 70 and text.startswith(short[:-1])
    assert shorten("Short enough.") == "Short enough."
    assert shorten("Line one\n  and   two") == "Line one and two"
    assert shorten("x" * 100) == "x" * 69 + "…"  # one long word is cut where it must be
    assert shorten("word " * 30, limit=12) == "word word…"


EVERY = Rules(allow_tie=True, rationale_min_length=0, evidence="every")
WINNERS = Rules(allow_tie=True, rationale_min_length=0, evidence="winners")


def test_it_asks_for_evidence_on_every_criterion_or_on_every_winner_that_is_not_a_tie():
    assert criterion_problems(EVERY, winner="a", rationale="") == ["mark a passage as evidence"]
    assert criterion_problems(EVERY, winner="tie", rationale="") == ["mark a passage as evidence"]
    assert criterion_problems(EVERY, winner="a", rationale="", evidence=1) == []
    assert criterion_problems(WINNERS, winner="b", rationale="") == ["mark a passage as evidence"]
    assert criterion_problems(WINNERS, winner="tie", rationale="") == []
    assert criterion_problems(WINNERS, winner="", rationale="") == ["choose a winner"]
    assert criterion_problems(LENIENT, winner="a", rationale="") == []  # not asked: none needed


def test_it_takes_cannot_judge_for_an_answer_only_where_the_campaign_allows_it():
    allowing = Rules(allow_tie=False, rationale_min_length=10, evidence="every", allow_cannot_judge=True)
    assert criterion_problems(allowing, winner="", rationale="Both are off topic here.", cannot_judge=True) == []  # no evidence asked
    assert criterion_problems(allowing, winner="", rationale="", cannot_judge=True) == [
        "write a rationale of at least 10 characters (0 so far)"
    ]
    assert criterion_problems(STRICT, winner="", rationale="Both are off topic here.", cannot_judge=True) == [
        "this campaign does not allow “cannot judge”"
    ]
    assert answer_state([], winner="cannot_judge") == COMPLETE
