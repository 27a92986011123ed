"""The section map (issue 37): sections matched by text, symmetric, stored once, blind on the page."""

import random
import re

import pytest
from django.urls import reverse

from annotate.alignment import Section, align, sections_of
from annotate.alignment_selectors import section_maps
from annotate.models import SectionAlignment
from annotate.rendering import render_html
from annotate.selectors import shown_articles
from annotate.services.alignments import section_alignment_ensure
from annotate.services.claims import assignment_claim_next

FIRST = render_html(
    "The harbour town grew around its fishing fleet and a small shipyard.\n\n"
    "## Early history\n\nMonks founded a priory beside the estuary in the twelfth century; the priory kept the tithe barns "
    "and the mill until the dissolution.\n\n"
    "## Economy\n\nHerring fishing, boat building and later tourism paid the wages of most households; the shipyard "
    "launched trawlers until 1970.\n\n"
    "## Transport\n\nA branch railway reached the quay in 1884 and closed in 1964; buses now run to the county town.\n"
)
SECOND = render_html(
    "## Work and trade\n\nMost households lived from herring fishing and boat building; the shipyard launched trawlers "
    "until 1970, and tourism came later.\n\n"
    "## Origins\n\nThe priory by the estuary, founded by monks in the twelfth century, owned the mill and the tithe barns.\n\n"
    "## Football\n\nThe amateur club plays in blue at a ground behind the church and won the county cup twice.\n"
)


def test_it_matches_sections_by_their_text_when_headings_differ():
    first, second = sections_of(FIRST), sections_of(SECOND)
    assert [s.title for s in first] == ["Opening", "Early history", "Economy", "Transport"]
    result = align(first, second)
    titles = [second[m].title if m is not None else None for m in result.first_to_second]
    assert titles[1:3] == ["Origins", "Work and trade"]
    assert titles[3] is None  # nothing in the second article covers transport
    assert result.second_to_first[2] is None  # nor football in the first


def test_it_gives_the_same_mapping_in_both_orders():
    first, second = sections_of(FIRST), sections_of(SECOND)
    forward, backward = align(first, second), align(second, first)
    assert forward.first_to_second == backward.second_to_first
    assert forward.second_to_first == backward.first_to_second


def test_it_recovers_a_copy_with_sections_shuffled_and_headings_replaced():
    sections = sections_of(FIRST)
    order = list(range(len(sections)))
    random.Random(3).shuffle(order)
    copy = [Section(f"x{k}", f"Part {k}", sections[i].text) for k, i in enumerate(order)]
    result = align(sections, copy)
    assert [order[m] for m in result.first_to_second] == list(range(len(sections)))


def test_it_joins_a_heading_without_prose_to_what_follows_and_a_last_one_to_what_precedes():
    html = render_html("## Chapter\n\n### Part one\n\nEnough words here to stand alone as a section of its own, surely.\n\n## Tail\n")
    sections = sections_of(html)
    assert [(s.anchor, s.title) for s in sections] == [("sec-1", "Chapter › Part one")]


def test_it_matches_nothing_when_one_article_has_no_sections_or_only_stop_words():
    assert align([], sections_of(FIRST)).second_to_first == (None,) * 4
    only = [Section("sec-1", "The", "and the of to it is was")] * 1
    assert align(only, only).first_to_second == (None,)


@pytest.mark.django_db
def test_it_stores_one_alignment_for_two_articles_whatever_the_order(campaign):
    pair = campaign.pairs.first()
    one = section_alignment_ensure(first=pair.article_a, second=pair.article_b)
    other = section_alignment_ensure(first=pair.article_b, second=pair.article_a)
    assert one.pk == other.pk and SectionAlignment.objects.count() == 1
    assert one.first_id < one.second_id
    assert len(one.first_to_second) == len(one.first_sections)


@pytest.mark.django_db
def test_it_shows_the_same_map_for_both_orders_and_no_score(client, campaign, alice, bob):
    pair = campaign.pairs.first()
    alignment = section_alignment_ensure(first=pair.article_a, second=pair.article_b)
    a_left = section_maps(shown=shown_articles(pair, True), alignment=alignment)
    b_left = section_maps(shown=shown_articles(pair, False), alignment=alignment)

    def unprefixed(rows):
        return [
            (
                re.sub(r"^a[12]-", "", r["anchor"]),
                r["title"],
                r["match"] and (re.sub(r"^a[12]-", "", r["match"]["anchor"]), r["match"]["title"]),
            )
            for r in rows
        ]

    # An article's map is the same whichever side it is shown on: the order says nothing.
    assert unprefixed(a_left["1"]) == unprefixed(b_left["2"])
    assert unprefixed(a_left["2"]) == unprefixed(b_left["1"])
    assert set(a_left["1"][0]) == set(a_left["2"][0]) == {"anchor", "title", "match", "other"}

    work = assignment_claim_next(campaign=campaign, user=alice)
    client.force_login(alice)
    html = client.get(reverse("assignment", args=[work.pk])).content.decode()
    maps = re.findall(r'<details class="section-map".*?</details>', html, re.S)
    assert len(maps) == 2
    for block in maps:
        assert not re.search(r"\d\.\d", block)  # no similarity anywhere
        assert "score" not in block.lower() and "similar" not in block.lower()
    # Each map lists every section of its own article, each pointing into the other column.
    for position, block in zip("12", maps):
        other = "2" if position == "1" else "1"
        assert len(re.findall(r'class="map-match"', block)) == len(re.findall(rf'data-match="a{other}-', block))
        assert len(re.findall(r"<li ", block)) == len(re.findall(rf'data-anchor="a{position}-', block)) > 0
