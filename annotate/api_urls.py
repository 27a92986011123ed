from django.urls import path

import annotate.converters  # noqa: F401 (registers <id:...>: ids of at most 18 digits)
from annotate import api

app_name = "api"

urlpatterns = [
    path("campaigns/", api.campaign_list, name="campaign-list"),
    path("campaigns/<id:campaign_id>/", api.campaign_detail, name="campaign-detail"),
    path("campaigns/<id:campaign_id>/claim/", api.campaign_claim, name="campaign-claim"),
    path("assignments/", api.assignment_list, name="assignment-list"),
    path("assignments/<id:assignment_id>/", api.assignment_detail, name="assignment-detail"),
    path("assignments/<id:assignment_id>/labels/<str:criterion_key>/", api.label_save, name="label-save"),
    path("assignments/<id:assignment_id>/overall/", api.overall_save, name="overall-save"),
    path("assignments/<id:assignment_id>/submit/", api.assignment_submit, name="assignment-submit"),
    # The one-article addresses of earlier releases: the same assignment routes, kept so that old clients still work.
    path("readings/<id:assignment_id>/", api.assignment_detail, name="reading-detail"),
    path("readings/<id:assignment_id>/answers/<str:criterion_key>/", api.label_save, name="reading-answer-save"),
    path("readings/<id:assignment_id>/submit/", api.assignment_submit, name="reading-submit"),
]
