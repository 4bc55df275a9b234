"""What the headless-Chromium checks (tools/check_*.sh) read from a rendered page: a time shown in
the DOM, and the colours of the screenshot. Standard library only.
"""
import re
import struct
import sys
import zlib


def finish(failures):
    """Prints the verdict and exits 1 when anything failed."""
    if failures:
        print("FAILED: " + "; ".join(failures))
        sys.exit(1)
    print("passed")


def seconds_failures(dom, span_id, seconds):
    """Checks <span id=SPAN_ID data-seconds=EXACT>SHOWN</span>: EXACT equal to `seconds` and
    SHOWN ("12.35 ms") equal to it in four significant digits. Returns the failures found."""
    m = re.search(rf'<span id="{span_id}" data-seconds="([^"]+)">([0-9.]+) (s|ms|us)</span>', dom)
    if not m:
        return [f"no {span_id} element in the DOM"]
    exact, shown = float(m.group(1)), float(m.group(2)) * {"s": 1, "ms": 1e-3, "us": 1e-6}[m.group(3)]
    failures = []
    if exact != seconds:
        failures.append(f"{span_id}: data-seconds {exact} != JSON {seconds}")
    if abs(shown - seconds) > 5e-4 * seconds:  # four significant digits
        failures.append(f"{span_id}: shown {m.group(2)} {m.group(3)} != JSON {seconds} s")
    return failures


def blank_failures(width, height, counts):
    """A page that paints under 2 % of its pixels in anything but white is blank."""
    total, white = width * height, counts.get(b"\xff\xff\xff", 0)
    print(f"screenshot {width}x{height}: {len(counts)} colours, {100 * (total - white) / total:.1f} % not white")
    return [f"screenshot nearly blank: {total - white} of {total} pixels not white"] if total - white < 0.02 * total else []


def colour_counts(path):
    """Decodes a PNG of 8-bit RGB or RGBA, not interlaced (what Chromium writes).
    Returns (width, height, {b"\\xrr\\xgg\\xbb": pixels})."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"unexpected PNG format {depth} {colour} {interlace}"
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    counts, prev = {}, bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for i in range(0, stride, bpp):
            rgb = bytes(line[i:i + 3])
            counts[rgb] = counts.get(rgb, 0) + 1
        prev = line
    return width, height, counts
