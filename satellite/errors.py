"""Errors raised by Pocket Satellite; each message says what to do about it."""


class SatelliteError(Exception):
    """Base class of every error this package raises on purpose."""


class MissingDependencyError(SatelliteError):
    """An optional package is not installed."""

    def __init__(self, package: str, extra: str | None, purpose: str) -> None:
        how = f"pip install 'pocket-satellite[{extra}]'" if extra else f"pip install {package}"
        super().__init__(
            f"{purpose} needs the Python package '{package}', which is not installed. "
            f"Install it with: {how}"
        )
        self.package = package
        self.extra = extra


class AudioFormatError(SatelliteError):
    """Audio is not in a format the pipeline can use."""


class AudioDeviceError(SatelliteError):
    """An audio device could not be opened or used."""
