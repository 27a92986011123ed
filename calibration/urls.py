from django.urls import path

import annotate.converters  # noqa: F401 (registers <id:...>: ids of at most 18 digits)
from calibration import upload_views, views, views_cascade

urlpatterns = [
    path("campaign/<id:campaign_id>/", views.dashboard, name="calibration-dashboard"),
    path("campaign/<id:campaign_id>/report.<str:fmt>", views.download, name="calibration-download"),
    path("campaign/<id:campaign_id>/report-status/", views.report_status, name="calibration-report-status"),
    path("campaign/<id:campaign_id>/plan/", views.plan, name="calibration-plan"),
    path("campaign/<id:campaign_id>/cascade/", views_cascade.cascade, name="calibration-cascade"),
    path("campaign/<id:campaign_id>/cascade/send/", views_cascade.cascade_send, name="calibration-cascade-send"),
    path("campaign/<id:campaign_id>/study-plan/", views.study_plan, name="calibration-study-plan"),
    path("campaign/<id:campaign_id>/table/<slug:key>/", views.report_table, name="calibration-table"),
    path("campaign/<id:campaign_id>/gold/", views.gold_page, name="calibration-gold"),
    path("campaign/<id:campaign_id>/gold/lift/", views.gold_lift, name="calibration-gold-lift"),
    path("campaign/<id:campaign_id>/gold/accept-separable/", views.gold_accept_separable, name="calibration-gold-accept"),
    path("campaign/<id:campaign_id>/attention/", views.attention_page, name="calibration-attention"),
    path("campaign/<id:campaign_id>/labels.<str:fmt>", views.labels_download, name="calibration-labels"),
    path("campaign/<id:campaign_id>/labels/upload/", upload_views.labels_upload, name="calibration-labels-upload"),
]
