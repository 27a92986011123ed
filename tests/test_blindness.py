"""The blindness audit's pure logic: surface features and the guessability classifier, no database."""

import random

import pytest

from annotate.blindness import FEATURE_KEYS, MIN_TOPICS, Sample, blindness_report, features_of, report_markdown

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
    assert features["tables"] == 2
    # Body lines: one prose line and four list items; table rows and headings are left out.
    assert features["bullet_share"] == pytest.approx(4 / 5)
    assert features["bold_per_1k"] == pytest.approx(1000 * 1 / len(text.split()))
    assert features["sentence_words"] == pytest.approx((5 + 3) / 2)


def test_it_returns_every_feature_for_an_empty_text():
    features = features_of("")
    assert set(features) == set(FEATURE_KEYS) and all(value == 0 for value in features.values())


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
