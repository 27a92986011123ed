from django.urls import path

import annotate.converters  # noqa: F401 (registers <id:...>: ids of at most 18 digits)
from annotate import adjudication_views, reading_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("topics/", views.topic_list, name="topic-list"),
    path("topics/<id:topic_id>/", views.topic_compare, name="topic-compare"),
    path("topics/<id:topic_id>/removed/<str:system_key>/", views.topic_removed, name="topic-removed"),
    path("campaigns/", views.campaign_list, name="campaign-list"),
    path("campaigns/new/", views.campaign_new, name="campaign-new"),
    path("campaigns/<id:campaign_id>/", views.campaign_detail, name="campaign-detail"),
    path("campaigns/<id:campaign_id>/toggle/", views.campaign_toggle, name="campaign-toggle"),
    path("campaigns/<id:campaign_id>/emphasis/", views.campaign_emphasis, name="campaign-emphasis"),
    path("campaigns/<id:campaign_id>/epsilon/", views.campaign_epsilon, name="campaign-epsilon"),
    path("campaigns/<id:campaign_id>/next/", views.claim_next, name="claim-next"),
    path("campaigns/<id:campaign_id>/members/", views.campaign_members, name="campaign-members"),
    path("campaigns/<id:campaign_id>/members/add/", views.campaign_members_add, name="campaign-members-add"),
    path("campaigns/<id:campaign_id>/members/<id:user_id>/remove/", views.campaign_member_remove, name="campaign-member-remove"),
    path("campaigns/<id:campaign_id>/blindness/", views.campaign_blindness, name="campaign-blindness"),
    path("campaigns/<id:campaign_id>/adjudication/", adjudication_views.campaign_adjudication, name="campaign-adjudication"),
    path("campaigns/<id:campaign_id>/adjudication/open/", adjudication_views.adjudication_open, name="adjudication-open"),
    path("campaigns/<id:campaign_id>/adjudicators/", adjudication_views.campaign_adjudicators, name="campaign-adjudicators"),
    path("adjudicate/<id:adjudication_id>/", adjudication_views.adjudicate, name="adjudicate"),
    path("accounts/new/", views.accounts_new, name="accounts-new"),
    path("work/<id:assignment_id>/", views.assignment_page, name="assignment"),
    path("work/<id:assignment_id>/criteria/<str:criterion_key>/", views.label_save, name="label-save"),
    path("work/<id:assignment_id>/overall/", views.overall_save, name="overall-save"),
    path("work/<id:assignment_id>/submit/", views.submit, name="submit"),
    path("work/<id:assignment_id>/spans/", views.span_add, name="span-add"),
    path("work/<id:assignment_id>/flag/", views.pair_flag, name="pair-flag"),
    path("campaigns/<id:campaign_id>/pairs/<id:pair_id>/void/", views.pair_void, name="pair-void"),
    path("work/<id:assignment_id>/spans/<id:span_id>/delete/", views.span_delete, name="span-delete"),
    path("reading/<id:assignment_id>/", reading_views.reading_page, name="reading"),
    path("reading/<id:assignment_id>/criteria/<str:criterion_key>/", reading_views.answer_save, name="reading-answer-save"),
    path("reading/<id:assignment_id>/submit/", reading_views.reading_submit, name="reading-submit"),
]
