from django.urls import path
from rest_framework.routers import SimpleRouter

from memories.api import views
from memories.api.me import MyExportView, MyMemoriesView
from memories.api.restrict import MemoryRestrictView
from memories.capture.api import (
    ChatImportDetailView,
    ConversationCreateView,
    ConversationDetailView,
    SpaceChatImportView,
)
from memories.categories.api import CategoryDetailView, SpaceCategoriesView
from memories.entities.api.entities import EntityDetailView, EntityMergeView, SpaceEntitiesView
from memories.entities.api.graph import MemoryGraphView, MemoryRelationsView, RelationDetailView
from memories.lifecycle import api as lifecycle

router = SimpleRouter(trailing_slash=True)
router.register("spaces", views.SpaceViewSet, basename="space")
router.register("memories", views.MemoryViewSet, basename="memory")
router.register("review", lifecycle.ReviewViewSet, basename="review")

urlpatterns = [
    path("schema/memory-entry.json", views.memory_entry_schema, name="memory-entry-schema"),
    *router.urls,
    path("memories/<str:pk>/restrict/", MemoryRestrictView.as_view(), name="memory-restrict"),
    path("memories/<str:pk>/graph/", MemoryGraphView.as_view(), name="memory-graph"),
    path("memories/<str:pk>/relations/", MemoryRelationsView.as_view(), name="memory-relations"),
    path("relations/<int:pk>/", RelationDetailView.as_view(), name="relation-detail"),
    path("spaces/<str:slug>/chat-imports/", SpaceChatImportView.as_view(), name="space-chat-imports"),
    path("spaces/<str:slug>/categories/", SpaceCategoriesView.as_view(), name="space-categories"),
    path("spaces/<str:slug>/categories/<slug:name>/", CategoryDetailView.as_view(), name="category-detail"),
    path("spaces/<str:slug>/entities/", SpaceEntitiesView.as_view(), name="space-entities"),
    path("entities/<int:pk>/", EntityDetailView.as_view(), name="entity-detail"),
    path("entities/<int:pk>/merge/", EntityMergeView.as_view(), name="entity-merge"),
    path("chat-imports/<str:pk>/", ChatImportDetailView.as_view(), name="chat-import-detail"),
    path("conversations/", ConversationCreateView.as_view(), name="conversations"),
    path("conversations/<str:pk>/", ConversationDetailView.as_view(), name="conversation-detail"),
    path("me/memories/", MyMemoriesView.as_view(), name="my-memories"),
    path("me/export/", MyExportView.as_view(), name="my-export"),
]
