#!/usr/bin/env python3
"""Seeds for the fuzz targets, cut from Protocol/examples/*.transcript.

    python3 Tests/Fuzz/extract_seeds.py Protocol/examples .build/fuzz/seeds

Writes (format of the transcripts: Protocol/examples/README.md):
  http-head/  each `C:` request (head + body, Content-Length: {auto} filled in), and per transcript the
              whole client byte stream: every request, then every `C>` frame (the bytes a server reads)
  frame/      each `C>` frame as a masked client frame, and per transcript all of them in order
  command/    each `C> text` payload and each HTTP request body (JSON)
`{$name}` placeholders get fixed stand-ins (a token-shaped string, an id-shaped string).
"""
import pathlib
import re
import sys

TARGETS = ("http-head", "frame", "command")
FAKE_TOKEN = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJlLXN0YW5kLWlu"


def substitute(text: str) -> str:
    def value(match: re.Match) -> str:
        name = match.group(1)
        if any(word in name for word in ("token", "access", "refresh")):
            return FAKE_TOKEN
        return "0190d6a4-7c2e-7b3a-9f00-%012x" % (sum(name.encode()) & 0xFFFFFFFFFFFF)
    return re.sub(r"\{\$([A-Za-z0-9_]+)\}", value, text)


def request_bytes(lines: list) -> tuple:
    """As Tests/TestSupport/TranscriptReplayer.swift builds it: head lines joined by CRLF, a blank
    line, then the body lines joined by LF."""
    lines = [substitute(line) for line in lines]
    blank = lines.index("") if "" in lines else len(lines)
    body = "\n".join(lines[blank + 1:]).encode()
    head = [f"Content-Length: {len(body)}" if line == "Content-Length: {auto}" else line for line in lines[:blank]]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body, body


def mask(payload: bytes, key: bytes) -> bytes:
    return bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def frame(opcode: int, payload: bytes, key: bytes, fin: bool = True) -> bytes:
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n <= 0xFFFF:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    return head + key + mask(payload, key)


def frame_bytes(spec: str, key: bytes) -> bytes:
    kind, _, rest = spec.partition(" ")
    rest = substitute(rest)
    if kind == "text":
        return frame(0x1, rest.encode(), key)
    if kind == "binary":
        return frame(0x2, bytes.fromhex(rest), key)
    if kind == "ping":
        return frame(0x9, rest.encode(), key)
    if kind == "pong":
        return frame(0xA, rest.encode(), key)
    if kind == "raw":
        return bytes.fromhex(rest)
    if kind == "close":
        if not rest:
            return frame(0x8, b"", key)
        code, _, reason = rest.partition(" ")
        return frame(0x8, int(code).to_bytes(2, "big") + reason.encode(), key)
    raise ValueError(f"unknown frame `{spec}`")


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    examples, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    for target in TARGETS:
        (out / target).mkdir(parents=True, exist_ok=True)
    written = dict.fromkeys(TARGETS, 0)

    def write(target: str, name: str, data: bytes) -> None:
        (out / target / name).write_bytes(data)
        written[target] += 1

    transcripts = sorted(examples.glob("*.transcript"))
    if not transcripts:
        print(f"extract_seeds: no transcripts in {examples}", file=sys.stderr)
        return 1
    for path in transcripts:
        stem = path.stem
        requests, frames = [], []
        current = None  # the C: lines of the request being read
        for raw in path.read_text(encoding="utf-8").split("\n"):
            line = raw[:-1] if raw.endswith("\r") else raw
            if not line or line.startswith("#"):
                continue
            tag, content = line[:2], line[2:]
            if content.startswith(" "):
                content = content[1:]
            if tag == "C:":
                if current is None:
                    current = []
                    requests.append(current)
                current.append(content)
                continue
            current = None
            if tag == "C>":
                frames.append(content)
        stream = b""
        for index, lines in enumerate(requests, 1):
            data, body = request_bytes(lines)
            write("http-head", f"{stem}-{index:02}.http", data)
            if body:
                write("command", f"{stem}-body-{index:02}.json", body)
            stream += data
        all_frames = b""
        for index, spec in enumerate(frames, 1):
            key = bytes([0x37, 0xFA, 0x21, index & 0xFF])
            try:
                data = frame_bytes(spec, key)
            except ValueError as error:  # a transcript being edited: skip the line, keep the rest
                print(f"extract_seeds: {path.name}: skipped `C> {spec}`: {error}", file=sys.stderr)
                continue
            write("frame", f"{stem}-{index:02}.bin", data)
            all_frames += data
            if spec.startswith("text "):
                write("command", f"{stem}-frame-{index:02}.json", substitute(spec[5:]).encode())
        if len(frames) > 1:
            write("frame", f"{stem}-all.bin", all_frames)
        stream += all_frames
        if stream and len(requests) + len(frames) > 1:
            write("http-head", f"{stem}-stream.bin", stream)
    print("extract_seeds: " + ", ".join(f"{t}: {n}" for t, n in written.items())
          + f" from {len(transcripts)} transcripts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
