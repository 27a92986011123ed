"""The API's JSON shapes. No business logic: services decide, these only name fields.

Every field is listed explicitly. Anything an annotator receives names the two
articles by position ("1" on the left, "2" on the right) and never by system,
article id, file or `a_first`: the blind presentation depends on it, and
tests/test_api.py checks it.
"""

from __future__ import annotations

from rest_framework import serializers

import protocols

# --- input ------------------------------------------------------------------------


class LabelInputSerializer(serializers.Serializer):
    """A label change; any field may be omitted. The service checks the values. A pair's criterion
    takes `position` (and `acceptable`), a criterion about one article alone takes `value`."""

    position = serializers.CharField(
        required=False, allow_blank=True, help_text='"1", "2", "tie", "cannot_judge" (where allowed), or "" to clear.'
    )
    value = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=protocols.get("text").MAX_TEXT,
        help_text='One article alone: the answer as the page sends it ("yes"/"no"/"na", a point\'s or a count\'s digits, a '
        'class\'s name, a free text), or "" to clear.',
    )
    rationale = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    acceptable = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        max_length=3,
        help_text='Campaigns that ask for sets: the positions also acceptable ("1", "2", "tie").',
    )


class OverallInputSerializer(serializers.Serializer):
    overall = serializers.CharField(allow_blank=True)


def error_messages(errors) -> list[str]:
    """Flattens DRF's {"field": ["message"]} into the ["field: message"] list the API returns."""
    if isinstance(errors, dict):
        return [
            message if field == "non_field_errors" else f"{field}: {message}"
            for field, messages in errors.items()
            for message in error_messages(messages)
        ]
    if isinstance(errors, list):
        return [message for item in errors for message in error_messages(item)]
    return [str(errors)]


# --- annotators -------------------------------------------------------------------


class CampaignBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class AnnotatorCampaignSerializer(serializers.Serializer):
    """One row of `selectors.annotator_queue`: the campaign's rules and the caller's own counts."""

    id = serializers.IntegerField(source="campaign.pk")
    name = serializers.CharField(source="campaign.name")
    instructions_html = serializers.CharField(source="campaign.instructions_html")
    allow_tie = serializers.BooleanField(source="campaign.allow_tie")
    rationale_required = serializers.BooleanField(source="campaign.rationale_required")
    rationale_min_length = serializers.IntegerField(source="campaign.rationale_min_length")
    ask_overall = serializers.BooleanField(source="campaign.ask_overall")
    is_open = serializers.BooleanField(source="campaign.is_open")
    mine = serializers.SerializerMethodField()

    def get_mine(self, row: dict) -> dict:
        active = row["active"]
        # The item in progress is a pair (an assignment) or one article alone (a reading).
        reading = active is not None and not hasattr(active, "pair_id")
        return {
            "submitted": row["submitted"],
            "active_assignment": active.pk if active is not None and not reading else None,
            "active_reading": active.pk if reading else None,
        }


class AssignmentSummarySerializer(serializers.Serializer):
    """An assignment in a list, or as a claim or a submission gives it, on an item of any kind (`kind`:
    "pair", "reading", "group"); `done`/`total` are read when they are set (the list sets them)."""

    kind = serializers.CharField(source="pair.kind")
    id = serializers.IntegerField()
    campaign = CampaignBriefSerializer(source="pair.campaign")
    topic = serializers.CharField(source="pair.topic.title")
    status = serializers.CharField()
    claimed_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    progress = serializers.SerializerMethodField()

    def get_progress(self, assignment) -> dict | None:
        if not hasattr(assignment, "done"):
            return None
        return {"done": assignment.done, "total": assignment.total or 0}


def answer_row(row, category_key: str) -> dict:
    """One criterion of a reading (`annotate.reading_selectors.AnswerRow`) as the API gives it."""
    return {
        "key": row.criterion.key,
        "category": category_key,
        "text": row.criterion.text,
        "protocol": row.protocol,
        "choices": [value for value, _ in row.choices],
        "maximum": row.maximum,
        "value": row.value,
        "articles": len(row.numbers) or 1,  # how many articles the answer is about (a ranking's k)
        "rationale": row.rationale,
        "saved_at": row.saved_at,
        "complete": not row.problems,
    }


class ArticleColumnSerializer(serializers.Serializer):
    position = serializers.CharField()
    html = serializers.CharField()
    toc = serializers.SerializerMethodField()

    def get_toc(self, column: dict) -> list[dict]:
        return [{"level": level, "text": text, "anchor": anchor} for level, text, anchor in column["toc"]]


class CriterionRowSerializer(serializers.Serializer):
    key = serializers.CharField()
    category = serializers.CharField()
    text = serializers.CharField()
    position = serializers.CharField(allow_blank=True)
    rationale = serializers.CharField(allow_blank=True)
    saved_at = serializers.DateTimeField(allow_null=True)


def criterion_row(*, criterion, category_key: str, position: str, rationale: str, saved_at) -> dict:
    return {
        "key": criterion.key,
        "category": category_key,
        "text": criterion.text,
        "position": position,
        "rationale": rationale,
        "saved_at": saved_at,
    }


class AssignmentPageSerializer(serializers.Serializer):
    """The annotation page (`selectors.annotation_page`) as JSON, by position only."""

    id = serializers.IntegerField(source="assignment.pk")
    campaign = serializers.SerializerMethodField()
    topic = serializers.CharField(source="topic.title")
    status = serializers.CharField(source="assignment.status")
    claimed_at = serializers.DateTimeField(source="assignment.claimed_at")
    submitted_at = serializers.DateTimeField(source="assignment.submitted_at", allow_null=True)
    articles = ArticleColumnSerializer(source="columns", many=True)
    criteria = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    overall = serializers.SerializerMethodField()

    def get_campaign(self, page: dict) -> dict:
        campaign = page["campaign"]
        return {
            "id": campaign.pk,
            "name": campaign.name,
            "instructions_html": campaign.instructions_html,
            "allow_tie": campaign.allow_tie,
            "rationale_required": campaign.rationale_required,
            "rationale_min_length": campaign.rationale_min_length,
            "ask_overall": campaign.ask_overall,
            "is_open": campaign.is_open,
        }

    def get_criteria(self, page: dict) -> list[dict]:
        rows = [
            criterion_row(
                criterion=row.criterion, category_key=block.key, position=row.position, rationale=row.rationale, saved_at=row.saved_at
            )
            for block in page["categories"]
            for row in block.rows
        ]
        return CriterionRowSerializer(rows, many=True).data

    def get_progress(self, page: dict) -> dict:
        return {"done": page["done"], "total": page["total"]}

    def get_overall(self, page: dict) -> str | None:
        # Shown by position ("1", "2", "tie", "both_bad"), as the annotator chose it.
        return page["overall"] if page["campaign"].ask_overall else None


# --- researchers ------------------------------------------------------------------


class CampaignStaffSerializer(serializers.Serializer):
    """A campaign from `selectors.campaign_list()` with its settings and counts."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    criterion_set = serializers.SerializerMethodField()
    reference_system = serializers.SerializerMethodField()
    pair_mode = serializers.CharField()
    overlap = serializers.IntegerField()
    allow_tie = serializers.BooleanField()
    rationale_required = serializers.BooleanField()
    rationale_min_length = serializers.IntegerField()
    ask_overall = serializers.BooleanField()
    claim_timeout_minutes = serializers.IntegerField()
    is_open = serializers.BooleanField()
    labels_only = serializers.BooleanField()
    neutral_emphasis = serializers.BooleanField()
    calibration_pairs = serializers.IntegerField()
    instructions = serializers.CharField()
    annotators = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    counts = serializers.SerializerMethodField()

    def get_criterion_set(self, campaign) -> dict:
        return {"key": campaign.criterion_set.key, "version": campaign.criterion_set.version}

    def get_reference_system(self, campaign) -> str | None:
        return campaign.reference_system.key if campaign.reference_system_id else None

    def get_annotators(self, campaign) -> list[str]:
        return sorted(user.username for user in campaign.annotators.all())

    def get_counts(self, campaign) -> dict:
        needed = campaign.pair_count * campaign.overlap
        if campaign.calibration_pairs:
            from annotate.selectors import campaign_annotator_count

            # A calibration pair needs every member, not the overlap.
            calibration = min(campaign.calibration_pairs, campaign.pair_count)
            needed += calibration * (campaign_annotator_count(campaign=campaign) - campaign.overlap)
        return {"pairs": campaign.pair_count, "needed": needed, "submitted": campaign.submitted}


def campaign_progress_data(progress: dict) -> dict:
    """`selectors.campaign_progress` as JSON; researchers may see the systems."""
    calibration = progress["calibration"]
    return {
        "needed": progress["needed"],
        "submitted": progress["submitted"],
        "calibration": None
        if calibration is None
        else {key: calibration[key] for key in ("size", "members", "members_done", "pairs_complete")},
        "annotators": [
            {
                "username": row["annotator__username"],
                "submitted": row["submitted"],
                "active": row["active"],
                "expired": row["expired"],
                "labels": row["labels"],
            }
            for row in progress["annotators"]
        ],
        "criteria": [{"key": criterion.key, "labels": count} for criterion, count in progress["criteria"]],
        "pairs": [
            {
                "id": pair.pk,
                "topic": pair.topic.title,
                "system_a": pair.article_a.system.key,
                "system_b": pair.article_b.system.key,
                "submitted": pair.submitted,
                "needed": pair.needed,
                "calibration": pair.calibration,
                "active": pair.active,
            }
            for pair in progress["pairs"]
        ],
    }
