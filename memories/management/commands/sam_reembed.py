"""Re-embed memories after a change of embedding model."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from governance.access import SYSTEM, access_space
from memories.embeddings import jobs as embedding_jobs


class Command(BaseCommand):
    help = (
        "Mark memories for embedding again and enqueue the jobs (a running worker does them). "
        "With --dims N, first change the vector column to N dimensions (drops all vectors)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--space", help="Only this space (slug).")
        parser.add_argument("--only-stale", action="store_true",
                            help="Only memories not embedded by the configured model.")
        parser.add_argument("--dims", type=int, help="New vector width, for a model of other dims.")

    def handle(self, *args, space: str | None, only_stale: bool, dims: int | None, **options) -> None:
        if dims is not None:
            if not 8 <= dims <= 16000:
                raise CommandError("--dims must be between 8 and 16000.")
            if dims != settings.SAM_EMBEDDING_DIMS:
                raise CommandError(
                    f"Set SAM_EMBEDDING_DIMS={dims} in the environment first (now "
                    f"{settings.SAM_EMBEDDING_DIMS}), so the server and workers agree."
                )
            self._resize(dims)
        target = access_space(SYSTEM, slug=space) if space else None
        count = embedding_jobs.memories_reembed(space=target, only_stale=only_stale)
        self.stdout.write(f"queued {count} memories for embedding")

    def _resize(self, dims: int) -> None:
        # The HNSW index is bound to the column's width, so it is rebuilt around the change.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DROP INDEX IF EXISTS memory_embedding_hnsw")
            cursor.execute("UPDATE memories_memory SET embedding = NULL, embedding_status = 'pending'")
            cursor.execute(f"ALTER TABLE memories_memory ALTER COLUMN embedding TYPE vector({int(dims)})")
            cursor.execute(
                "CREATE INDEX memory_embedding_hnsw ON memories_memory "
                "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
            )
            # Long memories' windows (memories.embeddings.passages) are re-embedded with them.
            cursor.execute("DROP INDEX IF EXISTS passage_embedding_hnsw")
            cursor.execute("TRUNCATE memories_memorypassage")
            cursor.execute(
                f"ALTER TABLE memories_memorypassage ALTER COLUMN embedding TYPE vector({int(dims)})")
            cursor.execute(
                "CREATE INDEX passage_embedding_hnsw ON memories_memorypassage "
                "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
            )
        self.stdout.write(f"vector column now has {dims} dimensions")
