from django.contrib import admin

from judges.models import CachedResponse, Judge, JudgeCall, JudgeRun, JudgeUnit, JudgeVerdict


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ["name", "campaign", "kind", "model", "mode", "input_price", "output_price", "created_at"]
    list_select_related = ["campaign"]
    list_filter = ["kind", "mode"]
    search_fields = ["name", "model"]

    def get_readonly_fields(self, request, obj=None):
        # The server sends the key variable's value to the base URL: only a superuser sets them (judges/endpoints.py).
        fields = list(super().get_readonly_fields(request, obj))
        return fields if request.user.is_superuser else [*fields, "base_url", "api_key_env"]


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ["id", "judge", "campaign", "status", "units_done", "units_total", "errors", "calls", "cost_usd", "created_at"]
    list_filter = ["status", "judge"]
    list_select_related = ["judge", "campaign"]
    # Counters are the engine's bookkeeping; editing them would make costs lie.
    readonly_fields = [
        "task_id",
        "units_total",
        "units_done",
        "errors",
        "calls",
        "prompt_tokens",
        "cached_tokens",
        "completion_tokens",
        "cost_usd",
        "created_at",
        "started_at",
        "finished_at",
    ]


@admin.register(JudgeUnit)
class JudgeUnitAdmin(admin.ModelAdmin):
    list_display = ["id", "judge", "pair", "order", "category", "criterion", "a_first", "status", "updated_at"]
    list_filter = ["status", "judge"]
    list_select_related = ["judge", "pair__topic", "pair__article_a__system", "pair__article_b__system", "category", "criterion"]
    raw_id_fields = ["pair", "run"]


@admin.register(JudgeCall)
class JudgeCallAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "unit",
        "attempt",
        "from_cache",
        "valid",
        "http_status",
        "prompt_tokens",
        "completion_tokens",
        "cost_usd",
        "latency_ms",
    ]
    list_filter = ["valid", "from_cache", "http_status"]
    raw_id_fields = ["unit", "run"]
    readonly_fields = [f.name for f in JudgeCall._meta.fields]


@admin.register(JudgeVerdict)
class JudgeVerdictAdmin(admin.ModelAdmin):
    list_display = ["id", "unit", "criterion", "winner", "answer"]
    list_filter = ["winner"]
    raw_id_fields = ["unit", "call"]


@admin.register(CachedResponse)
class CachedResponseAdmin(admin.ModelAdmin):
    list_display = ["request_hash", "endpoint", "model", "prompt_tokens", "completion_tokens", "created_at"]
    search_fields = ["request_hash", "endpoint", "model"]
