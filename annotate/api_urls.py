from django.urls import path

from annotate import api

app_name = "api"

urlpatterns = [
    path("campaigns/", api.campaign_list, name="campaign-list"),
    path("campaigns/<int:campaign_id>/", api.campaign_detail, name="campaign-detail"),
    path("campaigns/<int:campaign_id>/claim/", api.campaign_claim, name="campaign-claim"),
    path("campaigns/<int:campaign_id>/labels/", api.campaign_labels, name="campaign-labels"),
    path("assignments/", api.assignment_list, name="assignment-list"),
    path("assignments/<int:assignment_id>/", api.assignment_detail, name="assignment-detail"),
    path("assignments/<int:assignment_id>/labels/<str:criterion_key>/", api.label_save, name="label-save"),
    path("assignments/<int:assignment_id>/overall/", api.overall_save, name="overall-save"),
    path("assignments/<int:assignment_id>/submit/", api.assignment_submit, name="assignment-submit"),
]
