// The live view: one WebSocket (/ws) per page. Binary messages are images (Wire.decode), text
// messages JSON: hello (streams, whether recapture is available), series, series-end, status
// (server counters, source state), and the indices' global / breath messages when the stream has
// them. onmessage only keeps the newest image; requestAnimationFrame draws it, so the page shows
// frames at the stream's rate up to the display's refresh and never falls behind. The page asks
// the server for at most PACE_PER_FRAME images per display frame (the newest each time), so a
// 1,000 frames/s stream costs it ~120 messages/s, not 1,000. After drawing, the page reports
// {seq, paint time, when it received the image, when the display frame began} back, which the
// server turns into the display latency and its parts.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const view = new ImageView($("image"));
  const wave = new Waveform($("wave"));
  const st = {
    ws: null, link: "connecting", attempts: 0, streams: [], stream: null, recapture: false,
    series: null, seriesId: null, ended: false, latest: null, drawnSeq: -1, frozen: false,
    framesReceived: 0, framesDrawn: 0, lastSeq: null, pipelineDrops: 0, skipped: 0, thinned: 0,
    overwritten: 0, lastFrameWall: 0, startedWall: Wire.nowWallMs(), recvTimes: [], recvSeqs: [],
    drawTimes: [], latencyMs: [], frameIntervals: [], lastFrameTs: 0, refreshHz: 60, paceHz: 0,
    seqWall: new Map(), waveDrawn: 0,  // seq → acquisition wall time of recent frames (breath marks)
    scale: 0, scaleLowSince: 0, publishedGlobal: false, status: null, lastError: "",
    globalPoints: 0, breaths: 0, lastBreath: null,
  };
  window.eitView = st;  // for tests and for curious people at the console
  window.eitImageView = view;

  // ---------- socket ----------
  function connect() {
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
    const ws = new WebSocket(url);
    ws.binaryType = "arraybuffer";
    st.ws = ws;
    ws.onopen = () => {
      st.attempts = 0; setLink("live");
      // At most 32 images in flight: if this page's script falls behind, the server holds the
      // newest image back (and skips older ones) instead of letting them queue up in the browser.
      send({ type: "flow", window: 32 });
      st.paceHz = 0; sendPace(st.refreshHz);
      const wanted = new URLSearchParams(location.hash.slice(1)).get("stream");
      if (wanted) send({ type: "select", stream: wanted });
    };
    ws.onmessage = (ev) => (typeof ev.data === "string" ? onText(ev.data) : onImage(ev.data));
    ws.onclose = () => {
      st.ws = null; setLink("reconnecting");
      const delay = Math.min(2000, 250 * 2 ** st.attempts++);
      setTimeout(connect, delay);
    };
  }
  const ACK = JSON.stringify({ type: "ack" });  // the server reads exactly this text fast

  // Images per display frame to ask for: 2 keeps the newest drawn image under half a display frame
  // old (plus transport). A display measured slower than 60 Hz still asks for 120/s, so a page
  // the machine holds up for a moment keeps every frame of a 50 frames/s stream.
  const PACE_PER_FRAME = 2;
  function sendPace(refreshHz) {
    const hz = Math.round(PACE_PER_FRAME * Math.max(60, Math.min(refreshHz, 500)));
    if (st.paceHz && Math.abs(hz - st.paceHz) <= 0.15 * st.paceHz) return;
    st.paceHz = hz;
    send({ type: "pace", max_rate_hz: hz });
  }
  function send(obj) {
    if (st.ws && st.ws.readyState === 1) st.ws.send(typeof obj === "string" ? obj : JSON.stringify(obj));
  }

  function onImage(buffer) {
    send(ACK);
    const img = Wire.decode(buffer);
    if (!img) return;
    const now = Wire.nowWallMs();
    st.framesReceived++;
    img.recvWallMs = now;
    if (st.lastSeq !== null && img.seq < st.lastSeq) {  // a new run
      wave.clear(); st.recvTimes.length = 0; st.recvSeqs.length = 0;
    }
    st.recvTimes.push(now); st.recvSeqs.push(img.seq);
    st.latencyMs.push(now - img.acquiredWallMs);
    st.lastSeq = img.seq;
    st.pipelineDrops += img.droppedBefore;
    st.lastFrameWall = now;
    st.seqWall.set(img.seq, img.acquiredWallMs);
    if (st.seqWall.size > 4096) st.seqWall.delete(st.seqWall.keys().next().value);
    if (!st.frozen) st.latest = img;
    if (!st.publishedGlobal && st.series && img.seriesId === st.seriesId)
      wave.push(img.acquiredWallMs, globalValue(img.values));
  }

  function globalValue(values) {
    const g = st.series.geometry;
    let s = 0;
    if (g.kind === "grid") { for (let i = 0; i < values.length; i++) if (!g.mask[i]) s += values[i]; }
    else for (let i = 0; i < values.length; i++) s += values[i];
    return s;
  }

  function onText(text) {
    let m; try { m = JSON.parse(text); } catch { return; }
    switch (m.type) {
      case "hello":
        st.streams = m.streams || []; st.recapture = !!m.recapture;
        $("recapture").hidden = !st.recapture;
        fillStreams();
        break;
      case "series":
        st.series = m; st.seriesId = m.series_id; st.ended = false;
        view.setSeries(m);
        $("model-info").textContent =
          `${m.algorithm} · ${m.image.shape.join("×")} · ${m.electrodes} electrodes · ` +
          `${m.rate_hz ? m.rate_hz + " frames/s" : ""}`;
        $("units").textContent = m.units ? `colour: ${m.units}` : "";
        $("stream-name").textContent = `${m.stream} — ${m.source || ""}`;
        break;
      case "series-end": st.ended = true; break;
      case "status": onStatus(m); break;
      case "global":  // eit/<stream>/global from the indices stage, batched by the server
        onGlobal(m);
        break;
      case "breath": onBreath(m); break;
    }
  }

  // {seq: [...], frame: [...], value: [...], t_wall_ms: [...]}: one point per frame. The time of
  // a point is its image's acquisition time when the page got that image (the image header's
  // clocks work across hosts), else the server's estimate.
  function onGlobal(m) {
    if (!Array.isArray(m.value) || !Array.isArray(m.seq)) return;
    if (!st.publishedGlobal) {
      st.publishedGlobal = true; wave.clear();
      $("wave-info").textContent = "published global impedance (indices) · last 30 s";
    }
    for (let i = 0; i < m.value.length; i++) {
      const seq = m.seq[i];
      let t = st.seqWall.get(seq);
      if (t === undefined) {
        t = Array.isArray(m.t_wall_ms) ? m.t_wall_ms[i] : Wire.nowWallMs();
        st.seqWall.set(seq, t);
        if (st.seqWall.size > 4096) st.seqWall.delete(st.seqWall.keys().next().value);
      }
      if (typeof m.value[i] === "number") { wave.push(t, m.value[i]); st.globalPoints++; }
    }
  }

  // eit/<stream>/breath: one message per completed breath with its indices. The waveform gets a
  // mark at the breath's start (valley), its end-inspiratory peak, and a labelled end; the side
  // panel shows the numbers.
  const BREATH_FIELDS = [
    ["rate_per_min", "Rate", "/min"], ["tiv", "TIV", ""], ["eeli", "EELI", ""],
    ["eeli_change", "ΔEELI", ""], ["cov_vertical_pct", "CoV vert.", "%"],
    ["cov_horizontal_pct", "CoV horiz.", "%"], ["gi", "GI", ""], ["rvd_index_pct", "RVDI", "%"],
    ["silent_dependent_pct", "Silent dep.", "%"], ["silent_nondependent_pct", "Silent non-dep.", "%"],
  ];
  function onBreath(m) {
    const when = (seq) => (st.seqWall.has(seq) ? st.seqWall.get(seq) : null);
    const seqs = Array.isArray(m.seq) ? m.seq : [];
    const [tStart, tPeak, tEnd] = seqs.map(when);
    if (tStart !== null && tStart !== undefined) wave.mark(tStart, "", "valley");
    if (tPeak !== null && tPeak !== undefined) wave.mark(tPeak, "", "peak");
    const label = [typeof m.rate_per_min === "number" ? `${m.rate_per_min.toFixed(0)}/min` : "",
                   typeof m.tiv === "number" ? `TIV ${m.tiv.toPrecision(3)}` : ""].filter(Boolean).join(" ");
    wave.mark(tEnd !== null && tEnd !== undefined ? tEnd : Wire.nowWallMs(), label, "end");
    st.breaths++; st.lastBreath = m;
    const shown = BREATH_FIELDS.filter(([k]) => typeof m[k] === "number");
    $("breath-info").textContent = shown.slice(0, 4)
      .map(([k, label, unit]) => `${label} ${m[k].toPrecision(3)}${unit}`).join(" · ");
    $("breath-tile").hidden = false;
    $("breath-number").textContent = `#${m.number ?? st.breaths}`;
    $("breath-numbers").innerHTML = "";
    for (const [k, label, unit] of shown) {
      const row = document.createElement("div");
      row.dataset.key = k;
      row.textContent = `${label}  ${m[k].toPrecision(3)}${unit ? " " + unit : ""}`;
      $("breath-numbers").appendChild(row);
    }
  }

  function onStatus(m) {
    st.status = m;
    if (m.browser) { st.skipped = m.browser.images_skipped; st.thinned = m.browser.images_thinned || 0; }
    if (m.stream_state) st.overwritten = m.stream_state.overwritten || 0;
    if (m.streams && m.streams.join() !== st.streams.join()) { st.streams = m.streams; fillStreams(); }
    if (m.stream && m.stream !== st.stream) { st.stream = m.stream; fillStreams(); }
    const src = m.source || {};
    let text = "", err = "";
    if (src.kind === "pipeline") {
      text = `pipeline ${src.running ? "running" : "stopped"} · ${src.backend}\n` +
             `in ${src.frames_in} · out ${src.frames_out} · lost before the sinks ${src.dropped}\n` +
             (src.sinks || []).map((k) => `${k.name} sent ${k.sent} dropped ${k.dropped}`).join(" · ") + "\n" +
             `pipeline p99 ${Number(src.latency_p99_ms).toFixed(2)} ms · references ${src.reference_captures}`;
      const dev = src.source;
      if (dev && (dev.reconnects || dev.seq_gaps || dev.bad_frames || dev.reordered || dev.bytes_skipped))
        text += `\ndevice: reconnects ${dev.reconnects} · gaps ${dev.seq_gaps} · bad ${dev.bad_frames}` +
                ` · out of order ${dev.reordered ?? 0} · bytes skipped ${dev.bytes_skipped ?? 0}`;
      // What opening the source found (a replay's truncated file, …): said once by run, kept here.
      for (const w of src.warnings || []) text += `\nwarning: ${w}`;
      err = src.error || (src.source && src.source.last_error) || "";
    } else if (Array.isArray(src.endpoints)) {  // eitstream view: ZeroMQ and NATS subscriptions
      text = (src.endpoints || []).map((e) => `${e.endpoint}  ${e.state.toUpperCase()}  images ${e.images}` +
                                       (e.reconnects ? `  reconnects ${e.reconnects}` : "")).join("\n");
      err = (src.endpoints || []).map((e) => e.last_error).filter(Boolean).join("; ");
    }
    $("source-state").textContent = text || "–";
    if (err) st.lastError = `${new Date().toLocaleTimeString()}  ${err}`;
    $("last-error").textContent = st.lastError || "none";
    $("last-error").classList.toggle("warn", !!st.lastError);
  }

  function fillStreams() {
    const sel = $("stream-select");
    $("stream-chooser").hidden = st.streams.length < 2;
    sel.innerHTML = "";
    for (const s of st.streams) {
      const o = document.createElement("option");
      o.value = s; o.textContent = s; o.selected = s === st.stream;
      sel.appendChild(o);
    }
  }
  $("stream-select").onchange = (e) => {
    st.stream = e.target.value; st.series = null; st.latest = null; st.lastSeq = null; wave.clear();
    st.recvTimes.length = 0; st.recvSeqs.length = 0;  // another stream's seq numbers
    location.hash = `stream=${encodeURIComponent(st.stream)}`;
    send({ type: "select", stream: st.stream });
  };

  // ---------- controls ----------
  $("freeze").onclick = () => {
    st.frozen = !st.frozen;
    $("freeze").classList.toggle("active", st.frozen);
    $("freeze").textContent = st.frozen ? "Resume" : "Freeze";
    $("frozen-badge").hidden = !st.frozen;
  };
  $("scale-mode").onchange = (e) => { $("fixed-wrap").hidden = e.target.value !== "fixed"; };
  $("recapture").onclick = async () => {
    const out = $("recapture-result");
    out.textContent = "recapturing…";
    try {
      const r = await fetch("/api/recapture?frames=50", { method: "POST" });
      const j = await r.json();
      out.textContent = r.ok ? `new reference from the next ${j.frames} frames` : j.error;
    } catch (e) { out.textContent = String(e); }
  };

  // Auto scale with hysteresis: grow at once to 1.2 × the peak; shrink only after the peak has
  // stayed below half the scale for 3 s.
  function colourScale(values, now) {
    if ($("scale-mode").value === "fixed") return Math.abs(Number($("scale-fixed").value)) || 1;
    const g = st.series.geometry;
    let peak = 0;
    for (let i = 0; i < values.length; i++)
      if (!(g.kind === "grid" && g.mask[i])) peak = Math.max(peak, Math.abs(values[i]) || 0);
    if (peak === 0) return st.scale || 1;
    if (peak > st.scale) { st.scale = 1.2 * peak; st.scaleLowSince = 0; }
    else if (peak < 0.5 * st.scale) {
      if (!st.scaleLowSince) st.scaleLowSince = now;
      else if (now - st.scaleLowSince > 3000) { st.scale = 1.2 * peak; st.scaleLowSince = 0; }
    } else st.scaleLowSince = 0;
    return st.scale;
  }

  // ---------- drawing ----------
  function setLink(state) { st.link = state; }
  const pct = (arr, q) => { const a = [...arr].sort((x, y) => x - y); return a[Math.min(a.length - 1, Math.floor(q * a.length))]; };

  function frame(ts) {
    const now = Wire.nowWallMs();
    const img = st.latest;
    const ready = st.series && img && img.seriesId === st.seriesId;
    if (ready && img.seq !== st.drawnSeq) {
      view.draw(img.values, colourScale(img.values, now), st.series.units);
      st.drawnSeq = img.seq; st.framesDrawn++;
      const paint = Wire.nowWallMs();
      st.drawTimes.push(paint);
      send({ type: "painted", seq: img.seq, paint_wall_ms: paint, recv_wall_ms: img.recvWallMs,
             raf_wall_ms: now });
    }
    if (now - st.waveDrawn >= 40) { wave.draw(now); st.waveDrawn = now; }  // 25 Hz is smooth enough
    measureRefresh(ts);
    requestAnimationFrame(frame);
  }

  // The display's refresh from the median interval of 60 display frames; the pace follows it.
  function measureRefresh(ts) {
    if (st.lastFrameTs) st.frameIntervals.push(ts - st.lastFrameTs);
    st.lastFrameTs = ts;
    if (st.frameIntervals.length < 60) return;
    const median = pct(st.frameIntervals, 0.5);
    st.frameIntervals.length = 0;
    if (median > 0) { st.refreshHz = 1000 / median; sendPace(st.refreshHz); }
  }

  // Numbers and the state line, 4 times a second.
  function updateNumbers() {
    const now = Wire.nowWallMs();
    const cut = now - 2000;
    while (st.recvTimes.length && st.recvTimes[0] < cut) { st.recvTimes.shift(); st.recvSeqs.shift(); }
    while (st.drawTimes.length && st.drawTimes[0] < cut) st.drawTimes.shift();
    if (st.latencyMs.length > 2000) st.latencyMs.splice(0, st.latencyMs.length - 2000);
    // The stream's rate from the seq numbers: a paced page receives fewer images than the stream has.
    const n = st.recvTimes.length, received = n / 2, dps = st.drawTimes.length / 2;
    const span = n > 1 ? st.recvTimes[n - 1] - st.recvTimes[0] : 0;
    const fps = span > 250 ? (1000 * (st.recvSeqs[n - 1] - st.recvSeqs[0])) / span : received;
    $("fps").textContent = fps.toFixed(fps < 10 ? 1 : 0);
    $("fps-sub").textContent = `received ${received.toFixed(0)}/s · drawn ${dps.toFixed(0)}/s`;
    const recent = st.latencyMs.slice(-Math.max(10, st.recvTimes.length));
    $("latency").textContent = recent.length ? pct(recent, 0.5).toFixed(1) : "–";
    $("frames").textContent = String(st.framesReceived);
    $("seq").textContent = st.lastSeq === null ? "–" : String(st.lastSeq);
    // Thinned images (more than the display can show) are no loss; the rest are.
    const drops = st.pipelineDrops + st.skipped + st.overwritten;
    $("drops").textContent = String(drops);
    $("drops").classList.toggle("warn", drops > 0);
    $("drops-sub").textContent = `pipeline ${st.pipelineDrops} · skipped ${st.skipped} · ` +
                                 `not taken ${st.overwritten} · thinned ${st.thinned}`;
    $("clock").textContent = new Date().toLocaleTimeString();

    // State pill and overlay, most serious first.
    const pill = $("link"), overlay = $("overlay"), notice = $("notice");
    const period = st.series && st.series.rate_hz ? 1000 / st.series.rate_hz : 100;
    const silent = st.lastFrameWall ? now - st.lastFrameWall : now - st.startedWall;
    let label = "LIVE", cls = "pill-live", message = "", note = "";
    if (st.link !== "live") {
      label = st.link === "reconnecting" ? "RECONNECTING" : "CONNECTING"; cls = "pill-wait";
      message = "Connecting to the view server…";
    } else if (!st.series || (st.latest && st.latest.seriesId !== st.seriesId)) {
      label = "WAITING"; cls = "pill-wait";
      message = "Waiting for the series message (image geometry)…" +
                (st.framesReceived ? `\n${st.framesReceived} frames received meanwhile` : "");
    } else if (silent > Math.max(1000, 5 * period)) {
      label = st.ended ? "ENDED" : "NO FRAMES"; cls = st.ended ? "pill-wait" : "pill-alarm";
      note = st.lastFrameWall ? `no frames since ${new Date(st.lastFrameWall).toLocaleTimeString()}`
                              : "no frames yet";
      if (st.ended) note = `series ended · ${note}`;
    }
    pill.className = `pill ${cls}`; pill.textContent = label; pill.dataset.state = label.toLowerCase();
    overlay.hidden = !message; overlay.textContent = message;
    notice.hidden = !note; notice.textContent = note;
  }

  connect();
  requestAnimationFrame(frame);
  setInterval(updateNumbers, 250);
})();
