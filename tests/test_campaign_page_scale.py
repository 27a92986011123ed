"""The campaign page of a big campaign, and its labels for staff on the web (issue 21, items 5 and 6).

A campaign of tens of thousands of imported pairs showed every pair on one page (3.2 MB for
27k pairs): the page now shows totals and one page of pairs and of annotators at a time, so
its size does not grow with the campaign. The labels, as `export_labels` writes them, are a
download for staff on the same page.
"""

import pytest
from django.urls import reverse

from tests.helpers import run
from tests.test_export_labels import choose, claim, finish
from tests.test_import_any_group import votes, write

pytestmark = pytest.mark.django_db


def crowd(tmp_path, battles: int, name: str = "crowd"):
    from annotate.models import Campaign

    assert run("create_campaign", "--name", name, "--labels-only").code == 0
    rows = [{**row, "campaign": name} for row in votes(battles)]
    assert run("import_labels", "--campaign", name, str(write(tmp_path / f"{name}.csv", rows))).code == 0
    return Campaign.objects.get(name=name)


def test_it_shows_a_page_of_pairs_whatever_the_campaigns_size(client, rachel, tmp_path, django_assert_max_num_queries):
    small, big = crowd(tmp_path, 150, "small"), crowd(tmp_path, 600, "big")
    client.force_login(rachel)

    with django_assert_max_num_queries(12):
        response = client.get(reverse("campaign-detail", args=[big.pk]))

    assert response.status_code == 200
    html = response.content.decode()
    assert "1200</strong> imported assignments on 600 pairs" in html
    assert html.count("/ 1</td>") == 100  # one page of pairs
    assert "1–100 of 600" in html and "page 1 of 6" in html
    size_small = len(client.get(reverse("campaign-detail", args=[small.pk])).content)
    assert abs(len(response.content) - size_small) < 2_000  # four times the pairs, the same page


def test_it_turns_the_pages_with_and_without_javascript(client, rachel, tmp_path):
    campaign = crowd(tmp_path, 250)
    client.force_login(rachel)
    url = reverse("campaign-detail", args=[campaign.pk])

    last = client.get(url, {"pairs": 3})
    assert "201–250 of 250" in last.content.decode() and "<h1>" in last.content.decode()
    assert "201–250 of 250" in client.get(url, {"pairs": 99}).content.decode()  # past the end: the last page
    fragment = client.get(url, {"pairs": 2}, headers={"HX-Request": "true", "HX-Target": "pairs"})
    body = fragment.content.decode()
    assert fragment.status_code == 200
    assert body.lstrip().startswith('<section id="pairs">') and "<h1>" not in body
    assert "101–200 of 250" in body


def test_it_lets_staff_download_the_labels_exactly_as_export_labels_writes_them(client, rachel, alice, demo_campaign, tmp_path):
    first = claim(demo_campaign, "annotator1", a_first=True)
    choose(first, "ww_cc_1", "2", rationale='=HYPERLINK("x") is not a formula here')
    finish(first, overall="1")
    claim(demo_campaign, "annotator2", a_first=False)  # in progress, nothing chosen yet
    client.force_login(rachel)
    page = client.get(reverse("campaign-detail", args=[demo_campaign.pk])).content.decode()
    for fmt in ("csv", "jsonl"):
        url = reverse("calibration-labels", args=[demo_campaign.pk, fmt])
        assert f'href="{url}"' in page
        response = client.get(url)
        assert response.status_code == 200
        assert response["Content-Disposition"] == f'attachment; filename="labels-Demo-campaign.{fmt}"'
        out = tmp_path / f"labels.{fmt}"
        assert run("export_labels", "--campaign", "Demo campaign", "--out", str(out)).code == 0
        assert b"".join(response.streaming_content) == out.read_bytes()


def test_it_answers_404_for_a_labels_format_it_does_not_write(client, rachel, demo_campaign):
    client.force_login(rachel)
    assert client.get(reverse("calibration-labels", args=[demo_campaign.pk, "xlsx"])).status_code == 404
