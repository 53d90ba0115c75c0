"""Stage 3, analysis: a backend's raw result as DataFrames (:mod:`.rundata`), the metrics
of the literature (:mod:`.metrics`), summary.json (:mod:`.summary`) and the evaluation of
``[[checks]]`` on it (:mod:`.checks`)."""
