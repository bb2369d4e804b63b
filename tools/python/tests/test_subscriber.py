import re
import subprocess
import time

import eitstream


def test_conflating_subscriber_stays_on_the_newest_frame(eitstream_bin):
    p = subprocess.Popen([eitstream_bin, "run", "--fps", "400", "--duration", "6",
                          "--endpoint", "tcp://127.0.0.1:*", "--quiet"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        match = None
        for _ in range(20):  # the start-up lines (backend choice, reference, …) come first
            match = re.search(r"on (tcp://127\.0\.0\.1:\d+)", p.stderr.readline())
            if match:
                break
        endpoint = match.group(1)
        sub = eitstream.Subscriber(endpoint)
        first = None
        deadline = time.time() + 5
        while first is None and time.time() < deadline:
            first = sub.next(timeout_ms=500)
        assert first is not None and first.image.shape == (32, 32)
        assert first.series.get("geometry", {}).get("kind") in (None, "grid")
        time.sleep(1.0)  # a slow consumer: ~400 frames arrive meanwhile
        im = sub.next()
        assert im.skipped > 100                       # it jumped over the backlog…
        assert im.seq - first.seq > 300               # …to (about) the newest frame
        assert im.latency_us() < 200_000              # and is not 1 s behind
        sub.close()
    finally:
        p.wait(timeout=20)
