"""The shipped acoustic model in the form sphinxtrain's ``bw`` reads.

The model the ``pocketsphinx`` wheel ships keeps its mixture weights only as ``sendump``
(8-bit quantised, for decoding); ``bw`` needs ``mixture_weights`` (floats, sphinxtrain's
"s3" binary file) and a text ``mdef``. ``sendump``: a header of length-prefixed strings
(``feature_count``, ``mixw_shift``, ...) ended by a zero length, the number of codewords
and of senones (int32), then for every feature stream and codeword one byte per senone,
``q``: the weight is ``1.0001 ** -(q << mixw_shift)`` (PocketSphinx's log base).
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import numpy.typing as npt

from .inputs import EnrolError

#: Byte-order mark of an s3 file, written in the writer's byte order.
_S3_MAGIC = 0x11223344
_LOG_BASE = 1.0001


def read_sendump(path: Path) -> npt.NDArray[np.float32]:
    """Mixture weights (senone, stream, codeword), each senone's stream summing to 1."""
    data = path.read_bytes()
    offset = 0

    def int32() -> int:
        nonlocal offset
        (value,) = struct.unpack_from("<i", data, offset)
        offset += 4
        return int(value)

    header: dict[str, str] = {}
    while (length := int32()) != 0:
        if not 0 < length < 65536:
            raise EnrolError(
                f"{path} is not a little-endian sendump file. Fix: reinstall pocketsphinx"
            )
        key, _, value = data[offset : offset + length].rstrip(b"\0").decode().partition(" ")
        header[key] = value
        offset += length
    if int(header.get("cluster_count", "0")) != 0:
        raise EnrolError(f"{path} holds clustered weights, which enrolment cannot read")
    streams = int(header.get("feature_count", "1"))
    shift = int(header.get("mixw_shift", "10"))
    codewords, senones = int32(), int32()
    size = streams * codewords * senones
    if len(data) - offset < size:
        raise EnrolError(f"{path} is cut short. Fix: reinstall pocketsphinx")
    quantised = np.frombuffer(data, np.uint8, size, offset).reshape(streams, codewords, senones)
    weights = np.power(_LOG_BASE, -(quantised.astype(np.float64) * (1 << shift)))
    weights = weights.transpose(2, 0, 1)
    weights /= weights.sum(axis=2, keepdims=True)
    return weights.astype(np.float32)


def write_s3(path: Path, array: npt.NDArray[np.float32]) -> None:
    """A 3-D float array as an s3 binary file (no checksum), as sphinxtrain writes them."""
    if array.ndim != 3:
        raise ValueError("s3 mixture weights are 3-D")
    with open(path, "wb") as out:
        out.write(b"s3\nversion 1.0\nendhdr\n")
        out.write(struct.pack("<I", _S3_MAGIC))
        out.write(struct.pack("<III", *array.shape))
        out.write(struct.pack("<I", array.size))
        out.write(array.astype("<f4").tobytes())
