"""Staff upload a benchmark or a rubric in the browser: the import commands' readers and services
on the uploaded file, and the commands' report on the page (docs/how-to/upload-in-the-browser.md)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from annotate.services.catalogue import articles_import, articles_prepare, batch_found_line, criterion_set_import, rubric_read
from annotate.sources import Batch, SourceError, read_jsonl, read_wlc
from common.decorators import staff_required
from common.storable import text_problem
from common.uploads import UploadError, upload_saved, zip_unpacked

PAGE = "annotate/uploads.html"


def _limits() -> dict:
    return {
        "max_bytes": settings.UPLOAD_MAX_BYTES,
        "zip_max_bytes": settings.UPLOAD_ZIP_MAX_BYTES,
        "zip_max_members": settings.UPLOAD_ZIP_MAX_MEMBERS,
        "article_max_bytes": settings.MAX_ARTICLE_BYTES,
    }


def _result(request: HttpRequest, part: str, result: dict, status: int) -> HttpResponse:
    """The form's result: the fragment for htmx, else the whole page with it in place."""
    if request.htmx:
        return render(request, f"{PAGE}#{part}", {part: result, "limits": _limits()}, status=status)
    return render(request, PAGE, {part: result, "limits": _limits()}, status=status)


@require_GET
@staff_required
def uploads(request: HttpRequest) -> HttpResponse:
    return render(request, PAGE, {"limits": _limits()})


def _optional_name(request: HttpRequest, field: str) -> tuple[str | None, str | None]:
    value = request.POST.get(field, "").strip()
    if value and text_problem(value):
        return None, f"The {field} is not valid UTF-8 text."
    return value or None, None


def _benchmark_batch(path: Path, benchmark: str | None) -> tuple[Batch, tuple[str, ...]]:
    """The batch of an uploaded file (a zip in the benchmark's layout, or JSON Lines of articles), and the
    temporary folders its messages may name, to be left out: a person knows the files by the upload's names."""
    if path.suffix.lower() == ".zip":
        with tempfile.TemporaryDirectory(prefix="pairwise-zip-") as folder:
            root = zip_unpacked(path, Path(folder), max_bytes=settings.UPLOAD_ZIP_MAX_BYTES, max_members=settings.UPLOAD_ZIP_MAX_MEMBERS)
            # read_wlc reads every file before it returns: the folder may go afterwards.
            try:
                return read_wlc(root, benchmark=benchmark, max_bytes=settings.MAX_ARTICLE_BYTES), (folder + "/",)
            except SourceError as exc:
                raise SourceError(_unprefixed(str(exc), (folder + "/",))) from exc
    if path.suffix.lower() == ".jsonl":
        try:
            batch = read_jsonl(path, max_bytes=settings.MAX_ARTICLE_BYTES)
        except SourceError as exc:
            raise SourceError(_unprefixed(str(exc), (f"{path.parent}/",))) from exc
        if benchmark:
            batch.benchmark = benchmark
        return batch, (f"{path.parent}/",)
    raise UploadError(f"{path.name}: send a .zip in the benchmark's layout or a .jsonl of articles")


def _unprefixed(text: str, prefixes: tuple[str, ...]) -> str:
    for prefix in prefixes:
        text = text.replace(prefix, "")
    return text


@require_POST
@staff_required
def benchmark_upload(request: HttpRequest) -> HttpResponse:
    """Imports a benchmark as import_wlc (a zip) or import_articles (JSON Lines) would, and shows their report."""
    upload = request.FILES.get("file")
    if upload is None:
        return _result(request, "benchmark", {"errors": ["Choose a file to upload."]}, 400)
    benchmark, problem = _optional_name(request, "benchmark")
    if problem:
        return _result(request, "benchmark", {"errors": [problem]}, 400)
    started = time.perf_counter()
    try:
        with upload_saved(upload.chunks(), name=upload.name, size=upload.size, max_bytes=settings.UPLOAD_MAX_BYTES) as path:
            batch, temporary = _benchmark_batch(path, benchmark)
    except UploadError as exc:
        status = 413 if upload.size > settings.UPLOAD_MAX_BYTES else 400
        return _result(request, "benchmark", {"errors": [str(exc)]}, status)
    except SourceError as exc:
        return _result(request, "benchmark", {"errors": [str(exc)]}, 400)
    found = batch_found_line(batch)
    summary = articles_import(batch=batch, replace=request.POST.get("replace") == "1", prepared=articles_prepare(batch.articles))
    result = {
        "name": upload.name,
        "lines": [found, *summary.report_lines(time.perf_counter() - started)],
        "problems": [_unprefixed(str(problem), temporary) for problem in summary.problems],
    }
    return _result(request, "benchmark", result, 200)


@require_POST
@staff_required
def rubric_upload(request: HttpRequest) -> HttpResponse:
    """Imports a rubric as import_criteria would: changed text becomes a new version, a bad file stores nothing."""
    upload = request.FILES.get("file")
    if upload is None:
        return _result(request, "rubric", {"errors": ["Choose a file to upload."]}, 400)
    key, problem = _optional_name(request, "key")
    if problem:
        return _result(request, "rubric", {"errors": [problem]}, 400)
    try:
        with upload_saved(upload.chunks(), name=upload.name, size=upload.size, max_bytes=settings.UPLOAD_MAX_BYTES) as path:
            rubric, problems = rubric_read(path, key=key)
    except UploadError as exc:
        return _result(request, "rubric", {"errors": [str(exc)]}, 413)
    if problems:
        # The readers name the temporary file; the person sent the upload's name.
        where = [_unprefixed(str(problem), (f"{path.parent}/",)) for problem in problems]
        return _result(request, "rubric", {"errors": where, "not_imported": True}, 422)
    criterion_set, created = criterion_set_import(rubric=rubric)
    state = "new" if created else "unchanged"
    line = f"criterion set: {criterion_set} ({state}), {rubric.criterion_count} criteria in {len(rubric.categories)} categories"
    return _result(request, "rubric", {"name": upload.name, "lines": [line]}, 200)
