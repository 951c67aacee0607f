"""Audio types, sources and sinks."""

from .chunk import FRAME_BYTES, FRAME_MS, FRAME_SAMPLES, PIPELINE_RATE_HZ, AudioChunk

__all__ = ["FRAME_BYTES", "FRAME_MS", "FRAME_SAMPLES", "PIPELINE_RATE_HZ", "AudioChunk"]
