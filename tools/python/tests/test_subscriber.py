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


def _io_thread_cpus():
    """The CPUs each of this process's ZeroMQ I/O threads may run on."""
    import glob
    import os
    found = []
    for task in glob.glob("/proc/self/task/*"):
        try:
            with open(f"{task}/comm") as f:
                if "ZMQbg/IO/" in f.read():
                    found.append(os.sched_getaffinity(int(os.path.basename(task))))
        except (FileNotFoundError, ProcessLookupError):  # a thread that ended meanwhile
            continue
    return found


def test_subscriber_io_cpu_places_its_io_thread_on_that_cpu():
    import os
    import pytest
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("the process may use only one CPU: a placement cannot be told apart")
    cpu = cpus[-1]
    assert {cpu} not in _io_thread_cpus()             # nothing placed there yet
    sub = eitstream.Subscriber("tcp://127.0.0.1:9", io_cpu=cpu)  # connecting is asynchronous
    deadline = time.time() + 2
    while {cpu} not in _io_thread_cpus() and time.time() < deadline:
        time.sleep(0.01)                              # the thread pins itself as it starts
    assert {cpu} in _io_thread_cpus()
    sub.close()
    with pytest.raises(ValueError, match="io_cpu or context"):
        eitstream.Subscriber("tcp://127.0.0.1:9", io_cpu=cpu, context=sub.context)


def _batch_parts(seqs, n=4):
    """A batch message as `run --publish-batch` sends it: headers back to back, then payloads."""
    import numpy as np
    hs = np.zeros(len(seqs), eitstream.HEADER)
    hs["magic"], hs["version"], hs["header_bytes"], hs["dtype"], hs["ndim"] = 0x49544945, 1, 112, 1, 1
    hs["shape"] = [(n, 1)] * len(seqs)
    hs["count"], hs["seq"] = n, seqs
    payload = np.concatenate([np.full(n, s, "<f4") for s in seqs])
    return [b"eit/t/imgs", hs.tobytes(), payload.tobytes()]


def test_decode_batch_splits_images_and_refuses_parts_that_disagree():
    import pytest
    _, headers, payloads = _batch_parts([5, 6, 7])
    images = eitstream.decode_batch(headers, payloads)
    assert [int(h["seq"]) for h, _ in images] == [5, 6, 7]
    assert [float(img[0]) for _, img in images] == [5.0, 6.0, 7.0]
    with pytest.raises(ValueError, match="payload part"):
        eitstream.decode_batch(headers, payloads[:-4])
    with pytest.raises(ValueError, match="multiple of 112"):
        eitstream.decode_batch(headers[:-1], payloads)


def test_subscriber_reads_batch_messages_one_by_one_or_conflated():
    import zmq
    ctx = zmq.Context()
    pub = ctx.socket(zmq.PUB)
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    for conflate, expected in ((False, [10, 11, 12]), (True, [12])):
        sub = eitstream.Subscriber(f"tcp://127.0.0.1:{port}", conflate=conflate, context=ctx)
        got, deadline = [], time.time() + 5
        while not got and time.time() < deadline:   # until the subscription has arrived
            pub.send_multipart(_batch_parts([10, 11, 12]))
            im = sub.next(timeout_ms=100)
            if im is not None:
                got.append(im)
        while len(got) < len(expected):
            got.append(sub.next(timeout_ms=0))
        assert [im.seq for im in got] == expected
        if conflate:
            assert got[0].skipped >= 2                # the batch's first two images were passed over
        sub.close()
    pub.close(linger=0)
    ctx.term()


def test_malformed_image_is_dropped_and_counted_and_next_keeps_its_deadline():
    import zmq
    ctx = zmq.Context()
    pub = ctx.socket(zmq.PUB)
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    sub = eitstream.Subscriber(f"tcp://127.0.0.1:{port}", conflate=False, context=ctx)
    topic, headers, payloads = _batch_parts([1, 2])
    got, deadline = None, time.time() + 5
    while got is None and time.time() < deadline:   # until the subscription has arrived
        pub.send_multipart([topic, headers, payloads[:-4]])     # payload cut short: malformed
        pub.send_multipart([topic, headers, payloads])
        got = sub.next(timeout_ms=100)
    assert got is not None and got.seq == 1          # the good message after the bad one
    assert sub.malformed >= 1                       # dropped and counted, no exception
    while sub.next(timeout_ms=0) is not None:
        pass
    # Series messages every 200 ms and no image: next(500) returns None after 0.5 s (each series
    # message used to restart the wait: None only 0.5 s after the last of them).
    import threading
    def series_for(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            pub.send_multipart([b"eit/t/series", b'{"type":"series"}'])
            time.sleep(0.2)
    t = threading.Thread(target=series_for, args=(2.0,))
    t.start()
    t0 = time.monotonic()
    assert sub.next(timeout_ms=500) is None
    took = time.monotonic() - t0
    t.join()
    assert 0.45 < took < 1.2
    sub.close()
    pub.close(linger=0)
    ctx.term()


def test_io_cpu_this_process_may_not_use_is_refused_not_aborted():
    import os
    import pytest
    cpu = max(os.sched_getaffinity(0)) + 1
    with pytest.raises(ValueError, match=f"io_cpu={cpu}"):
        eitstream.Subscriber("tcp://127.0.0.1:1", io_cpu=cpu)
