"""The blindness audit's pure logic: surface features and the guessability classifier, no database."""

import random

import pytest

from annotate.blindness import AS_WRITTEN, FEATURE_KEYS, MIN_TOPICS, NEUTRAL, Sample, blindness_report, features_of, launch_warning
from annotate.blindness_features import EMPHASIS_KEYS
from annotate.blindness_format import report_markdown

# Invented filler, varied enough that articles differ in length and sentence shape.
WORDS = "river town bridge council harbour museum station valley market school tower garden chapel road mill".split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 22))).capitalize() + "."


def _article(rng: random.Random, title: str, *, numbered: bool = False) -> str:
    parts = [f"# {title}", "", " ".join(_sentence(rng) for _ in range(rng.randint(2, 5)))]
    for n in range(1, rng.randint(3, 6)):
        name = rng.choice(WORDS).capitalize()
        parts += ["", f"## {n}. {name}" if numbered else f"## {name}", "", " ".join(_sentence(rng) for _ in range(rng.randint(2, 6)))]
    return "\n".join(parts) + "\n"


def _campaign(*, topics: int, seed: int, numbered_generated: bool) -> list[Sample]:
    """Per topic, a reference and a generated article drawn from the same recipe; optionally the generated one numbers its headings."""
    rng = random.Random(seed)
    samples = []
    for t in range(topics):
        title = f"Topic {t}"
        samples.append(Sample(topic=title, system="wikipedia", is_reference=True, markdown=_article(rng, title)))
        samples.append(Sample(topic=title, system="agent", is_reference=False, markdown=_article(rng, title, numbered=numbered_generated)))
    return samples


def test_it_counts_headings_below_the_title_and_numbered_ones():
    text = "# Title\n\n## 1. History\n\ntext\n\n### 2.3 Legacy\n\n## 2007 season\n\n#### 1945\n\n## IV. Later\n\n## Plain\n"
    features = features_of(text)
    assert features["headings"] == 6
    # Years are not section numbers.
    assert features["numbered_headings"] == 3


def test_it_counts_self_reference_wikipedia_and_talk_of_the_sources():
    text = (
        "In this article we describe the mill. As discussed above, this section is short.\n"
        "Unlike Wikipedia, the provided sources say little; according to the sources it burned.\n"
        "The thistle article on wikipedia.org is not ours.\n"
    )
    features = features_of(text)
    # "In this article we" counts once, not also as "this article".
    assert features["self_reference"] == 3
    assert features["wikipedia"] == 2
    assert features["source_talk"] == 2


def test_it_measures_tables_bullets_bold_and_sentences():
    text = (
        "# T\n\nThe **mill** was built early. It burned twice!\n\n"
        "- one\n- two\n* three\n1. four\n\n"
        "| a | b |\n|---|:---:|\n| 1 | 2 |\n\n"
        "| c |\n| --- |\n| 3 |\n"
    )
    features = features_of(text)
    words = len(text.split())
    assert features["tables_per_1k"] == pytest.approx(1000 * 2 / words)
    # A new bullet character or a number starts a new list: three lists.
    assert features["lists_per_1k"] == pytest.approx(1000 * 3 / words)
    # Body lines: one prose line and four list items; table rows and headings are left out.
    assert features["bullet_share"] == pytest.approx(4 / 5)
    assert features["bold_per_1k"] == pytest.approx(1000 * 1 / words)
    assert features["sentence_words"] == pytest.approx((5 + 3) / 2)


def test_it_measures_paragraphs_as_the_page_shows_them():
    # One paragraph a line, as the benchmark's reference files are written: three paragraphs, not one.
    text = "# T\n\n" + "word " * 10 + "\n" + "word " * 40 + "\n" + "word " * 25 + "\n\n- a list item is not a paragraph " + "x " * 90 + "\n"
    features = features_of(text)
    assert features["paragraph_median"] == 25
    assert features["paragraph_longest"] == 40


def test_it_counts_bold_and_italic_runs_and_none_with_neutral_emphasis():
    text = "# T\n\nThe **mill** and the __barn__ burned; *twice* said _the_ <i>Gazette</i>, in <b>1901</b>.\n"
    words = len(text.split())
    features = features_of(text)
    assert features["bold_per_1k"] == pytest.approx(1000 * 3 / words)
    assert features["italic_per_1k"] == pytest.approx(1000 * 3 / words)
    neutral = features_of(text, neutral_emphasis=True)
    assert neutral["bold_per_1k"] == neutral["italic_per_1k"] == 0
    assert {k: v for k, v in neutral.items() if k not in EMPHASIS_KEYS} == {k: v for k, v in features.items() if k not in EMPHASIS_KEYS}


def test_it_counts_a_nested_list_as_part_of_its_list_and_finds_the_deepest_heading():
    text = "# T\n\n## A\n\n- one\n  - inner\n- two\n\n#### Deep\n\n1. x\n"
    features = features_of(text)
    assert features["lists_per_1k"] == pytest.approx(1000 * 2 / len(text.split()))
    assert features["heading_depth"] == 4
    assert features_of("# Title only\n\nText.\n")["heading_depth"] == 1


def test_it_returns_every_feature_for_an_empty_text():
    features = features_of("")
    assert set(features) == set(FEATURE_KEYS)
    # No section heading: the title's level, 1. Everything else is zero.
    assert features["heading_depth"] == 1
    assert all(value == 0 for key, value in features.items() if key != "heading_depth")


def test_it_guesses_the_reference_when_only_the_generated_side_numbers_its_headings():
    report = blindness_report(_campaign(topics=30, seed=1, numbered_generated=True))
    g = report.guessability
    assert g.n_articles == 60 and g.n_topics == 30
    assert g.accuracy >= 0.95 and g.low >= 0.85
    assert report.separation[0].key == "numbered_headings"
    agent = next(row for row in report.systems if row.key == "agent")
    assert agent.any_share["numbered_headings"] == 1
    assert agent.giveaways[0].key == "numbered_headings"
    assert agent.tells == {"numbered_headings": 1.0}


@pytest.mark.parametrize("seed", [2, 3])
def test_it_stays_near_chance_when_both_sides_come_from_one_recipe(seed):
    g = blindness_report(_campaign(topics=40, seed=seed, numbered_generated=False)).guessability
    assert 0.3 <= g.accuracy <= 0.7
    assert g.low < 0.5 < g.high


def test_it_gives_the_same_figures_for_the_same_seed():
    samples = _campaign(topics=12, seed=4, numbered_generated=False)
    assert blindness_report(samples, seed=7).as_dict() == blindness_report(samples, seed=7).as_dict()


def test_it_says_not_enough_topics_instead_of_a_number():
    report = blindness_report(_campaign(topics=MIN_TOPICS - 1, seed=5, numbered_generated=True))
    assert report.guessability.accuracy is None
    assert "not enough topics" in report.guessability.text
    assert "not enough topics" in report_markdown(report)


def test_it_reports_the_length_ratio_to_the_reference_of_the_same_topic():
    samples = []
    for t in range(MIN_TOPICS):
        samples.append(Sample(topic=str(t), system="wikipedia", is_reference=True, markdown="word " * 100))
        samples.append(Sample(topic=str(t), system="short", is_reference=False, markdown="word " * (25 + t)))
    short = next(row for row in blindness_report(samples).systems if row.key == "short")
    assert short.length_ratio == pytest.approx(0.265)
    assert short.n_articles == MIN_TOPICS


def test_it_has_no_figure_without_a_reference():
    samples = [Sample(topic=str(t), system=s, is_reference=False, markdown=f"text {t} {s}") for t in range(6) for s in ("a", "b")]
    report = blindness_report(samples)
    assert report.guessability.text == "no reference article"
    assert all(row.guessability is None and row.length_ratio is None for row in report.systems)


def test_it_reports_an_empty_campaign_without_failing():
    report = blindness_report([])
    assert report.guessability.text == "no articles" and report.systems == []
    assert "no articles" in report_markdown(report)


def _bold_reference_campaign(*, topics: int, seed: int) -> list[Sample]:
    """As on the demo: only the reference bolds its subject in the first sentence."""
    rng = random.Random(seed)
    samples = []
    for t in range(topics):
        title = f"Topic {t}"
        reference = _article(rng, title).replace(f"# {title}\n\n", f"# {title}\n\nThe **{title}** is a place. ", 1)
        generated = _article(rng, title).replace(f"# {title}\n\n", f"# {title}\n\nThe {title} is a place. ", 1)
        samples.append(Sample(topic=title, system="wikipedia", is_reference=True, markdown=reference))
        samples.append(Sample(topic=title, system="agent", is_reference=False, markdown=generated))
    return samples


def test_it_reports_guessability_with_and_without_neutral_emphasis():
    samples = _bold_reference_campaign(topics=30, seed=6)
    written = blindness_report(samples)
    assert not written.neutral_emphasis
    assert written.guessability_by_emphasis[AS_WRITTEN] is written.guessability
    assert written.guessability.accuracy >= 0.95 and written.guessability.low >= 0.85
    assert written.separation[0].key == "bold_per_1k"
    # Bold shown as plain text: nothing is left to tell them apart.
    assert written.guessability_by_emphasis[NEUTRAL].low < 0.5
    neutral = blindness_report(samples, neutral_emphasis=True)
    assert neutral.neutral_emphasis
    assert neutral.guessability_by_emphasis[NEUTRAL] is neutral.guessability
    assert neutral.guessability.accuracy == written.guessability_by_emphasis[NEUTRAL].accuracy
    assert neutral.guessability_by_emphasis[AS_WRITTEN].accuracy == written.guessability.accuracy
    assert all(row.means["bold_per_1k"] == 0 for row in neutral.systems)
    data = neutral.as_dict()
    assert data["neutral_emphasis"] is True and set(data["guessability_by_emphasis"]) == {AS_WRITTEN, NEUTRAL}
    assert "text" in data["guessability_by_emphasis"][AS_WRITTEN]
    markdown = report_markdown(neutral)
    assert "With neutral emphasis (bold and italic as plain text) (what this campaign shows):" in markdown
    assert "With emphasis as written:" in markdown


def test_it_gives_every_feature_its_effect_per_system():
    report = blindness_report(_campaign(topics=20, seed=1, numbered_generated=True))
    agent = next(row for row in report.systems if row.key == "agent")
    assert set(agent.effects) == set(FEATURE_KEYS)
    # No reference numbers its headings, every agent article does: the reference scores lower every time.
    assert agent.effects["numbered_headings"] == 0.0
    assert next(row for row in report.systems if row.key == "wikipedia").effects == {}
    assert "| Numbered headings |  | 0.00 |" in report_markdown(report)


def test_it_warns_before_launch_naming_the_leading_features():
    warning = launch_warning(blindness_report(_bold_reference_campaign(topics=30, seed=6)))
    assert warning.startswith("Annotators could tell the reference by its looks: guessability ")
    assert "Leading features: Bold per 1,000 words (higher in the reference, AUC 1.00)" in warning
    assert "With neutral emphasis: " in warning
    # Near chance, or no figure at all: nothing to warn about.
    assert launch_warning(blindness_report(_campaign(topics=40, seed=2, numbered_generated=False))) == ""
    assert launch_warning(blindness_report(_campaign(topics=MIN_TOPICS - 1, seed=5, numbered_generated=True))) == ""


def test_it_measures_self_reference_to_the_task_per_1000_words():
    text = "This report covers the mill. The provided sources say little, as the user knows.\n"
    features = features_of(text)
    # "this report", "provided sources", "the user" in 14 words.
    assert features["self_reference_per_1k"] == pytest.approx(3 * 1000 / 14)
    assert features_of("The mill stood by the river for two centuries.\n")["self_reference_per_1k"] == 0.0
