"""JSON API for readings (one article alone): the same selectors and services as the single-article page.

`POST /api/campaigns/<id>/claim/` may give a reading (its body then says `"kind": "reading"`); the
reading is read with GET, each answer saved with PUT or PATCH (`{"value": ..., "rationale": ...}`,
the value as the page sends it: "yes"/"no"/"na", a point's digits, a count's digits, a class's name,
the text of a free-text answer), and the reading submitted with POST. A service's ValidationError
answers 400 with its messages (`common.api_errors`); missing answers 400 `{"missing": [...]}`.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

import protocols
from annotate import reading_selectors
from annotate.answers import Rules
from annotate.models import Criterion, ReadingAssignment
from annotate.serializers import error_messages
from annotate.services import claims, reading_answers


class ReadingSummarySerializer(serializers.Serializer):
    """A reading assignment as a claim gives it: `kind` tells it from a pair's assignment."""

    kind = serializers.SerializerMethodField()
    id = serializers.IntegerField()
    campaign = serializers.SerializerMethodField()
    topic = serializers.CharField(source="pair.topic.title")
    status = serializers.CharField()
    claimed_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)

    def get_kind(self, assignment) -> str:
        return "reading"

    def get_campaign(self, assignment) -> dict:
        return {"id": assignment.pair.campaign_id, "name": assignment.pair.campaign.name}


class AnswerInputSerializer(serializers.Serializer):
    value = serializers.CharField(required=False, allow_blank=True, max_length=protocols.get("text").MAX_TEXT)
    rationale = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


def answer_row(row: reading_selectors.AnswerRow, category_key: str) -> dict:
    return {
        "key": row.criterion.key,
        "category": category_key,
        "text": row.criterion.text,
        "protocol": row.protocol,
        "choices": [value for value, _ in row.choices],
        "maximum": row.maximum,
        "value": row.value,
        "rationale": row.rationale,
        "saved_at": row.saved_at,
        "complete": not row.problems,
    }


@extend_schema(
    summary="One of the caller's readings",
    description="The article alone (never its system), the criteria and the saved answers.",
    responses={
        200: OpenApiResponse(ReadingSummarySerializer, description="the summary with `article`, `criteria` and `progress`"),
        404: OpenApiResponse(description="no such reading of the caller's"),
    },
)
@api_view(["GET"])
def reading_detail(request: Request, assignment_id: int) -> Response:
    assignment = reading_selectors.reading_assignment_for_user(assignment_id=assignment_id, user=request.user)
    claims.assignment_open(assignment=assignment)
    page = reading_selectors.reading_page(assignment=assignment)
    body = ReadingSummarySerializer(assignment).data
    body.update(
        article={"html": page["column"]["html"], "toc": [{"level": lv, "text": t, "anchor": a} for lv, t, a in page["column"]["toc"]]},
        criteria=[answer_row(row, block.key) for block in page["categories"] for row in block.rows],
        progress={"done": page["done"], "total": page["total"]},
    )
    return Response(body)


@extend_schema(
    summary="Save one answer of a reading",
    request=AnswerInputSerializer,
    responses={200: OpenApiResponse(description="the criterion's row"), 400: OpenApiResponse(description="what is wrong, in words")},
)
@api_view(["PUT", "PATCH"])
def answer_save(request: Request, assignment_id: int, criterion_key: str) -> Response:
    assignment = reading_selectors.reading_assignment_for_user(assignment_id=assignment_id, user=request.user, with_article=False)
    criterion = get_object_or_404(
        Criterion.objects.select_related("category"), criterion_set_id=assignment.pair.campaign.criterion_set_id, key=criterion_key
    )
    body = AnswerInputSerializer(data=request.data)
    if not body.is_valid():
        return Response({"errors": error_messages(body.errors)}, status=status.HTTP_400_BAD_REQUEST)
    saved = reading_answers.answer_save(
        assignment=assignment, criterion=criterion, user=request.user, source=reading_answers.Source.API, **body.validated_data
    )
    answer = saved.answer if saved.answer.pk else None
    row = reading_selectors.criterion_row(criterion, answer, Rules.of(assignment.pair.campaign))
    return Response(answer_row(row, criterion.category.key))


@extend_schema(summary="Submit a reading", request=None, responses={200: ReadingSummarySerializer})
@api_view(["POST"])
def reading_submit(request: Request, assignment_id: int) -> Response:
    assignment = reading_selectors.reading_assignment_for_user(assignment_id=assignment_id, user=request.user)
    reading_answers.reading_submit(assignment=assignment, user=request.user, source=reading_answers.Source.API)
    return Response(ReadingSummarySerializer(assignment).data)


def claimed(item) -> dict:
    """A claim's body: a reading's summary, or None for a pair's assignment (the caller serializes it)."""
    return ReadingSummarySerializer(item).data if isinstance(item, ReadingAssignment) else None
