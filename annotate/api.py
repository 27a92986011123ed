"""JSON API for annotators and researchers: thin views over the same services and selectors as the pages.

Session or token authentication (settings.REST_FRAMEWORK); DRF turns Django's
PermissionDenied into 403 and Http404 into 404, and `common.api_errors` a service's
ValidationError into 400 with its messages. Annotators only ever see their
own work, with the two articles named by position.
"""

from __future__ import annotations

from collections import Counter

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response

from annotate import reading_selectors, selectors
from annotate.answers import CANNOT_JUDGE, Rules
from annotate.kinds import criterion_kind
from annotate.models import Assignment, Campaign, Criterion, Item
from annotate.serializers import (
    AnnotatorCampaignSerializer,
    AssignmentPageSerializer,
    AssignmentSummarySerializer,
    CampaignStaffSerializer,
    CriterionRowSerializer,
    LabelInputSerializer,
    OverallInputSerializer,
    answer_row,
    campaign_progress_data,
    criterion_row,
    error_messages,
)
from annotate.services import answers, claims, labelling


def _summary(assignment: Assignment) -> dict:
    """An assignment as a claim or a submission gives it: its `kind` says which kind of item it is on."""
    return AssignmentSummarySerializer(assignment).data


class Pages(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


# --- campaigns ----------------------------------------------------------------------


def _staff_campaigns() -> QuerySet[Campaign]:
    return selectors.campaign_list().select_related("reference_system").prefetch_related("annotators").order_by("-created_at", "-id")


def _queue_row(campaign: Campaign, user: User) -> dict:
    """The caller's row for one campaign, the same one their home page shows; 403 if they have none."""
    for row in selectors.annotator_queue(user=user):
        if row["campaign"].pk == campaign.pk:
            return row
    raise PermissionDenied(selectors.not_annotator_reason(campaign, user))


@extend_schema(
    operation_id="campaigns_list",
    summary="Campaigns",
    description="Staff: every campaign with its counts. Annotators: the campaigns they may work on, with their own progress.",
    responses={200: OpenApiResponse(CampaignStaffSerializer(many=True), description="staff's rows; annotators get AnnotatorCampaign rows")},
)
@api_view(["GET"])
def campaign_list(request: Request) -> Response:
    if request.user.is_staff:
        return Response(CampaignStaffSerializer(_staff_campaigns(), many=True).data)
    return Response(AnnotatorCampaignSerializer(selectors.annotator_queue(user=request.user), many=True).data)


@extend_schema(
    summary="One campaign",
    description="Staff: the campaign with its progress per annotator, pair and criterion. Annotators: their own row, 403 for a campaign not theirs.",
    responses={
        200: CampaignStaffSerializer,
        403: OpenApiResponse(description="not an annotator of this campaign"),
        404: OpenApiResponse(description="no such campaign"),
    },
)
@api_view(["GET"])
def campaign_detail(request: Request, campaign_id: int) -> Response:
    if request.user.is_staff:
        campaign = get_object_or_404(_staff_campaigns(), pk=campaign_id)
        data = CampaignStaffSerializer(campaign).data
        data["progress"] = campaign_progress_data(selectors.campaign_progress(campaign=campaign))
        return Response(data)
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return Response(AnnotatorCampaignSerializer(_queue_row(campaign, request.user)).data)


@extend_schema(
    summary="Claim the next pair",
    description="The caller's unfinished assignment (200), a new claim (201), 204 when nothing is left, 409 when the campaign is closed.",
    request=None,
    responses={
        200: AssignmentSummarySerializer,
        201: AssignmentSummarySerializer,
        204: OpenApiResponse(description="nothing left for the caller"),
        403: OpenApiResponse(description="not an annotator of this campaign, or a labels-only campaign"),
        409: OpenApiResponse(description="the campaign is closed"),
    },
)
@api_view(["POST"])
def campaign_claim(request: Request, campaign_id: int) -> Response:
    """The caller's unfinished assignment (200), a new claim (201), 204 when nothing is left, 409 when the campaign is closed."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    if not selectors.can_annotate(campaign, request.user):
        raise PermissionDenied(selectors.not_annotator_reason(campaign, request.user))
    if campaign.labels_only:
        raise PermissionDenied(claims.LABELS_ONLY)
    if not campaign.is_open:
        return Response({"detail": claims.CAMPAIGN_CLOSED}, status=status.HTTP_409_CONFLICT)
    now = timezone.now()
    assignment = claims.assignment_claim_next(campaign=campaign, user=request.user, now=now)
    if assignment is None:
        return Response(status=status.HTTP_204_NO_CONTENT)
    claimed_now = assignment.claimed_at == now
    # A reading (one article alone) says so: {"kind": "reading", ...}; a pair's assignment is as ever.
    body = _summary(assignment)
    return Response(body, status=status.HTTP_201_CREATED if claimed_now else status.HTTP_200_OK)


# --- the caller's own assignments ----------------------------------------------------


def _own_assignments(user: User) -> QuerySet[Assignment]:
    """The caller's work on items of every kind, newest first, each with `done`: its answers given (a
    pair's winners, the values of a reading's or a group's answers)."""
    return (
        # Labels imported into a labels-only campaign under an annotator's name are not their work to open,
        # nor is their work in a campaign they were removed from.
        Assignment.every.filter(annotator=user, pair__campaign__labels_only=False)
        .exclude(pair__campaign__removed_annotators=user)
        .select_related("pair__campaign", "pair__topic")
        .annotate(done=Count("labels", filter=~Q(labels__winner="") | ~Q(labels__value="")))
        .order_by("-claimed_at", "-id")
    )


def _with_totals(page: list[Assignment]) -> list[Assignment]:
    """Sets each assignment's `total`: the criteria of its rubric asked on its kind of item."""
    totals: Counter = Counter()
    sets = {a.pair.campaign.criterion_set_id for a in page}
    for set_id, response in Criterion.objects.filter(criterion_set_id__in=sets).values_list("criterion_set_id", "response"):
        totals[set_id, criterion_kind(response)] += 1
    for a in page:
        a.total = totals[a.pair.campaign.criterion_set_id, a.pair.kind]
    return page


@extend_schema(
    operation_id="assignments_list",
    summary="The caller's assignments",
    description="Paginated (`?page=`, `?page_size=` up to 500).",
    responses={200: AssignmentSummarySerializer(many=True)},
)
@api_view(["GET"])
def assignment_list(request: Request) -> Response:
    paginator = Pages()
    page = _with_totals(list(paginator.paginate_queryset(_own_assignments(request.user), request)))
    return paginator.get_paginated_response(AssignmentSummarySerializer(page, many=True).data)


@extend_schema(
    summary="One of the caller's assignments",
    description=(
        "Both articles by position (never a system name), the criteria and the saved answers; opening it starts its clock. "
        'Work on one article alone (`kind` "reading") gives `article`, `criteria` (each with its `protocol`, `choices` '
        "and `value`) and `progress`."
    ),
    responses={
        200: AssignmentPageSerializer,
        403: OpenApiResponse(description="not the caller's"),
        404: OpenApiResponse(description="no such assignment"),
    },
)
@api_view(["GET"])
def assignment_detail(request: Request, assignment_id: int) -> Response:
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user, kinds=selectors.WORK_KINDS)
    claims.assignment_open(assignment=assignment)
    if assignment.pair.kind == Item.Kind.PAIR:
        return Response(AssignmentPageSerializer(selectors.annotation_page(assignment=assignment)).data)
    page = reading_selectors.reading_page(assignment=assignment)
    body = AssignmentSummarySerializer(assignment).data
    shown = [
        {"position": c["position"], "html": c["html"], "toc": [{"level": lv, "text": t, "anchor": a} for lv, t, a in c["toc"]]}
        for c in page["columns"]
    ]
    # A reading's one article as `article`; a group's, in the order shown, as `articles` (numbered by position).
    body.update(
        **({"article": {k: v for k, v in shown[0].items() if k != "position"}} if len(shown) == 1 else {"articles": shown}),
        criteria=[answer_row(row, block.key) for block in page["categories"] for row in block.rows],
        progress={"done": page["done"], "total": page["total"]},
    )
    return Response(body)


@extend_schema(
    summary="Save one criterion",
    description=(
        "A pair's criterion takes `position` (and `acceptable`) and answers with the criterion's row; a criterion of "
        "one article alone takes `value` and answers with its row as `GET` gives it."
    ),
    request=LabelInputSerializer,
    responses={
        200: CriterionRowSerializer,
        400: OpenApiResponse(
            inline_serializer("Errors", {"errors": serializers.ListField(child=serializers.CharField())}),
            description="what is wrong, in words",
        ),
    },
)
@api_view(["PUT", "PATCH"])
def label_save(request: Request, assignment_id: int, criterion_key: str) -> Response:
    assignment = selectors.assignment_for_user(
        assignment_id=assignment_id, user=request.user, with_articles=False, kinds=selectors.WORK_KINDS
    )
    campaign = assignment.pair.campaign
    criterion = get_object_or_404(
        Criterion.objects.select_related("category"), criterion_set_id=campaign.criterion_set_id, key=criterion_key
    )
    body = LabelInputSerializer(data=request.data)
    if not body.is_valid():
        return Response({"errors": error_messages(body.errors)}, status=status.HTTP_400_BAD_REQUEST)
    reading = assignment.pair.kind != Item.Kind.PAIR
    label = answers.answer_save(
        assignment=assignment, criterion=criterion, user=request.user, source=answers.Source.API, **body.validated_data
    ).label
    if reading:
        row = reading_selectors.criterion_row(criterion, label if label.pk else None, Rules.of(campaign), assignment.order)
        return Response(answer_row(row, criterion.category.key))
    row = criterion_row(
        criterion=criterion,
        category_key=criterion.category.key,
        position=CANNOT_JUDGE if label.cannot_judge else answers.position_from_winner(assignment, label.winner),
        rationale=label.rationale,
        saved_at=label.saved_at if label.pk else None,
    )
    return Response(CriterionRowSerializer(row).data)


@extend_schema(
    summary="Save the overall answer",
    request=OverallInputSerializer,
    responses={200: OpenApiTypes.OBJECT, 400: OpenApiResponse(description="what is wrong, in words")},
)
@api_view(["PUT", "PATCH"])
def overall_save(request: Request, assignment_id: int) -> Response:
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user, with_articles=False)
    body = OverallInputSerializer(data=request.data)
    if not body.is_valid():
        return Response({"errors": error_messages(body.errors)}, status=status.HTTP_400_BAD_REQUEST)
    answers.overall_save(assignment=assignment, user=request.user, value=body.validated_data["overall"], source=answers.Source.API)
    return Response({"overall": answers.overall_shown(assignment)})


@extend_schema(
    summary="Submit an assignment",
    request=None,
    responses={
        200: AssignmentSummarySerializer,
        400: OpenApiResponse(
            inline_serializer("Missing", {"missing": serializers.ListField(child=serializers.CharField())}),
            description="what is still missing (or `errors`: the campaign is closed, the claim expired)",
        ),
    },
)
@api_view(["POST"])
def assignment_submit(request: Request, assignment_id: int) -> Response:
    assignment = selectors.assignment_for_user(assignment_id=assignment_id, user=request.user, kinds=selectors.WORK_KINDS)
    # Missing answers answer 400 {"missing": [...]}; a closed campaign or an expired claim 400 {"errors": [...]}.
    labelling.assignment_submit(assignment=assignment, user=request.user, source=answers.Source.API)
    return Response(_summary(assignment))
