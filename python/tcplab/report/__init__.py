"""Stage 4, reports: a run's report.png/pdf (:mod:`.run_report`, drawn by :mod:`.plots`),
a sweep's summary plots (:mod:`.sweep_plots`) and stored runs side by side
(:mod:`.compare`)."""
