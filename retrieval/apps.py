from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "retrieval"
    verbose_name = "Recall"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core.signals import spaces_changed
        from governance import retention
        from governance.audit import selectors as audit_selectors
        from memories import settle
        from retrieval import freshness, training
        from retrieval.models import RecallEvent
        from retrieval.receivers import drop_cached_recalls
        from retrieval.retention import SPACE_DATA

        spaces_changed.connect(drop_cached_recalls, dispatch_uid="retrieval.drop_cached_recalls")
        # Governance reaches recall's data without naming it (docs/architecture.md).
        retention.register_space_data(SPACE_DATA)
        audit_selectors.register_recall_events(RecallEvent)
        # After memories settle (memories.settle, its last step): an edited memory's training
        # examples run, and the word statistics of their spaces are recounted soon.
        settle.on_settled(training.after_edit)
        settle.on_settled(freshness.after_write)
