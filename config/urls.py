from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

import annotate.converters  # noqa: F401 (registers <id:...>: ids of at most 18 digits)
from annotate import api_urls as annotate_api_urls
from annotate import views as annotate_views
from calibration import api as calibration_api
from calibration import api_urls as calibration_api_urls

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Set-password links from create_accounts and /accounts/new/ (annotate/accounts.py) land here.
    path("accounts/reset/<uidb64>/<token>/", annotate_views.SetPasswordView.as_view(), name="password_reset_confirm"),
    path("accounts/reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    # The OpenAPI schema of every route below /api/, and Swagger UI from the sidecar package's static files.
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "api/schema/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="api/swagger_ui.html"), name="api-docs"
    ),
    path("api/campaigns/<id:campaign_id>/calibration/", calibration_api.campaign_calibration, name="api-campaign-calibration"),
    # One `api` namespace over both apps' routes: annotate's (campaigns, assignments) and calibration's (labels).
    path("api/", include(([*annotate_api_urls.urlpatterns, *calibration_api_urls.urlpatterns], annotate_api_urls.app_name))),
    path("judges/", include("judges.urls")),
    path("calibration/", include("calibration.urls")),
    path("", include("annotate.urls")),
]

handler403 = "annotate.views.permission_denied"
