"""The JSON Schema of a SAM entry with SAM's own fields (README.md, "The memory entry"), loaded once."""

import json
from pathlib import Path

SCHEMA_PATH = Path(__file__).with_name("memory_entry.schema.json")
MEMORY_ENTRY_SCHEMA: dict = json.loads(SCHEMA_PATH.read_text())
