"""Install SAM's hooks into a project, and take them out again (`manage.py sam_hooks`).

What `install` writes, all under the project folder:

- `.claude/hooks/sam_hook.py`, the client script (a copy of this package's);
- one entry each for SessionStart and SessionEnd in `.claude/settings.json`, merged into what
  is there: other settings and other hooks stay as they are, and an entry of SAM's that is
  there already is not added twice;
- `.cursor/rules/sam.mdc`, the Cursor rules telling the agent to use SAM's MCP tools;
- `.sam.toml` with SAM's URL and the project's space, when given (never the token: project
  files end up in repositories).

`uninstall` removes exactly these: SAM's two entries (an emptied hooks table goes, and a
settings file left empty), the script, the rules file, and `.sam.toml` if sam_hooks wrote it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCRIPT = ".claude/hooks/sam_hook.py"
SETTINGS = ".claude/settings.json"
RULES = ".cursor/rules/sam.mdc"
CONFIG = ".sam.toml"
CONFIG_MARK = "# Written by `manage.py sam_hooks install`"
# Claude Code runs a hook's command with the project's root in $CLAUDE_PROJECT_DIR.
EVENTS = {"SessionStart": "session-start", "SessionEnd": "session-end"}
TIMEOUT_SECONDS = 30  # Claude Code's bound; the script bounds each request itself (SAM_HOOK_TIMEOUT)


def hook_command(event: str) -> str:
    return f'python3 "$CLAUDE_PROJECT_DIR/{SCRIPT}" {EVENTS[event]}'


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and SCRIPT in str(hook.get("command", ""))


def _read_settings(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        settings = json.loads(path.read_text(encoding="utf-8") or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed") from exc
    if not isinstance(settings, dict) or not isinstance(settings.get("hooks", {}), dict):
        raise ValueError(f"{path} is not a Claude Code settings object; nothing was changed")
    return settings


def _write_json(path: Path, value: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def merge_hooks(settings: dict[str, Any]) -> list[str]:
    """Add SAM's entry for each event unless one is there; returns the events it added."""
    hooks = settings.setdefault("hooks", {})
    added = []
    for event in EVENTS:
        groups = hooks.setdefault(event, [])
        ours = [h for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if _is_ours(h)]
        if ours:
            continue
        groups.append({"hooks": [{"type": "command", "command": hook_command(event),
                                  "timeout": TIMEOUT_SECONDS}]})
        added.append(event)
    return added


def remove_hooks(settings: dict[str, Any]) -> list[str]:
    """Take SAM's entries out, and the groups, events and table they leave empty."""
    hooks = settings.get("hooks", {})
    removed = []
    for event in list(hooks):
        groups = hooks[event] if isinstance(hooks[event], list) else []
        for group in list(groups):
            if not isinstance(group, dict) or not any(_is_ours(h) for h in group.get("hooks", [])):
                continue
            group["hooks"] = [h for h in group["hooks"] if not _is_ours(h)]
            removed.append(event)
            if not group["hooks"]:
                groups.remove(group)
        if isinstance(hooks[event], list) and not hooks[event]:
            del hooks[event]
    if "hooks" in settings and not settings["hooks"]:
        del settings["hooks"]
    return removed


def _write_if_changed(path: Path, text: str) -> bool:
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def config_text(*, url: str | None, space: str | None) -> str:
    lines = [CONFIG_MARK, "# SAM's URL and this project's space; the token goes in SAM_TOKEN or",
             "# ~/.config/sam/config.toml, never here."]
    lines += [f'{key} = "{value}"' for key, value in (("url", url), ("space", space)) if value]
    return "\n".join(lines) + "\n"


def install(project: Path, *, space: str | None = None, url: str | None = None) -> list[str]:
    """Write SAM's hooks, settings entries and rules into `project`; returns what was done."""
    if not project.is_dir():
        raise ValueError(f"{project} is not a folder")
    done = []
    settings_path = project / SETTINGS
    settings = _read_settings(settings_path)  # first: a broken settings file stops everything
    script = project / SCRIPT
    if _write_if_changed(script, (HERE / "sam_hook.py").read_text(encoding="utf-8")):
        script.chmod(0o755)
        done.append(f"wrote {SCRIPT}")
    added = merge_hooks(settings)
    if added:
        _write_json(settings_path, settings)
        done.append(f"added the {' and '.join(added)} hooks to {SETTINGS}")
    rules = (HERE / "sam.mdc").read_text(encoding="utf-8").replace("{space}", space or "YOUR-SPACE")
    if _write_if_changed(project / RULES, rules):
        done.append(f"wrote {RULES}")
    config = project / CONFIG
    if url or space:
        if config.exists() and not config.read_text(encoding="utf-8").startswith(CONFIG_MARK):
            done.append(f"left {CONFIG} alone (not written by sam_hooks): put url and space there yourself")
        elif _write_if_changed(config, config_text(url=url, space=space)):
            done.append(f"wrote {CONFIG} (url, space)")
    return done


def _remove_empty_folders(project: Path, *folders: str) -> None:
    for folder in folders:
        path = project / folder
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def uninstall(project: Path) -> list[str]:
    """Remove what install wrote; returns what was done."""
    done = []
    settings_path = project / SETTINGS
    if settings_path.exists():
        settings = _read_settings(settings_path)
        removed = remove_hooks(settings)
        if removed and settings:
            _write_json(settings_path, settings)
            done.append(f"removed the {' and '.join(removed)} hooks from {SETTINGS}")
        elif removed:
            settings_path.unlink()  # nothing but SAM's hooks was in it
            done.append(f"removed {SETTINGS} (it held only SAM's hooks)")
    for name in (SCRIPT, RULES):
        if (project / name).exists():
            (project / name).unlink()
            done.append(f"removed {name}")
    config = project / CONFIG
    if config.exists() and config.read_text(encoding="utf-8").startswith(CONFIG_MARK):
        config.unlink()
        done.append(f"removed {CONFIG}")
    _remove_empty_folders(project, ".claude/hooks", ".claude", ".cursor/rules", ".cursor")
    return done
