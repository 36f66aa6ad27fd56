"""PRD executions: progress, decisions and blockers of a coding agent's work on a PRD."""
