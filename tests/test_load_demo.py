import pytest
from django.contrib.auth import get_user_model

from annotate.models import Article, CriterionSet, Topic
from tests.helpers import run

pytestmark = pytest.mark.django_db


def test_it_loads_the_demo_and_prints_logins():
    result = run("load_demo")
    assert result.code == 0, result.err
    assert Topic.objects.filter(benchmark="demo").count() == 4
    assert Article.objects.count() == 12
    assert CriterionSet.objects.get(key="wiki_writing").criteria.count() == 39
    assert "researcher / demo-researcher" in result.out
    researcher = get_user_model().objects.get(username="researcher")
    assert researcher.is_staff and researcher.check_password("demo-researcher")
    assert not get_user_model().objects.get(username="annotator1").is_staff


def test_it_can_run_again_without_duplicating_anything():
    run("load_demo")
    again = run("load_demo")
    assert again.code == 0, again.err
    assert (Topic.objects.count(), Article.objects.count(), CriterionSet.objects.count()) == (4, 12, 1)
    assert get_user_model().objects.count() == 3


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
