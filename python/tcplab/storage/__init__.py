"""Stage 5, storage: a run's directory written atomically with its manifest
(:mod:`.directory`), what tcplab may replace or reuse (:mod:`.ownership`) and the pcap
files of captured links (:mod:`.pcap`). It draws nothing: reports are the callers' job."""
