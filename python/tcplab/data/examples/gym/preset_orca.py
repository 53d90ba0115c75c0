"""A hand-written Orca controller as a preset file: `tcplab run preset.toml` runs it.

The file a spec names with ``cc = "preset:preset_orca.py"`` (docs/learning.md, "A preset
written in Python, run whole"): ``PRESET`` is tcplab.gym's Orca preset (CUBIC underneath,
Orca's 7 features over its last 10 reports, the window scaled by 4^a), ``policy`` maps
an observation to an action, and ``INTERVAL`` is Orca's 20 ms report period. A trained
network would go in ``policy``; this one is a rule, so that the file runs anywhere
without training: when the newest report's delay metric (its 7th feature, 1.25 x min
RTT / srtt once srtt exceeds 1.25 x min RTT, else 1) says the queue holds more than a
quarter of the path's RTT, shrink CUBIC's window by 4^-0.1 (13 %) a report; otherwise
leave it (a = 0 writes CUBIC's own window back). Subclass ``Orca`` (or ``Preset``) to
change what the agent sees, does or is paid.
"""

from tcplab.gym.presets import Orca

PRESET = Orca
INTERVAL = "20ms"  # Orca's report period (src/orca-server-mahimahi.cc)
FEATURES = 7  # per report, newest last


def policy(observation):
    delay_metric = float(observation[-1])  # the newest report's last feature
    return -0.1 if delay_metric < 1.0 else 0.0
