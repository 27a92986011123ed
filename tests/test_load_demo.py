import pytest
from django.contrib.auth import get_user_model

from annotate.models import Article, CriterionSet, GoldPair, Label, Topic
from tests.helpers import run

pytestmark = pytest.mark.django_db


def test_it_loads_the_demo_and_prints_logins():
    result = run("load_demo")
    assert result.code == 0, result.err
    assert Topic.objects.filter(benchmark="demo").count() == 4
    assert Article.objects.filter(topic__benchmark="demo").exclude(system__key__startswith="gold-").count() == 12
    assert Article.objects.filter(topic__benchmark="demo", system__key__startswith="gold-").count() == 5  # gold copies
    # The simulated study: text-less placeholders of its own benchmark, its raters inactive.
    assert Article.objects.filter(topic__benchmark="labels-only:Demo study").count() == 60
    assert get_user_model().objects.filter(username__startswith="sim_rater", is_active=False).count() == 4
    assert "Campaign 'Demo study' holds simulated labels: 4 annotators on 40 pairs" in result.out
    assert CriterionSet.objects.get(key="wiki_writing").criteria.count() == 39
    assert "researcher / demo-researcher" in result.out
    researcher = get_user_model().objects.get(username="researcher")
    assert researcher.is_staff and researcher.check_password("demo-researcher")
    assert not get_user_model().objects.get(username="annotator1").is_staff


def test_it_can_run_again_without_duplicating_anything():
    run("load_demo")
    again = run("load_demo")
    assert again.code == 0, again.err
    assert (Topic.objects.count(), Article.objects.count(), CriterionSet.objects.count()) == (4 + 20, 12 + 60 + 5, 1)
    assert get_user_model().objects.count() == 3 + 4
    assert Label.objects.filter(assignment__pair__campaign__name="Demo study").count() == 1280
    assert GoldPair.objects.filter(pair__campaign__name="Demo campaign").count() == 5


def test_it_strips_every_citation_form_from_the_demo():
    run("load_demo")
    for article in Article.objects.all():
        shown = article.display_markdown + article.html
        for marker in [
            "http",
            "www.",
            "example.org",
            "【",
            "<sup>",
            "[1]",
            "[^",
            "References",
            "Bibliography",
            "Further reading",
            "URL Source",
        ]:
            assert marker not in shown, (article, marker)
    quote = Article.objects.filter(raw_markdown__contains="[sic]").get()
    assert "[sic]" in quote.display_markdown
