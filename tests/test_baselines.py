"""judges.baselines: the offline judges (no Django)."""

import json
from collections import Counter
from pathlib import Path

import pytest

from judges.baselines import (
    WATCH_CLASS_BY_KEY,
    WATCH_CLASSES,
    count_words,
    length_verdict,
    random_verdict,
    watch_count,
    words_to_watch_verdict,
)

RUBRIC = Path(__file__).resolve().parents[1] / "fixtures" / "criteria" / "wiki_writing.json"

PLAIN = "The bridge opened in 1932 and carries four lanes of traffic across the river."


# ------------------------------------------------------------------ length


def test_it_counts_words_of_prose():
    assert count_words("Two **bold** words - and 3.5% more | ---") == 6
    assert count_words("") == 0


def test_the_longer_article_wins():
    assert length_verdict("one two three", "one two") == "1"
    assert length_verdict("one", "one two") == "2"


def test_equal_lengths_tie():
    assert length_verdict("one two", "three four") == "tie"
    assert length_verdict("", "") == "tie"


def test_markup_does_not_count_as_length():
    assert length_verdict("# Title\n\n- one\n- two", "Title one two") == "tie"


# ------------------------------------------------------------------ words to watch

EXAMPLES = {
    "puffery": ["an iconic bridge", "a World-Class museum", "a world class museum", "a breathtaking view", "the legendary singer"],
    "contentious_label": ["an extremist group", "the sect", "a conspiracy theorist", "a notorious case"],
    "unsupported_attribution": [
        "some say it fell",
        "many experts agree",
        "it is widely believed that",
        "studies have shown",
        "critics argue that",
        "it has been suggested",
        "is widely regarded as the best",
    ],
    "expression_of_doubt": ["the so-called reform", "the alleged plot", "purportedly written", "a self-styled prophet"],
    "editorializing": ["Interestingly, it rained", "clearly the best", "of course", "it is worth noting that", "Sadly, he left"],
    "said_synonym": ["he admitted the error", "she revealed that", "they insisted on", "he conceded", "she claimed"],
    "euphemism": ["he passed away in 1990", "after her passing", "was laid to rest", "collateral damage"],
    "cliche_idiom": [
        "a double-edged sword",
        "at the end of the day",
        "the jewel in the crown",
        "has stood the test of time",
        "a stone\u2019s throw",
    ],
    "relative_time": [
        "recently",
        "is currently the largest",
        "nowadays",
        "to this day",
        "in recent years",
        "as of now",
        "it will soon open",
    ],
    "unspecified_place_or_event": ["here the river bends", "in this region", "at times", "frequently", "somehow it survived"],
    "survived_by": ["He is survived by his wife", "was survived by two sons", "she leaves behind a daughter"],
}


def test_every_class_has_examples():
    assert set(EXAMPLES) == set(WATCH_CLASSES)


@pytest.mark.parametrize("watch_class, text", [(c, t) for c, texts in EXAMPLES.items() for t in texts])
def test_each_class_finds_its_phrases(watch_class, text):
    assert watch_count(text, watch_class) == 1


@pytest.mark.parametrize("watch_class", sorted(WATCH_CLASSES))
def test_plain_prose_matches_nothing(watch_class):
    assert watch_count(PLAIN, watch_class) == 0


@pytest.mark.parametrize(
    "watch_class, text",
    [
        ("puffery", "The iconography of the period"),  # word boundaries
        ("relative_time", "Soon after the war it closed."),  # relative to a stated event
        ("unspecified_place_or_event", "wherever, there, hereafter, nowhere"),
        ("contentious_label", "insects and dissection"),
        ("said_synonym", "admittance"),
    ],
)
def test_it_respects_word_boundaries_and_obvious_exceptions(watch_class, text):
    assert watch_count(text, watch_class) == 0


def test_matching_ignores_case_and_spans_line_breaks():
    assert watch_count("SOME\nSAY it was SO-CALLED", "unsupported_attribution") == 1
    assert watch_count("He PASSED\n AWAY.", "euphemism") == 1


def test_it_compares_rates_per_word_not_counts():
    one_in_100 = "an iconic bridge " + "word " * 97
    two_in_1000 = "an iconic bridge and a legendary road " + "word " * 993
    assert (watch_count(one_in_100, "puffery"), watch_count(two_in_1000, "puffery")) == (1, 2)
    assert words_to_watch_verdict(one_in_100, two_in_1000, criterion_key="", watch_class="puffery") == "2"
    assert words_to_watch_verdict(two_in_1000, one_in_100, criterion_key="", watch_class="puffery") == "1"


def test_an_unknown_class_is_an_error():
    with pytest.raises(ValueError, match="unknown watch class 'pufery'"):
        watch_count(PLAIN, "pufery")


def test_the_class_map_matches_the_rubric():
    rubric = json.loads(RUBRIC.read_text())
    classes = {
        criterion["id"]: criterion["watch_class"]
        for category in rubric["categories"]
        for subcategory in category["subcategories"]
        for criterion in subcategory["criteria"]
        if criterion.get("watch_class")
    }
    assert classes == WATCH_CLASS_BY_KEY
    assert set(WATCH_CLASS_BY_KEY.values()) == set(WATCH_CLASSES)


def test_fewer_words_to_watch_win():
    clean, puffed = "The bridge opened in 1932.", "The iconic bridge opened in 1932."
    assert words_to_watch_verdict(clean, puffed, criterion_key="ww_wtw_1") == "1"
    assert words_to_watch_verdict(puffed, clean, criterion_key="ww_wtw_1") == "2"


def test_it_compares_rates_not_counts():
    # Two matches in 100 words beat one match in 10 words.
    long = "iconic legendary " + "word " * 98
    short = "iconic " + "word " * 9
    assert words_to_watch_verdict(long, short, criterion_key="ww_wtw_1") == "1"


def test_an_explicit_class_overrides_the_key():
    text_1, text_2 = "He passed away in 1990.", "He died in 1990 here."
    assert words_to_watch_verdict(text_1, text_2, criterion_key="ww_cc_1", watch_class="euphemism") == "2"
    assert words_to_watch_verdict(text_1, text_2, criterion_key="ww_wtw_1", watch_class="unspecified_place_or_event") == "1"


def test_equal_rates_fall_back_to_length():
    shorter, longer = "The bridge opened.", "The bridge opened in 1932."
    assert words_to_watch_verdict(shorter, longer, criterion_key="ww_wtw_1") == "2"
    # Same rate (1 per 4 words) but different lengths.
    assert words_to_watch_verdict("an iconic bridge here", "an iconic bridge here and an iconic tower", criterion_key="ww_wtw_1") == "2"
    assert words_to_watch_verdict("one two", "three four", criterion_key="ww_wtw_1") == "tie"


def test_criteria_without_a_class_use_length():
    assert words_to_watch_verdict("The iconic legendary bridge opened.", "It opened.", criterion_key="nc_1") == "1"


# ------------------------------------------------------------------ random


def test_the_coin_is_deterministic():
    draws = [random_verdict(seed=7, parts=("pair-3", "ww_cc_1"), allow_tie=True) for _ in range(5)]
    assert len(set(draws)) == 1


def test_the_coin_depends_on_the_seed_and_the_parts():
    by_seed = {random_verdict(seed=seed, parts=("pair", 1), allow_tie=False) for seed in range(40)}
    by_part = {random_verdict(seed=0, parts=("pair", n), allow_tie=False) for n in range(40)}
    assert by_seed == by_part == {"1", "2"}


def test_the_coin_is_fair_without_ties():
    counts = Counter(random_verdict(seed=1, parts=(n, "ww_cc_1"), allow_tie=False) for n in range(1000))
    assert set(counts) == {"1", "2"}
    assert 400 <= counts["1"] <= 600


def test_the_coin_gives_each_outcome_a_third_with_ties():
    counts = Counter(random_verdict(seed=1, parts=(n, "ww_cc_1"), allow_tie=True) for n in range(3000))
    assert set(counts) == {"1", "2", "tie"}
    assert all(850 <= count <= 1150 for count in counts.values())
