"""Length and range limits of a SAM entry (README.md, "Limits"), in one place.

The JSON Schema served at /api/v1/schema/memory-entry.json, the database check
constraints and the service-level validation all read these numbers.
"""

TITLE = (3, 120)
CONTENT = (10, 8000)
SUMMARY = (10, 320)
PHRASES_COUNT = (1, 12)
PHRASE = (3, 120)
TAGS_COUNT = (0, 24)
TAG = (2, 40)
SOURCE_REF = (1, 200)
SOURCE_URI_MAX = 500
CONTEXT_WINDOW_ITEMS_MAX = 32
TRAINING_EXAMPLES_MAX = 6
TRAINING_ID = (4, 64)
TRAINING_USER = (3, 600)
TRAINING_ASSISTANT = (3, 1200)
TRAINING_ASSERTIONS_MAX = 12
HALF_LIFE_DAYS = (7, 3650)
