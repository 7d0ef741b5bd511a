"""One module per system: how the orchestrator installs, runs and reads it."""
