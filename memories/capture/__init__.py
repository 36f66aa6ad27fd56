"""Memories from conversations that already happened: chat-history importers (docs/capture.md)."""

# The chat histories SAM reads (memories.capture.ingest.READERS has a reader for each).
SOURCES = ("claude_code", "chatgpt", "cursor", "jsonl")
