"""Running and storing: one spec on its backend (:mod:`.execute`), run directories
(:mod:`.directory`, with pcap files from :mod:`.pcap`) and sweeps with their cache
(:mod:`.sweep`)."""
