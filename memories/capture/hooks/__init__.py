"""What `manage.py sam_hooks install` puts in a project (docs/capture.md, "Capture that runs by itself").

`sam_hook.py` is the client side: a stdlib-only Python 3 script that Claude Code runs at
SessionStart and SessionEnd, outside SAM's process and virtualenv. `sam.mdc` is the Cursor
rules file. `install` writes them into a project and merges the hook entries into its
`.claude/settings.json`; `uninstall` takes back exactly that.
"""
