"""`python -m sam_client …` is the `sam` command."""

from sam_client.cli import main

raise SystemExit(main())
