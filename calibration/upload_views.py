"""Staff upload a labels file into a campaign in the browser: import_labels' reader and service, and
its report. A file with any bad row writes nothing; each problem names the file and its line."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_http_methods

from annotate.models import Campaign
from calibration.tasks import report_warm_task
from common.decorators import staff_required
from common.uploads import UploadError, upload_saved
from interchange import LABEL_COLUMNS, LabelsFileError, labels_import, rows_read

PAGE = "calibration/labels_upload.html"


@require_http_methods(["GET", "POST"])
@staff_required
def labels_upload(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    context = {"campaign": campaign, "max_bytes": settings.UPLOAD_MAX_BYTES}
    if request.method == "GET":
        return render(request, PAGE, context)
    result, status = _imported(request, campaign)
    context["result"] = result
    return render(request, f"{PAGE}#result" if request.htmx else PAGE, context, status=status)


def _imported(request: HttpRequest, campaign: Campaign) -> tuple[dict, int]:
    upload = request.FILES.get("file")
    if upload is None:
        return {"errors": ["Choose a labels file (.csv or .jsonl) to upload."]}, 400
    try:
        with upload_saved(upload.chunks(), name=upload.name, size=upload.size, max_bytes=settings.UPLOAD_MAX_BYTES) as path:
            try:
                labels = rows_read(path, columns=LABEL_COLUMNS)
            except LabelsFileError as exc:
                return {"errors": [str(exc).replace(str(path), upload.name)], "nothing": True}, 422
            # Problems name the file as the person knows it.
            labels.name = upload.name
            report = labels_import(campaign=campaign, labels=labels, skip_bad=False, order_unknown=request.POST.get("order_unknown") == "1")
    except UploadError as exc:
        return {"errors": [str(exc)], "nothing": True}, 413
    problems = [str(problem) for problem in report.problems]
    if not report.imported:
        return {"name": upload.name, "errors": problems, "bad_rows": report.bad_rows, "nothing": True}, 422
    if report.changed:
        # As import_labels does: the task worker computes the dashboard's report now.
        report_warm_task.enqueue(campaign.pk)
    return {"name": upload.name, "lines": report.lines()}, 200
