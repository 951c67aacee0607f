"""Care signal: speech rate per utterance, per-speaker baselines, rushed-speech alerts.

Import from the submodules (``satellite.prosody.monitor``, ``.settings``, ...): this
package imports nothing itself, so reading the configuration does not load the acoustic
analysis (numpy only: :mod:`.dsp` stands in for scipy, which is a dev dependency now).
"""
