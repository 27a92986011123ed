"""Researchers' reads over the JSON API (staff only; session or token authentication): the labels, the calibration report and the label plan."""

import json
from collections.abc import Iterable, Iterator

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.decorators import api_view, permission_classes, renderer_classes
from rest_framework.permissions import IsAdminUser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from annotate.models import Campaign
from calibration.planner.labels import plan_labels_cached, plan_parameters
from calibration.report.build import report_cached
from calibration.report.options import ReportOptions
from interchange import label_rows


@extend_schema(
    summary="The campaign's labels",
    description="Every decided label in the long format of `export_labels` (human rows, then the judges'), as one JSON array.",
    responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="a JSON array of label rows")},
)
@api_view(["GET"])
@permission_classes([IsAdminUser])
def campaign_labels(request: Request, campaign_id: int) -> StreamingHttpResponse:
    """Every decided label in the long format (`interchange`, as the file export), streamed as one JSON array."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return StreamingHttpResponse(_json_array(label_rows(campaign)), content_type="application/json")


def _json_array(rows: Iterable[dict]) -> Iterator[str]:
    yield "["
    for i, row in enumerate(rows):
        yield ("," if i else "") + "\n" + json.dumps(row, ensure_ascii=False)
    yield "\n]\n"


@extend_schema(
    summary="The calibration report",
    description="The JSON contract of docs/calibration-report.md, default parameters; computed once and shared while the campaign's data stay the same.",
    parameters=[
        OpenApiParameter("swap_policy", str, description="tie (default), half or both"),
        OpenApiParameter("unparsable", str, description="drop (default) or wrong"),
        OpenApiParameter(
            "human_reference",
            str,
            description="the human labels the judge statistics use: majority (default), dawid-skene, mace or exclude-flagged",
        ),
        OpenApiParameter(
            "sensitivity",
            str,
            description="1 to fit Dawid-Skene and MACE for the competence and sensitivity sections under majority too (default 0: not computed)",
        ),
        OpenApiParameter(
            "majority_ties",
            str,
            description="the judges' majority-vote accuracy on tied items: drop (default: left out), half (1/k of k tied labels) or draw (seeded)",
        ),
        OpenApiParameter(
            "category_intervals",
            str,
            description="auto (default: the judges' per-category Bradley-Terry intervals for up to 12 judges) or all",
        ),
    ],
    responses={
        200: OpenApiResponse(OpenApiTypes.OBJECT, description="the report"),
        400: OpenApiResponse(description='{"detail": message} for a bad value'),
    },
)
@api_view(["GET"])
@permission_classes([IsAdminUser])
@renderer_classes([JSONRenderer])
def campaign_calibration(request: Request, campaign_id: int) -> Response:
    """The report of docs/calibration-report.md, default parameters (cached until the campaign's data change).

    Only `?format=json` (or no format) is served here; the dashboard's download
    links give the CSV, Markdown and HTML renderings. `?swap_policy=tie|half|both`
    and `?unparsable=drop|wrong` choose the convention (default: tie, drop); a bad
    value answers 400 with `{"detail": message}`. `?human_reference=majority|dawid-skene|mace|exclude-flagged|adjudicated`
    chooses the human labels the judge statistics are computed against (default: majority);
    `?sensitivity=1` fits the annotator models for the competence and sensitivity sections under majority too;
    `?category_intervals=all` computes the judges' per-category Bradley-Terry intervals whatever their number;
    `?majority_ties=drop|half|draw` chooses how the majority-vote accuracy counts items whose humans tie (default: drop).
    """
    campaign = get_object_or_404(
        Campaign.objects.select_related("criterion_set", "reference_system"),
        pk=campaign_id,
    )
    try:
        # The API's report takes no ensembles (the dashboard's `ensemble=` is not one of its parameters).
        options = ReportOptions.from_query(request.query_params, ensemble_values=[])
    except ValueError as exc:
        return Response({"detail": str(exc)}, status=400)
    return Response(report_cached(campaign, options))


@extend_schema(
    summary="The label plan",
    description="How many more human-labelled pairs the campaign needs (as `plan_labels --format json`).",
    parameters=[
        OpenApiParameter("target", float, description="95% CI half-width to reach (default 0.03)"),
        OpenApiParameter("power", float, description="power for telling the two leading judges apart (default 0.8)"),
        OpenApiParameter("batch", int, description="pairs in the next batch (default 50)"),
        OpenApiParameter("judge", str, description="plan for this judge only"),
    ],
    responses={
        200: OpenApiResponse(OpenApiTypes.OBJECT, description="the plan"),
        400: OpenApiResponse(description='{"detail": message} for a bad value'),
    },
)
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
