"""Uploads in the browser (issue 41, item 5): a benchmark (zip or JSON Lines), a rubric, a labels file.

The views run the import commands' readers and services on the uploaded file; these tests check that
they store what the commands store, report what the commands report, name a bad file's lines, write
nothing on a bad labels file, and refuse what is too large or unsafe with a 4xx.
"""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import Article, CriterionSet, Label, Topic
from common.uploads import UploadError, zip_unpacked
from interchange import LABEL_COLUMNS
from tests.helpers import RUBRIC, csv_file, write_wlc
from tests.test_import_labels import label_row

pytestmark = pytest.mark.django_db


def zipped(folder) -> bytes:
    """The folder as a zip, its members named from inside it (as zipping a repository gives)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            archive.write(path, "repo/" + str(path.relative_to(folder)))
    return buffer.getvalue()


def staff_client(client, rachel):
    client.force_login(rachel)
    return client


def test_it_imports_a_benchmark_zip_and_shows_import_wlcs_report(client, rachel, tmp_path):
    data = zipped(write_wlc(tmp_path / "repo"))

    response = staff_client(client, rachel).post(reverse("upload-benchmark"), {"file": SimpleUploadedFile("bench.zip", data)})

    assert response.status_code == 200
    page = response.content.decode()
    assert "benchmark 2025_test: 4 articles found, 2 systems" in page
    assert "topics: 2 new" in page and "articles: 4 new, 0 updated, 0 unchanged" in page
    assert "criterion set: wiki_writing" in page
    assert Topic.objects.count() == 2 and Article.objects.count() == 4


def test_it_answers_htmx_with_the_result_alone(client, rachel, tmp_path):
    data = zipped(write_wlc(tmp_path / "repo"))

    response = staff_client(client, rachel).post(
        reverse("upload-benchmark"), {"file": SimpleUploadedFile("bench.zip", data)}, headers={"HX-Request": "true"}
    )

    assert response.status_code == 200
    page = response.content.decode()
    assert page.lstrip().startswith('<div id="benchmark-result"')
    assert "<html" not in page


def test_it_imports_json_lines_of_articles_named_after_the_file(client, rachel):
    lines = [
        {"topic": "Red Fox", "system": "wikipedia", "reference": True, "markdown": "# Red Fox\n\nA fox."},
        {"topic": "Red Fox", "system": "agent_a", "markdown": "# Red Fox\n\nAnother fox."},
        {"topic": "Red Fox", "system": "agent_b"},
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()

    response = staff_client(client, rachel).post(reverse("upload-benchmark"), {"file": SimpleUploadedFile("foxes.jsonl", body)})

    assert response.status_code == 200
    page = response.content.decode()
    assert "benchmark foxes: 2 articles found" in page
    # The problem names the uploaded file's line, never the server's temporary folder.
    assert "foxes.jsonl:3" in page
    assert "/tmp/" not in page and "pairwise-upload" not in page
    assert Article.objects.count() == 2


def test_it_refuses_a_file_over_the_limit_with_413_and_stores_nothing(client, rachel, tmp_path, settings):
    settings.UPLOAD_MAX_BYTES = 100
    data = zipped(write_wlc(tmp_path / "repo"))

    response = staff_client(client, rachel).post(reverse("upload-benchmark"), {"file": SimpleUploadedFile("bench.zip", data)})

    assert response.status_code == 413
    assert "more than the upload limit" in response.content.decode()
    assert Topic.objects.count() == 0


def test_it_refuses_a_zip_that_is_not_one(client, rachel):
    response = staff_client(client, rachel).post(reverse("upload-benchmark"), {"file": SimpleUploadedFile("bench.zip", b"not a zip")})

    assert response.status_code == 400
    assert "not a zip archive" in response.content.decode()


def test_it_refuses_a_zip_of_another_layout_naming_the_folder_inside_it(client, rachel, tmp_path):
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "readme.txt").write_text("hello", encoding="utf-8")

    response = staff_client(client, rachel).post(
        reverse("upload-benchmark"), {"file": SimpleUploadedFile("bench.zip", zipped(tmp_path / "repo"))}
    )

    assert response.status_code == 400
    assert "pairwise-zip" not in response.content.decode()


def test_it_refuses_another_kind_of_file(client, rachel):
    response = staff_client(client, rachel).post(reverse("upload-benchmark"), {"file": SimpleUploadedFile("bench.tar", b"x")})

    assert response.status_code == 400
    assert "send a .zip" in response.content.decode()


def test_it_refuses_a_post_without_a_file(client, rachel):
    response = staff_client(client, rachel).post(reverse("upload-benchmark"), {})

    assert response.status_code == 400
    assert "Choose a file" in response.content.decode()


def test_it_unpacks_nothing_from_a_zip_reaching_outside_its_folder(tmp_path):
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("../escaped.txt", "x")
    into = tmp_path / "into"
    into.mkdir()

    with pytest.raises(UploadError, match="outside the archive"):
        zip_unpacked(bad, into, max_bytes=10_000, max_members=10)

    assert not (tmp_path / "escaped.txt").exists()
    assert list(into.iterdir()) == []


def test_it_refuses_a_zip_that_unpacks_to_more_than_the_limit(tmp_path):
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("zeros.txt", b"\0" * 200_000)
    into = tmp_path / "into"
    into.mkdir()

    with pytest.raises(UploadError, match="unpacks to"):
        zip_unpacked(bomb, into, max_bytes=100_000, max_members=10)

    assert list(into.iterdir()) == []


def test_it_refuses_a_zip_of_too_many_members(tmp_path):
    many = tmp_path / "many.zip"
    with zipfile.ZipFile(many, "w") as archive:
        for i in range(5):
            archive.writestr(f"f{i}.txt", "x")

    with pytest.raises(UploadError, match="5 members"):
        zip_unpacked(many, tmp_path, max_bytes=10_000, max_members=4)


def test_it_imports_a_rubric_and_then_finds_it_unchanged(client, rachel):
    body = json.dumps(RUBRIC).encode()
    staff = staff_client(client, rachel)

    first = staff.post(reverse("upload-rubric"), {"file": SimpleUploadedFile("house_style.json", body)})
    again = staff.post(reverse("upload-rubric"), {"file": SimpleUploadedFile("house_style.json", body)})

    assert first.status_code == 200 and again.status_code == 200
    assert "criterion set: house_style v1 (new)" in first.content.decode()
    assert "(unchanged)" in again.content.decode()
    assert CriterionSet.objects.filter(key="house_style").count() == 1


def test_it_stores_no_rubric_from_a_bad_file_and_names_its_line(client, rachel):
    response = staff_client(client, rachel).post(
        reverse("upload-rubric"), {"file": SimpleUploadedFile("broken.json", b'{\n"a": 1,\n"b" 2\n}')}
    )

    assert response.status_code == 422
    page = response.content.decode()
    assert "broken.json:3" in page and "Nothing was imported" in page
    assert CriterionSet.objects.count() == 0


def upload_labels(client, campaign, rows, name="labels.csv", tmp_path=None, **extra):
    path = csv_file(tmp_path / name, rows, LABEL_COLUMNS)
    data = {"file": SimpleUploadedFile(name, path.read_bytes()), **extra}
    return client.post(reverse("calibration-labels-upload", args=[campaign.pk]), data)


def test_it_imports_a_labels_file_into_the_campaign(client, rachel, demo_campaign, tmp_path):
    rows = [label_row(), label_row(criterion="ww_cc_2")]

    response = upload_labels(staff_client(client, rachel), demo_campaign, rows, tmp_path=tmp_path)

    assert response.status_code == 200
    assert "labels: 2 new" in response.content.decode()
    assert Label.objects.filter(assignment__annotator__username="ext_rater").count() == 2


def test_it_writes_nothing_from_a_bad_labels_file_and_names_file_and_line(client, rachel, demo_campaign, tmp_path):
    rows = [label_row(), label_row(criterion="ww_cc_2", winner_system="nobody"), label_row(criterion="ww_cc_3")]

    response = upload_labels(staff_client(client, rachel), demo_campaign, rows, tmp_path=tmp_path)

    assert response.status_code == 422
    page = response.content.decode()
    assert "labels.csv:3:" in page and "Nothing was imported: 1 bad row" in page
    assert "/tmp/" not in page
    assert Label.objects.count() == 0


def test_it_refuses_a_labels_file_of_another_kind(client, rachel, demo_campaign):
    response = staff_client(client, rachel).post(
        reverse("calibration-labels-upload", args=[demo_campaign.pk]), {"file": SimpleUploadedFile("labels.txt", b"x")}
    )

    assert response.status_code == 422
    assert "labels.txt: the file name must end in .csv or .jsonl" in response.content.decode()


def test_it_shows_the_limits_on_the_upload_page(client, rachel, settings):
    settings.UPLOAD_MAX_BYTES = 5 * 1_048_576

    response = staff_client(client, rachel).get(reverse("uploads"))

    assert response.status_code == 200
    assert "5.0\xa0MB" in response.content.decode()
