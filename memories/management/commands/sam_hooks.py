"""Install SAM's Claude Code hooks and Cursor rules into a project, or remove them."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memories.capture.hooks import install

ENVIRONMENT = """
Set in the environment Claude Code runs in (or in ~/.config/sam/config.toml as url, token, space):
  export SAM_URL={url}
  export SAM_TOKEN=sam_…   # manage.py sam_token --user NAME --name claude-code
{space}The space must accept claude_code imports (its capture_sources). Cursor reaches SAM through
its MCP server (README, "MCP"). Undo: manage.py sam_hooks uninstall {project}"""


class Command(BaseCommand):
    help = ("Install (or uninstall) SAM's capture into a project: Claude Code SessionStart and SessionEnd "
            "hooks (.claude/hooks/, .claude/settings.json) and Cursor rules (.cursor/rules/sam.mdc). "
            "See docs/capture.md, 'Capture that runs by itself'.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["install", "uninstall"])
        parser.add_argument("project", help="the project's folder")
        parser.add_argument("--space", help="the project's space in SAM (written to PROJECT/.sam.toml)")
        parser.add_argument("--url", help="SAM's URL, such as http://127.0.0.1:8000 (to PROJECT/.sam.toml)")

    def handle(self, *args, action: str, project: str, space: str | None, url: str | None,
               **options) -> None:
        folder = Path(project).expanduser().resolve()
        try:
            done = (install.install(folder, space=space, url=url) if action == "install"
                    else install.uninstall(folder))
        except (ValueError, OSError) as exc:
            raise CommandError(str(exc), returncode=2) from exc
        for line in done or ["nothing to do: already as asked"]:
            self.stdout.write(f"{folder}: {line}")
        if action == "install":
            self.stdout.write(ENVIRONMENT.format(
                url=url or "http://127.0.0.1:8000", project=folder,
                space="" if space else "  export SAM_SPACE=…      # the project's space\n"))
