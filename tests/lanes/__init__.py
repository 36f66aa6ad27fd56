"""Test lanes: parts of the suite run against real services the default run does not start."""
