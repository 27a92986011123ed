from django.contrib import admin

from annotate.models import Article, Category, Criterion, CriterionSet, System, Topic


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
