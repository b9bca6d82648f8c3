"""The trace format: versioned NDJSON shared by model counterexamples and external
implementations (docs/trace-format.md). Pure: encoding and decoding of lines, no I/O."""

from model.trace.codec import (
    FORMAT,
    TIMING_FIELDS,
    VERSION,
    TraceError,
    TraceEvent,
    TraceHeader,
    decode_action,
    encode_action,
    parse_event,
    parse_header,
    path_lines,
    read_path,
)

__all__ = [
    "FORMAT",
    "TIMING_FIELDS",
    "VERSION",
    "TraceError",
    "TraceEvent",
    "TraceHeader",
    "decode_action",
    "encode_action",
    "parse_event",
    "parse_header",
    "path_lines",
    "read_path",
]
