"""The My memory page: what SAM knows about the signed-in person, theirs to correct, pause,
take with them and forget (docs/my-memory.md). Server-rendered; every read and write goes
through the same selectors and services as the REST API."""
