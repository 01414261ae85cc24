/// The station's one page, served at `/`: self-contained (no file, CDN or
/// build step), it reads `/events` with EventSource and draws per channel
/// a level bar (RMS, peak hold, latched clip), the talk state with its
/// thresholds, a strip chart of the last minutes, decoded tones and calls,
/// xruns and gaps, and the session's recordings with a player. Safe on any
/// thread.
enum StationPage {
  static let html = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>micloop station</title>
    <style>
    :root { color-scheme: dark; --bg:#111418; --fg:#e6e8eb; --dim:#8a939e; --ok:#37c871; --warn:#f2b233; --bad:#f2545b; --rms:#3fa7f5; }
    * { box-sizing: border-box; }
    body { margin:0; font:15px/1.4 system-ui, sans-serif; background:var(--bg); color:var(--fg); }
    header { display:flex; flex-wrap:wrap; gap:.5em 1em; align-items:baseline; padding:.6em 1em; border-bottom:1px solid #2a3038; }
    header h1 { font-size:1.1em; margin:0; }
    #status { color:var(--dim); } #status.up { color:var(--ok); } #status.down { color:var(--bad); }
    main { display:grid; grid-template-columns: minmax(0,1fr) minmax(0,1fr); gap:1em; padding:1em; }
    section { background:#181c22; border:1px solid #2a3038; border-radius:8px; padding:.7em .9em; min-width:0; }
    section.wide { grid-column: 1 / -1; }
    h2 { font-size:.95em; margin:0 0 .5em; color:var(--dim); font-weight:600; text-transform:uppercase; letter-spacing:.05em; }
    .channel { display:grid; grid-template-columns: 3.5em 1fr 9.5em; gap:.5em; align-items:center; margin:.35em 0; }
    .bar { position:relative; height:1.3em; background:#0b0d10; border-radius:4px; overflow:hidden; }
    .bar .rms { position:absolute; left:0; top:0; bottom:0; background:var(--rms); }
    .bar .peak { position:absolute; top:0; bottom:0; width:2px; background:#fff; }
    .bar .hold { position:absolute; top:0; bottom:0; width:3px; background:var(--warn); }
    .bar .open, .bar .close { position:absolute; top:0; bottom:0; width:0; border-left:1px dashed var(--ok); }
    .bar .close { border-left-color: var(--dim); }
    .clip { display:inline-block; padding:0 .4em; border-radius:3px; background:#2a3038; color:var(--dim); cursor:pointer; font-size:.8em; }
    .clip.on { background:var(--bad); color:#fff; }
    .num { font-variant-numeric: tabular-nums; font-size:.85em; text-align:right; }
    #talk { font-weight:700; padding:.1em .6em; border-radius:4px; background:#2a3038; }
    #talk.on { background:var(--ok); color:#000; }
    canvas { width:100%; height:180px; display:block; background:#0b0d10; border-radius:4px; }
    ul { list-style:none; margin:0; padding:0; max-height:22em; overflow:auto; }
    li { padding:.25em 0; border-bottom:1px solid #222830; overflow-wrap:anywhere; }
    li .t { color:var(--dim); font-variant-numeric: tabular-nums; margin-right:.5em; }
    li.bad { color:var(--bad); } li.warn { color:var(--warn); }
    .sym { font-weight:700; font-size:1.15em; }
    audio { width:100%; height:2.2em; margin-top:.2em; }
    .fields { color:var(--dim); font-size:.8em; }
    @media (max-width: 720px) { main { grid-template-columns: minmax(0,1fr); padding:.5em; } .channel { grid-template-columns: 2.5em 1fr 7.5em; } }
    </style>
    </head>
    <body>
    <header><h1>micloop station</h1><span id="status">connecting…</span><span id="talk">silent</span><span id="thresholds" class="num"></span></header>
    <main>
    <section class="wide"><h2>Levels</h2><div id="channels"></div></section>
    <section class="wide"><h2>Last <span id="span">5</span> minutes (RMS dBFS, talk shaded, xruns and gaps marked)</h2><canvas id="chart"></canvas></section>
    <section><h2>Tones and calls</h2><ul id="tones"></ul></section>
    <section><h2>Xruns, gaps and device</h2><ul id="problems"></ul></section>
    <section class="wide" id="recsection"><h2>Recordings</h2><ul id="recordings"></ul></section>
    </main>
    <script>
    "use strict";
    const FLOOR = -72, CHART_SECONDS = 300, HOLD_SECONDS = 2, CLIP_DBFS = -0.1, LIST_MAX = 200, REDRAW_MS = 50;
    const $ = (id) => document.getElementById(id);
    const channels = [];           // per channel: {rms, peak, hold, holdAt, clip, el}
    let talking = false, openDb = null, closeDb = null, envelope = null, lastTime = 0, dirty = true;
    const history = [];            // {time, rms, talking}
    const marks = [];              // {time, kind}
    function pct(db) { if (db === null || db === undefined) return 0; return Math.max(0, Math.min(100, (db - FLOOR) / -FLOOR * 100)); }
    function fmt(db) { return (db === null || db === undefined) ? "  -∞" : db.toFixed(1); }
    function fmtTime(t) { return (t === undefined || t === null) ? "" : t.toFixed(2) + " s"; }
    function channel(i) {
      while (channels.length <= i) {
        const n = channels.length, row = document.createElement("div");
        row.className = "channel";
        row.innerHTML = '<span>ch ' + (n + 1) + '</span><div class="bar"><div class="rms"></div><div class="close"></div><div class="open"></div><div class="hold"></div><div class="peak"></div></div><span class="num"><span class="val"></span> <span class="clip" title="click to clear">CLIP</span></span>';
        const c = { rms: null, peak: null, hold: null, holdAt: 0, clip: false, el: row };
        row.querySelector(".clip").onclick = () => { c.clip = false; dirty = true; };
        $("channels").appendChild(row);
        channels.push(c);
      }
      return channels[i];
    }
    function level(e) {
      const list = Array.isArray(e.channels) ? e.channels : [{ peak_dbfs: e.peak_dbfs, rms_dbfs: e.rms_dbfs }];
      const now = performance.now() / 1000;
      list.forEach((r, i) => {
        const c = channel(i);
        c.rms = r.rms_dbfs; c.peak = r.peak_dbfs;
        if (r.peak_dbfs !== null && (c.hold === null || r.peak_dbfs >= c.hold || now - c.holdAt > HOLD_SECONDS)) { c.hold = r.peak_dbfs; c.holdAt = now; }
        if (r.peak_dbfs !== null && r.peak_dbfs >= CLIP_DBFS) c.clip = true;
      });
      talking = !!e.talking; openDb = e.open_dbfs; closeDb = e.close_dbfs; envelope = e.envelope_dbfs; lastTime = e.time;
      history.push({ time: e.time, rms: e.rms_dbfs, talking });
      while (history.length && history[0].time < e.time - CHART_SECONDS) history.shift();
      while (marks.length && marks[0].time < e.time - CHART_SECONDS) marks.shift();
      dirty = true;
    }
    function add(listId, html, cls) {
      const li = document.createElement("li");
      li.innerHTML = html; if (cls) li.className = cls;
      const ul = $(listId); ul.insertBefore(li, ul.firstChild);
      while (ul.children.length > LIST_MAX) ul.removeChild(ul.lastChild);
      return li;
    }
    function esc(s) { return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c])); }
    function recordingURL(name) { return "/recordings/" + String(name).split("/").map(encodeURIComponent).join("/"); }
    const shown = new Set();
    function recording(e) {
      if (!e.file || shown.has(e.file)) return;
      shown.add(e.file);
      const tags = (e.tags || []).map((t) => esc(t.plan + " " + (t.symbol || t.text || (t.group ? "group page" : t.event)))).join(", ");
      add("recordings", '<span class="t">' + esc(e.start || "") + '</span><b>' + esc(e.file) + '</b> ' + (e.duration || 0).toFixed(2) + ' s, ' + esc(e.trigger || "") +
        (tags ? ' [' + tags + ']' : '') + '<div class="fields">part ' + esc(e.part) + ', ending ' + esc(e.ending) + (e.xruns && e.xruns.length ? ', xruns at ' + e.xruns.join(", ") : '') + '</div>' +
        '<audio controls preload="none" src="' + esc(recordingURL(e.file)) + '"></audio>');
    }
    function handle(e) {
      switch (e.event) {
        case "level": level(e); break;
        case "talk_start": case "talk_end": marks.push({ time: e.time, kind: e.event }); break;
        case "tone": case "tone_start": case "sequence": case "page":
          if (e.event === "tone_start") break;
          add("tones", '<span class="t">' + fmtTime(e.time) + '</span>' + esc(e.plan) + ' <span class="sym">' + esc(e.symbol || e.text || (e.event === "page" ? "page" : "")) + '</span>' + (e.event === "sequence" ? ' (call)' : ''));
          break;
        case "xrun": marks.push({ time: e.time, kind: "xrun" }); add("problems", '<span class="t">' + fmtTime(e.time) + '</span>xrun ' + esc(e.bus || "input"), "bad"); dirty = true; break;
        case "gap": case "pause": marks.push({ time: e.time, kind: "gap" }); add("problems", '<span class="t">' + fmtTime(e.time) + '</span>' + e.event + ' ' + (e.duration || 0).toFixed(2) + ' s ' + esc(e.reason || ""), "warn"); dirty = true; break;
        case "device_lost": add("problems", '<span class="t">' + fmtTime(e.time) + '</span>device lost: ' + esc(e.reason), "bad"); $("status").textContent = "device lost"; $("status").className = "down"; break;
        case "device_back": add("problems", '<span class="t">' + fmtTime(e.time) + '</span>device back after ' + (e.gap_seconds || 0).toFixed(2) + ' s'); $("status").textContent = "live"; $("status").className = "up"; break;
        case "feedback": add("problems", '<span class="t">' + fmtTime(e.time) + '</span>howl guard: ' + esc(e.action || ""), "warn"); break;
        case "recording": recording(e); break;
        case "deleted": break;
      }
    }
    function drawBars() {
      const now = performance.now() / 1000;
      for (const c of channels) {
        const el = c.el;
        el.querySelector(".rms").style.width = pct(c.rms) + "%";
        el.querySelector(".peak").style.left = pct(c.peak) + "%";
        el.querySelector(".hold").style.left = pct(c.hold) + "%";
        el.querySelector(".open").style.left = pct(openDb) + "%";
        el.querySelector(".close").style.left = pct(closeDb) + "%";
        el.querySelector(".val").textContent = fmt(c.rms) + " / " + fmt(c.peak);
        el.querySelector(".clip").className = "clip" + (c.clip ? " on" : "");
      }
      $("talk").textContent = talking ? "TALK" : "silent";
      $("talk").className = talking ? "on" : "";
      $("thresholds").textContent = (openDb !== null && openDb !== undefined) ? "open " + fmt(openDb) + " / close " + fmt(closeDb) + " dBFS, envelope " + fmt(envelope) : "";
    }
    function drawChart() {
      const cv = $("chart"), dpr = window.devicePixelRatio || 1;
      const w = cv.clientWidth, h = cv.clientHeight;
      if (cv.width !== Math.round(w * dpr)) { cv.width = Math.round(w * dpr); cv.height = Math.round(h * dpr); }
      const g = cv.getContext("2d"); g.setTransform(dpr, 0, 0, dpr, 0, 0); g.clearRect(0, 0, w, h);
      const t1 = lastTime, t0 = t1 - CHART_SECONDS;
      const x = (t) => (t - t0) / CHART_SECONDS * w, y = (db) => h - pct(db) / 100 * h;
      g.strokeStyle = "#222830"; g.fillStyle = "#8a939e"; g.font = "11px system-ui"; g.lineWidth = 1;
      for (let db = -60; db <= 0; db += 12) { g.beginPath(); g.moveTo(0, y(db)); g.lineTo(w, y(db)); g.stroke(); g.fillText(db + "", 2, y(db) - 2); }
      g.fillStyle = "rgba(55,200,113,0.18)";
      for (let i = 1; i < history.length; i++) if (history[i].talking) g.fillRect(x(history[i - 1].time), 0, x(history[i].time) - x(history[i - 1].time) + 1, h);
      g.strokeStyle = "#3fa7f5"; g.beginPath(); let pen = false;
      for (const p of history) { if (p.rms === null) { pen = false; continue; } if (pen) g.lineTo(x(p.time), y(p.rms)); else g.moveTo(x(p.time), y(p.rms)); pen = true; }
      g.stroke();
      for (const m of marks) { if (m.kind !== "xrun" && m.kind !== "gap") continue; g.strokeStyle = m.kind === "xrun" ? "#f2545b" : "#f2b233"; g.beginPath(); g.moveTo(x(m.time), 0); g.lineTo(x(m.time), h); g.stroke(); }
      if (openDb !== null && openDb !== undefined) { g.strokeStyle = "#37c871"; g.setLineDash([4, 4]); g.beginPath(); g.moveTo(0, y(openDb)); g.lineTo(w, y(openDb)); g.stroke(); g.setLineDash([]); }
    }
    setInterval(() => { if (dirty) { drawBars(); drawChart(); dirty = false; } }, REDRAW_MS);
    window.addEventListener("resize", () => { dirty = true; });
    fetch("/recordings.json").then((r) => r.ok ? r.json() : { recordings: [] }).then((j) => { (j.recordings || []).slice().reverse().forEach(recording); }).catch(() => {});
    function connect() {
      const source = new EventSource("/events");
      source.onopen = () => { $("status").textContent = "live"; $("status").className = "up"; };
      source.onerror = () => { $("status").textContent = "reconnecting…"; $("status").className = "down"; };
      source.onmessage = (m) => { try { handle(JSON.parse(m.data)); } catch (err) { } };
    }
    connect();
    </script>
    </body>
    </html>
    """#
}
