from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "retrieval"
    verbose_name = "Recall"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from memories.signals import memories_changed
        from retrieval.receivers import drop_cached_recalls

        memories_changed.connect(drop_cached_recalls, dispatch_uid="retrieval.drop_cached_recalls")
