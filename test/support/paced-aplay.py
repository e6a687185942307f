#!/usr/bin/env python3
"""A stand-in for `aplay -D null` that plays in real time (the stop bench,
test/bench/stop.ts). ALSA's null device takes a whole sentence at once (3.6 s
of speech in 15 ms), so a player there lives only as long as its input keeps
coming and a stop rarely finds one playing. A sound card takes audio at its
sample rate, with a small buffer: so does this. It reads raw PCM on stdin,
with aplay's arguments (-r rate, -c channels, 16-bit samples), never more
than BUFFER_S ahead of the clock, and exits once what it took has had time
to play, as aplay does after draining. Python's standard library only, and a
small single-threaded process like aplay (the stop's figure includes the
kernel tearing the killed process down)."""
import os
import sys
import time

BUFFER_S = 0.2
args = sys.argv[1:]


def arg(flag, fallback):
    return int(args[args.index(flag) + 1]) if flag in args and args.index(flag) + 1 < len(args) else fallback


bytes_per_s = arg("-r", 22050) * arg("-c", 1) * 2
t0 = time.monotonic()
taken = 0
while True:
    chunk = os.read(0, 4096)
    if not chunk:
        break
    taken += len(chunk)
    ahead = taken / bytes_per_s - (time.monotonic() - t0)
    if ahead > BUFFER_S:
        time.sleep(ahead - BUFFER_S / 2)
time.sleep(max(0.0, taken / bytes_per_s - (time.monotonic() - t0)))
