"""annotate.gold: degraded copies of a reference article for known-answer pairs. Each degradation
does what it says, keeps the rest of the text, never leaves an article without prose, and says so
when it cannot apply."""

import json
from collections import Counter

import pytest

from annotate.cleaning import clean_article
from annotate.gold import DEGRADATIONS, OPINIONS, TARGETS, CannotDegrade, degrade, gold_copies, targets_for
from tests.conftest import FIXTURES


def demo_articles():
    """The demo's articles as annotators see them (cleaned as the importer cleans them)."""
    out = []
    for line in (FIXTURES / "demo" / "articles.jsonl").read_text(encoding="utf-8").splitlines():
        a = json.loads(line)
        out.append((f"{a['topic']} / {a['system']}", clean_article(a["markdown"], a["topic"], is_reference=a["reference"])))
    return out


DEMO = demo_articles()
REFERENCE = DEMO[0][1]  # Willow Creek Lighthouse, the reference


def rubric_ids(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    ids = []
    for category in data["categories"]:
        ids += [c["id"] for c in category.get("criteria", [])]
        for sub in category.get("subcategories", []):
            ids += [c["id"] for c in sub["criteria"]]
    return ids


def headings(text):
    return [x for x in text.splitlines() if x.startswith("#")]


def prose_lines(text):
    return [x for x in text.splitlines() if x.strip() and not x.startswith("#") and not x.lstrip().startswith(("|", "-", "*", ">"))]


def sample_articles(sample_path):
    folder = sample_path / "data" / "2025_Mar_Nov" / "wiki_data" / "cleaned_data" / "article"
    return [(p.name, p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.md"))]


def test_it_targets_only_criteria_of_the_projects_rubric():
    ids = set(rubric_ids(FIXTURES / "criteria" / "wiki_writing.json"))
    assert len(ids) == 39
    assert [t.degradation for t in TARGETS] == list(DEGRADATIONS)
    for t in TARGETS:
        assert t.criteria and set(t.criteria) <= ids, t
    assert targets_for("lead_removed", ["ww_ls_1", "bc_2", "n_1"]) == ("ww_ls_1", "bc_2")
    with pytest.raises(ValueError, match="unknown degradation"):
        targets_for("all_caps")


def test_it_targets_the_same_keys_in_the_benchmarks_rubric(sample_path):
    ids = set(rubric_ids(sample_path / "evaluation" / "data" / "wiki_writing_criteria.json"))
    assert all(set(t.criteria) <= ids for t in TARGETS)


def test_it_removes_the_lead_and_nothing_else():
    d = degrade(REFERENCE, "lead_removed", criteria=rubric_ids(FIXTURES / "criteria" / "wiki_writing.json"))
    original = REFERENCE.splitlines()
    lead = original[2]
    assert lead.startswith("The **Willow Creek Lighthouse** is")
    assert lead not in d.markdown
    assert d.markdown.splitlines() == original[:2] + original[original.index("## History") :]
    assert d.targets == ("ww_ls_1", "ww_ls_2", "ww_ls_4", "bc_2", "bc_6")
    assert d.change.startswith("removed the lead")


def test_it_adds_opinions_in_the_articles_voice_at_the_end_of_paragraphs():
    d = degrade(REFERENCE, "opinion_inserted", seed=4)
    before, after = REFERENCE.splitlines(), d.markdown.splitlines()
    assert len(before) == len(after)
    changed = [(x, y) for x, y in zip(before, after) if x != y]
    assert len(changed) == 2
    sentences = [s.format(subject="Willow Creek Lighthouse", Subject="Willow Creek Lighthouse") for s in OPINIONS]
    for x, y in changed:
        assert y.startswith(x + " ") and y[len(x) + 1 :] in sentences
    assert set(d.targets) == {"ww_wtw_1", "ww_wtw_5", "n_1", "n_2", "n_5"}


def test_it_shuffles_paragraphs_across_sections_and_keeps_every_line():
    d = degrade(REFERENCE, "paragraphs_shuffled", seed=2)
    before, after = REFERENCE.splitlines(), d.markdown.splitlines()
    assert Counter(before) == Counter(after) and before != after
    assert [i for i, x in enumerate(before) if x.startswith("#")] == [i for i, x in enumerate(after) if x.startswith("#")]
    assert before[:4] == after[:4]  # the title and the lead stay

    def section_of(lines):
        out, current = {}, None
        for x in lines:
            if x.startswith("## "):
                current = x
            elif x.strip() and current:
                out[x] = current
        return out

    old, new = section_of(before), section_of(after)
    moved = [x for x in old if x in prose_lines(REFERENCE) and not x.endswith(":") and old[x] != new[x]]
    assert len(moved) >= 3, d.change
    assert "Principal keepers were:" in old and old["Principal keepers were:"] == new["Principal keepers were:"]  # stays with its list
    assert d.targets == ("bc_7",)


def test_it_misspells_words_and_runs_sentences_on_in_the_prose_only():
    d = degrade(REFERENCE, "prose_damaged", seed=1)
    before, after = REFERENCE.splitlines(), d.markdown.splitlines()
    assert len(before) == len(after)
    changed = [(x, y) for x, y in zip(before, after) if x != y]
    assert changed and all(x in prose_lines(REFERENCE) for x, _ in changed)  # headings, lists, tables untouched
    words_before = [w for x, _ in changed for w in x.split()]
    words_after = [w for _, y in changed for w in y.split()]
    assert len(words_before) == len(words_after)  # a typo or a run-on never adds or drops a word
    typos = sum(
        a.strip(".,") != b.strip(".,") and a.lower().strip(".,") != b.lower().strip(".,") for a, b in zip(words_before, words_after)
    )
    stops_before = sum(x.count(". ") for x, _ in changed)
    stops_after = sum(y.count(". ") for _, y in changed)
    assert typos >= 5 and stops_after <= stops_before - 2, d.change
    assert d.change.startswith("misspelt") and d.targets == ("ww_cc_1",)


def test_it_removes_one_major_section_whole():
    d = degrade(REFERENCE, "section_removed", seed=0)
    before, after = REFERENCE.splitlines(), d.markdown.splitlines()
    gone = [h for h in headings(REFERENCE) if h not in after]
    assert len(gone) == 1 and gone[0].startswith("## ")
    start = before.index(gone[0])
    end = next((i for i in range(start + 1, len(before)) if before[i].startswith("## ")), len(before))
    expected = before[:start] + before[end:]
    while expected[-1] == "":  # removing the last section leaves the blank line above it as the end of the text
        expected.pop()
    assert after == expected and d.markdown.endswith("\n")
    assert set(d.targets) == {"bc_1", "bc_3"}


@pytest.mark.parametrize("name, markdown", DEMO, ids=[n for n, _ in DEMO])
def test_it_degrades_every_demo_article_five_ways_without_emptying_it(name, markdown):
    made, skipped = gold_copies(markdown, seed=7)
    assert skipped == [] and [d.degradation for d in made] == list(DEGRADATIONS)
    for d in made:
        assert d.markdown != markdown and prose_lines(d.markdown), d.degradation
        assert d.markdown.splitlines()[0] == markdown.splitlines()[0]  # the title stays


def test_it_is_deterministic_for_a_seed_and_varies_with_it():
    for kind in DEGRADATIONS:
        assert degrade(REFERENCE, kind, seed=3) == degrade(REFERENCE, kind, seed=3)
    for kind in ("opinion_inserted", "paragraphs_shuffled", "prose_damaged"):
        assert len({degrade(REFERENCE, kind, seed=s).markdown for s in range(6)}) > 1, kind


def test_it_says_when_a_degradation_cannot_apply():
    no_lead = "# Tide mills\n\n## History\nThe first tide mills stood on estuaries in the eighth century.\n\n## Design\nA dam held the rising tide.\n"
    with pytest.raises(CannotDegrade, match="no lead section"):
        degrade(no_lead, "lead_removed")
    one_section = "# Tide mills\n\nA tide mill is a water mill driven by the tide.\n\n## History\nThe first ones stood on estuaries.\n"
    for kind in ("section_removed", "paragraphs_shuffled"):
        with pytest.raises(CannotDegrade) as caught:
            degrade(one_section, kind)
        assert "section" in caught.value.reason
    all_lead = "# Tide mills\n\nA tide mill is a water mill driven by the tide.\n"
    with pytest.raises(CannotDegrade, match="all lead"):
        degrade(all_lead, "lead_removed")
    with pytest.raises(CannotDegrade, match="too little prose"):
        degrade(all_lead, "prose_damaged")
    with pytest.raises(CannotDegrade, match="empty"):
        degrade("  \n", "opinion_inserted")
    with pytest.raises(CannotDegrade, match="none of the criteria"):
        degrade(REFERENCE, "lead_removed", criteria=["accuracy_1"])
    made, skipped = gold_copies(one_section)
    assert {d.degradation for d in made} | {k for k, _ in skipped} == set(DEGRADATIONS)
    assert dict(skipped)["section_removed"].startswith("the article has a single section")


def test_it_leaves_appendix_sections_alone():
    article = (
        "# Tide mills\n\nA tide mill is a water mill driven by the rise and fall of the tide, common in Europe.\n\n"
        "## History\nThe first ones stood on estuaries in the early Middle Ages. Many were built later.\n\n"
        "## References\nSmith, J. A history of tide mills and their many uses along the coasts. Harbour Press.\n"
    )
    with pytest.raises(CannotDegrade):
        degrade(article, "section_removed")  # the references are no aspect of the subject
    d = degrade(article, "opinion_inserted", seed=0)
    assert d.markdown.splitlines()[-1].startswith("Smith, J.") and d.markdown.splitlines()[-1].endswith("Harbour Press.")


def test_it_degrades_the_benchmarks_reference_articles(sample_path):
    articles = sample_articles(sample_path)
    assert articles
    for name, markdown in articles:
        made, skipped = gold_copies(markdown, seed=1)
        assert skipped == [], (name, skipped)
        for d in made:
            assert prose_lines(d.markdown), (name, d.degradation)
            if d.degradation in ("opinion_inserted", "paragraphs_shuffled", "prose_damaged"):
                assert len(d.markdown.splitlines()) == len(markdown.splitlines()), (name, d.degradation)
                assert headings(d.markdown) == headings(markdown)
            else:
                assert set(d.markdown.splitlines()) < set(markdown.splitlines()), (name, d.degradation)
