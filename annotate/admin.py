from django.contrib import admin

from annotate.models import (
    Article,
    Assignment,
    Campaign,
    CampaignSettingChange,
    Category,
    Criterion,
    CriterionSet,
    Label,
    LabelChange,
    Pair,
    Span,
    System,
    Topic,
)


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ["title", "benchmark", "category", "slug"]
    list_filter = ["benchmark", "category"]
    search_fields = ["title", "slug"]


@admin.register(System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ["key", "name", "is_reference"]
    search_fields = ["key", "name"]


@admin.register(Article)
class ArticleAdmin(admin.ModelAdmin):
    list_display = ["topic", "system", "word_count", "raw_word_count", "imported_at"]
    list_filter = ["system", "topic__benchmark"]
    search_fields = ["topic__title"]
    list_select_related = ["topic", "system"]
    # Derived at import from the raw markdown; editing one alone would desynchronise them.
    readonly_fields = ["display_markdown", "html", "word_count", "raw_word_count", "content_hash", "source", "imported_at"]


class CriterionInline(admin.TabularInline):
    model = Criterion
    fields = ["order", "key", "subcategory_key", "text"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(CriterionSet)
class CriterionSetAdmin(admin.ModelAdmin):
    list_display = ["key", "version", "name", "created_at"]
    readonly_fields = ["key", "version", "content_hash", "source", "created_at"]


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["name", "key", "criterion_set", "order"]
    list_filter = ["criterion_set"]
    inlines = [CriterionInline]
    readonly_fields = ["criterion_set", "key", "order"]


@admin.register(Criterion)
class CriterionAdmin(admin.ModelAdmin):
    list_display = ["key", "category", "criterion_set", "order"]
    list_filter = ["criterion_set", "category__key"]
    search_fields = ["key", "text"]
    # Text under existing labels must never change: import a new version instead.
    readonly_fields = ["criterion_set", "category", "key", "subcategory_key", "subcategory_name", "watch_class", "text", "order"]


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "criterion_set", "overlap", "allow_tie", "is_open", "labels_only", "created_at"]
    list_filter = ["is_open", "labels_only"]
    filter_horizontal = ["annotators"]
    # Pairs and the rubric are fixed at creation; use the campaign page or create_campaign.
    readonly_fields = [
        "protocol", "criterion_set", "reference_system", "pair_mode", "labels_only", "instructions_html", "created_at",
    ]  # fmt: skip


@admin.register(Pair)
class PairAdmin(admin.ModelAdmin):
    list_display = ["id", "campaign", "topic", "article_a", "article_b"]
    list_filter = ["campaign"]
    list_select_related = ["campaign", "topic", "article_a__system", "article_a__topic", "article_b__system", "article_b__topic"]
    readonly_fields = ["campaign", "topic", "article_a", "article_b"]


class LabelInline(admin.TabularInline):
    model = Label
    fields = ["criterion", "winner", "rationale", "saved_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["id", "pair", "annotator", "status", "a_first", "claimed_at", "submitted_at"]
    list_filter = ["status", "pair__campaign"]
    list_select_related = [
        "pair__topic",
        "pair__article_a__system",
        "pair__article_b__system",
        "pair__article_a__topic",
        "pair__article_b__topic",
        "annotator",
    ]
    # repeat_of: set by the claim only (a swapped repeat of that assignment); a select of every assignment otherwise.
    readonly_fields = [
        "pair", "annotator", "a_first", "overall", "claimed_at", "first_opened_at", "last_activity_at", "submitted_at", "repeat_of",
    ]  # fmt: skip
    inlines = [LabelInline]


@admin.register(LabelChange)
class LabelChangeAdmin(admin.ModelAdmin):
    list_display = ["changed_at", "changed_by", "assignment", "criterion", "field", "old_value", "new_value"]
    list_filter = ["field"]
    readonly_fields = ["assignment", "criterion", "field", "old_value", "new_value", "changed_by", "changed_at"]

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(CampaignSettingChange)
class CampaignSettingChangeAdmin(admin.ModelAdmin):
    """The settings audit trail (annotate.services.campaign_settings): read only, never edited or deleted here."""

    list_display = ["changed_at", "changed_by", "campaign", "field", "old_value", "new_value"]
    list_filter = ["field"]
    readonly_fields = ["campaign", "field", "old_value", "new_value", "changed_by", "changed_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Span)
class SpanAdmin(admin.ModelAdmin):
    list_display = ["assignment", "article", "start", "end", "polarity", "created_at"]
    readonly_fields = ["assignment", "article", "start", "end", "quote", "polarity", "comment", "created_at"]
