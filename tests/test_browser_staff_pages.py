"""In a real browser (Debian's Chromium, the live server), issue 41's staff pages: uploads of a benchmark
zip, a rubric and labels files (a bad one first), the gold rate set after creation, and the dashboard's
summary, table of contents and no page-wide sideways scroll at 1,280 and 390 px."""

import json
import re

import pytest

from annotate.models import Campaign, CampaignSettingChange, CriterionSet, Label, Topic
from interchange import LABEL_COLUMNS
from tests.helpers import RUBRIC, csv_file, write_wlc
from tests.test_browser import CHROMIUM, browser, live_demo, log_in, page  # noqa: F401 (fixtures)
from tests.test_import_labels import label_row
from tests.test_uploads import zipped

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
IDLE = "() => window.__inflight === 0"


def upload(page, form: str, path, result: str, text: str) -> None:
    """Chooses `path` in the form's file field, sends it (htmx), and waits for `text` in the result."""
    page.locator(f"{form} input[type=file]").set_input_files(str(path))
    page.locator(form).get_by_role("button", name="Upload and import").click()
    page.wait_for_function(IDLE)
    page.locator(result).get_by_text(text).first.wait_for()


def test_it_uploads_a_benchmark_a_rubric_and_labels_and_sets_the_gold_rate(page, live_demo, tmp_path):  # noqa: F811
    log_in(page, "researcher", "demo-researcher")
    page.get_by_role("link", name="Upload").click()
    page.wait_for_url(re.compile(r"/uploads/$"))
    assert "UPLOAD_MAX_BYTES" in page.locator("#upload-limits").inner_text()

    bench = tmp_path / "bench.zip"
    bench.write_bytes(zipped(write_wlc(tmp_path / "repo")))
    upload(page, "#benchmark-upload form", bench, "#benchmark-result", "articles: 4 new, 0 updated, 0 unchanged")
    report = page.locator("#benchmark-result").inner_text()
    assert "benchmark 2025_test: 4 articles found, 2 systems" in report and "markdown:" in report
    assert page.locator("#benchmark-upload .upload-progress").is_hidden()  # the bar goes once the answer is in
    assert Topic.objects.filter(title="Red Fox").exists()

    rubric = tmp_path / "house_style.json"
    rubric.write_text(json.dumps(RUBRIC), encoding="utf-8")
    upload(page, "#rubric-upload form", rubric, "#rubric-result", "criterion set: house_style v1 (new)")
    assert CriterionSet.objects.filter(key="house_style").exists()

    campaign = Campaign.objects.get(name="Demo campaign")
    page.goto(f"/campaigns/{campaign.pk}/")
    page.get_by_role("link", name="Upload labels").click()
    page.wait_for_url(re.compile(r"/labels/upload/$"))
    bad = csv_file(tmp_path / "labels.csv", [label_row(), label_row(criterion="ww_cc_2", winner_system="nobody")], LABEL_COLUMNS)
    upload(page, "form.upload-form", bad, "#labels-result", "Nothing was imported: 1 bad row")
    assert "labels.csv:3:" in page.locator("#labels-result").inner_text()
    assert not Label.objects.filter(assignment__annotator__username="ext_rater").exists()

    good = csv_file(tmp_path / "labels.csv", [label_row(), label_row(criterion="ww_cc_2")], LABEL_COLUMNS)
    upload(page, "form.upload-form", good, "#labels-result", "labels: 2 new")
    assert Label.objects.filter(assignment__annotator__username="ext_rater").count() == 2

    page.goto(f"/campaigns/{campaign.pk}/")
    page.locator("#settings-link").click()
    page.wait_for_url(re.compile(r"/settings/$"))
    page.get_by_label("Gold rate").fill("0.1")
    page.get_by_role("button", name="Save the settings").click()
    page.get_by_text("Changed: gold rate 0.0 → 0.1.").wait_for()
    campaign.refresh_from_db()
    assert campaign.gold_rate == 0.1
    assert page.locator("#settings-history tbody tr").count() == 1
    assert CampaignSettingChange.objects.get(campaign=campaign).changed_by.username == "researcher"


@pytest.mark.parametrize("width", [1280, 390])
def test_it_shows_the_dashboards_summary_and_contents_without_sideways_scroll(page, live_demo, settings, width):  # noqa: F811
    settings.CALIBRATION_ROUNDS = 20
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, "researcher", "demo-researcher")
    campaign = Campaign.objects.get(name="Demo campaign")
    page.goto(f"/calibration/campaign/{campaign.pk}/")

    summary = page.locator("#summary")
    summary.wait_for()
    assert "Human ceiling" in summary.inner_text() and "Cost" in summary.inner_text()
    toc = page.locator("#toc")
    assert toc.is_visible() and toc.locator("a").count() >= 8
    widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], f"the page scrolls sideways at {width} px: {widths}"

    # A closed section opens from its entry in the contents, and still nothing scrolls the page sideways.
    section = page.locator("#section-rankings")
    if section.count():
        assert not section.evaluate("details => details.open")
        page.locator('#toc a[href="#section-rankings"]').click()
        page.wait_for_function("() => document.getElementById('section-rankings').open")
        widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert widths[0] <= widths[1], f"an opened section scrolls the page sideways at {width} px: {widths}"
        section.locator("summary").click()  # and closes again from its heading
        assert not section.evaluate("details => details.open")
