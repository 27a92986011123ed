"""Researchers' reads over the JSON API (staff only; session or token authentication): the labels, the calibration report and the label plan."""

import json
from collections.abc import Iterable, Iterator

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from rest_framework.decorators import api_view, permission_classes, renderer_classes
from rest_framework.permissions import IsAdminUser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from annotate.models import Campaign
from calibration.interchange import label_rows
from calibration.planner import plan_labels_cached, plan_parameters
from calibration.report import report_cached


@api_view(["GET"])
@permission_classes([IsAdminUser])
def campaign_labels(request: Request, campaign_id: int) -> StreamingHttpResponse:
    """Every decided label in the long format (`calibration.interchange`, as the file export), streamed as one JSON array."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return StreamingHttpResponse(
        _json_array(label_rows(campaign)), content_type="application/json"
    )


def _json_array(rows: Iterable[dict]) -> Iterator[str]:
    yield "["
    for i, row in enumerate(rows):
        yield ("," if i else "") + "\n" + json.dumps(row, ensure_ascii=False)
    yield "\n]\n"


@api_view(["GET"])
@permission_classes([IsAdminUser])
@renderer_classes([JSONRenderer])
def campaign_calibration(request: Request, campaign_id: int) -> Response:
    """The report of docs/calibration-report.md, default parameters (cached until the campaign's data change).

    Only `?format=json` (or no format) is served here; the dashboard's download
    links give the CSV, Markdown and HTML renderings.
    """
    campaign = get_object_or_404(
        Campaign.objects.select_related("criterion_set", "reference_system"),
        pk=campaign_id,
    )
    return Response(report_cached(campaign))


@api_view(["GET"])
@permission_classes([IsAdminUser])
@renderer_classes([JSONRenderer])
def campaign_plan(request: Request, campaign_id: int) -> Response:
    """The label planner's figures (`plan_labels`): `?target=0.03&power=0.8&batch=50&judge=NAME`, all optional;
    a bad value answers 400 with `{"detail": message}`."""
    campaign = get_object_or_404(Campaign.objects.select_related("criterion_set", "reference_system"), pk=campaign_id)
    try:
        return Response(plan_labels_cached(campaign=campaign, **plan_parameters(request.query_params)))
    except ValueError as exc:
        return Response({"detail": str(exc)}, status=400)
