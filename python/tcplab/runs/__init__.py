"""Orchestration: one spec on its backend (:mod:`.execute`), sweeps with their cache
(:mod:`.sweep`), and stored sweeps read back (:mod:`.sweep_data`)."""
