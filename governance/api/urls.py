from django.urls import path, re_path

from governance.api import views

urlpatterns = [
    path("spaces/<slug:slug>/members/", views.SpaceMembersView.as_view(), name="space-members"),
    re_path(r"^spaces/(?P<slug>[-a-zA-Z0-9_]+)/members/(?P<kind>user|group):(?P<name>[^/]+)/$",
            views.SpaceMemberView.as_view(), name="space-member"),
    path("spaces/<slug:slug>/restricted-tags/", views.RestrictedTagsView.as_view(),
         name="space-restricted-tags"),
    path("spaces/<slug:slug>/restricted-tags/<str:tag>/", views.RestrictedTagView.as_view(),
         name="space-restricted-tag"),
    path("me/mode/", views.MyModeView.as_view(), name="my-mode"),
    path("me/tokens/", views.MyTokensView.as_view(), name="my-tokens"),
    path("me/tokens/<int:pk>/", views.MyTokenView.as_view(), name="my-token"),
]
