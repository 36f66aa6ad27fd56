from django.urls import path

from retrieval.api import training, views

urlpatterns = [
    path("recall/", views.RecallView.as_view(), name="recall"),
    path("context-packs/", views.ContextPackView.as_view(), name="context-pack"),
    path("prompt-augmentation/", views.PromptAugmentationView.as_view(), name="prompt-augmentation"),
    path("memories/<str:pk>/training/", training.TrainingView.as_view(), name="memory-training"),
]
