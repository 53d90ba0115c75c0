"""Stage 1, the data model: a TOML experiment spec parsed and checked (pydantic;
:mod:`.model`), its units (:mod:`.units`), ``--set`` paths (:mod:`.paths`), and the
sections with a module of their own: queue disciplines (:mod:`.aqm`), traces
(:mod:`.traces`), workloads (:mod:`.workload`), constant-rate sources (:mod:`.sources`),
checks (:mod:`.checks`), resource limits (:mod:`.limits`), the algorithm registry
(:mod:`.algorithms`) and the engine's contract (:mod:`.contract`). It imports nothing from
the later stages (backends, analysis, report, runs)."""
