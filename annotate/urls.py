from django.urls import path

from annotate import views

urlpatterns = [
    path("", views.home, name="home"),
    path("topics/", views.topic_list, name="topic-list"),
    path("topics/<int:topic_id>/", views.topic_compare, name="topic-compare"),
    path("campaigns/", views.campaign_list, name="campaign-list"),
    path("campaigns/new/", views.campaign_new, name="campaign-new"),
    path("campaigns/<int:campaign_id>/", views.campaign_detail, name="campaign-detail"),
    path("campaigns/<int:campaign_id>/toggle/", views.campaign_toggle, name="campaign-toggle"),
    path("campaigns/<int:campaign_id>/next/", views.claim_next, name="claim-next"),
    path("work/<int:assignment_id>/", views.assignment_page, name="assignment"),
    path("work/<int:assignment_id>/criteria/<str:criterion_key>/", views.label_save, name="label-save"),
    path("work/<int:assignment_id>/overall/", views.overall_save, name="overall-save"),
    path("work/<int:assignment_id>/submit/", views.submit, name="submit"),
    path("work/<int:assignment_id>/spans/", views.span_add, name="span-add"),
    path("work/<int:assignment_id>/spans/<int:span_id>/delete/", views.span_delete, name="span-delete"),
]
