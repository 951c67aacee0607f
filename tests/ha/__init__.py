"""Tests of the Home Assistant component (Python 3.13; run by scripts/test_ha.sh)."""
