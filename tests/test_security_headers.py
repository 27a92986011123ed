"""The Content-Security-Policy header on every kind of response, the report download's own policy, and the charts' CSS turned into attributes.
The browser side (no violation on any page) is tests/test_browser_csp.py."""

import base64
import hashlib
import re

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from calibration.charts import presentation_attributes
from calibration.report.formats import html_policy

pytestmark = pytest.mark.django_db


def directives(header: str) -> dict[str, str]:
    return dict(part.strip().split(" ", 1) if " " in part.strip() else (part.strip(), "") for part in header.split(";") if part.strip())


def test_it_sends_the_policy_with_pages_errors_and_api_answers(client, alice, rachel):
    responses = [client.get(reverse("login")), client.get("/no-such-page/")]
    client.force_login(alice)
    responses += [client.get(reverse("home")), client.get(reverse("campaign-list"))]
    api = APIClient()
    api.force_login(rachel)
    responses.append(api.get(reverse("api:campaign-list")))
    assert [r.status_code for r in responses] == [200, 404, 200, 403, 200]
    for response in responses:
        policy = directives(response["Content-Security-Policy"])
        assert policy["default-src"] == "'self'"
        # A nonce only where the page used one (every page built on base.html does).
        assert re.fullmatch(r"'self'( 'nonce-[\w-]+')?", policy["script-src"]) and re.fullmatch(
            r"'self'( 'nonce-[\w-]+')?", policy["style-src"]
        )
        assert (policy["object-src"], policy["base-uri"], policy["frame-ancestors"], policy["form-action"]) == (
            "'none'",
            "'none'",
            "'none'",
            "'self'",
        )
        assert "unsafe" not in response["Content-Security-Policy"]


def test_it_puts_no_inline_script_or_style_in_the_base_page(client, alice):
    client.force_login(alice)
    page = client.get(reverse("home")).content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page)
    assert "<style" not in page and " style=" not in page
    assert '"includeIndicatorStyles":false' in page and '"allowEval":false' in page


def test_it_gives_the_downloaded_report_a_policy_of_its_own(client, rachel, calibration_campaign):
    client.force_login(rachel)
    response = client.get(reverse("calibration-download", args=[calibration_campaign.pk, "html"]))
    assert response.status_code == 200 and response["Content-Disposition"].startswith("attachment")
    body = response.content.decode()
    (style,) = re.findall(r"<style>(.*?)</style>", body, flags=re.S)
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    policy = directives(response["Content-Security-Policy"])
    assert policy == {
        "default-src": "'none'", "style-src": f"'sha256-{digest}'", "img-src": "data:", "base-uri": "'none'",
        "form-action": "'none'", "frame-ancestors": "'none'", "sandbox": "",
    }  # fmt: skip
    assert "<script" not in body and " style=" not in body
    # The other formats are not pages: the site's policy is enough.
    assert "sandbox" not in client.get(reverse("calibration-download", args=[calibration_campaign.pk, "json"]))["Content-Security-Policy"]


def test_it_allows_no_style_when_a_report_has_none():
    assert "style-src 'none'" in html_policy("<p>bare</p>")


def test_it_writes_chart_css_as_presentation_attributes():
    svg = (
        '<svg viewBox="0 0 1 1"><defs><style type="text/css">*{stroke-linejoin: round; stroke-linecap: butt}</style></defs>'
        '<path d="M0" fill="red" style="fill: #ffffff; stroke: #000; stroke-width: 0.8"/>'
        '<text x="1" style="font-size: 10px; font-family: &apos;DejaVu Sans&apos;, sans-serif; text-anchor: end">a</text>'
        '<g style="mix-blend-mode: multiply; opacity: 0.5"></g></svg>'
    )
    assert presentation_attributes(svg) == (
        '<svg stroke-linejoin="round" stroke-linecap="butt" viewBox="0 0 1 1">'
        '<path d="M0" fill="#ffffff" stroke="#000" stroke-width="0.8"/>'
        '<text x="1" font-size="10px" font-family="&apos;DejaVu Sans&apos;, sans-serif" text-anchor="end">a</text>'
        # No attribute for this one: it stays CSS, and the browser test would report it blocked.
        '<g opacity="0.5" style="mix-blend-mode: multiply"></g></svg>'
    )


def test_it_keeps_a_style_element_it_cannot_turn_into_attributes():
    svg = '<svg><defs><style type="text/css">path{fill: red}</style></defs><path d="M0"/></svg>'
    assert presentation_attributes(svg) == svg


def test_it_leaves_the_admin_its_nonce(client, rachel):
    rachel.is_superuser = True
    rachel.save()
    client.force_login(rachel)
    response = client.get("/admin/annotate/campaign/")
    nonce = re.search(r"'nonce-([\w-]+)'", response["Content-Security-Policy"]).group(1)
    assert f'nonce="{nonce}"' in response.content.decode()


def test_it_draws_a_fresh_nonce_for_every_response(client):
    first, second = (re.search(r"'nonce-([\w-]+)'", Client().get(reverse("login"))["Content-Security-Policy"]).group(1) for _ in range(2))
    assert first != second
