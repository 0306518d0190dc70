// The demo page served by the edge at `/`: one button starts a call through the whole path
// (offer → edge → cluster → answer; media → POP → backbone → transceiver → echo agent) and the
// page shows what a developer wants to see. Plain HTML and JS, no build step.
export const DEMO_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Global Relay demo</title>
<style>
  :root { font: 15px/1.45 system-ui, sans-serif; color: #1d2733; background: #f4f6f8; }
  main { max-width: 760px; margin: 2rem auto; padding: 0 1rem; }
  h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
  p.lead { margin: 0 0 1.25rem; color: #4a5868; }
  .card { background: #fff; border: 1px solid #dde3ea; border-radius: 10px; padding: 1rem 1.25rem; margin-bottom: 1rem; }
  .row { display: flex; gap: .75rem; flex-wrap: wrap; align-items: center; }
  label { font-size: .85rem; color: #4a5868; }
  input, select { font: inherit; padding: .35rem .5rem; border: 1px solid #c5cfda; border-radius: 6px; }
  button { font: inherit; padding: .5rem 1.1rem; border-radius: 6px; border: 0; cursor: pointer; }
  #start { background: #0b6bcb; color: #fff; }
  #hangup { background: #c8332c; color: #fff; }
  #ping { background: #e7edf3; }
  button:disabled { opacity: .45; cursor: default; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: 0; }
  dt { color: #4a5868; } dd { margin: 0; font-variant-numeric: tabular-nums; }
  .state { font-weight: 600; }
  .state.connected { color: #16794a; } .state.failed, .state.closed { color: #c8332c; }
  #meter { height: 8px; background: #e7edf3; border-radius: 4px; overflow: hidden; }
  #meter > div { height: 100%; width: 0; background: #16794a; transition: width .1s; }
  #log { font: 12px/1.4 ui-monospace, monospace; max-height: 180px; overflow: auto; white-space: pre-wrap; margin: 0; }
</style>
</head>
<body>
<main>
  <h1>Global Relay</h1>
  <p class="lead">Start a call: your audio goes to the nearest Global Relay POP, across the backbone to a transceiver,
  and an echo agent sends it back.</p>
  <div class="card row">
    <label>API key <input id="key" value="local-dev-key" size="16" autocomplete="off"></label>
    <label>Source <select id="source"><option value="mic">Microphone</option><option value="tone">Generated tone (440 Hz)</option><option value="tone880">Generated tone (880 Hz)</option></select></label>
    <label>Join call <input id="join" placeholder="rtc_… (empty: a new call)" size="18" autocomplete="off"></label>
    <button id="start">Start call</button>
    <button id="hangup" disabled>Hang up</button>
    <button id="ping" disabled>Send event</button>
  </div>
  <div class="card">
    <dl>
      <dt>Connection</dt><dd><span id="state" class="state">idle</span></dd>
      <dt>Cluster</dt><dd id="cluster">–</dd>
      <dt>POP (remote candidate)</dt><dd id="pop">–</dd>
      <dt>Call id</dt><dd id="callid">–</dd>
      <dt>Invite (join link)</dt><dd id="invite">–</dd>
      <dt>Round-trip time</dt><dd id="rtt">–</dd>
      <dt>Packets sent / received</dt><dd id="packets">–</dd>
      <dt>Signalling</dt><dd id="timing">–</dd>
      <dt>Returning audio</dt><dd><div id="meter"><div></div></div></dd>
    </dl>
  </div>
  <div class="card"><strong>Events (oai-events)</strong><pre id="log"></pre></div>
</main>
<script type="module">
const $ = (id) => document.getElementById(id);
const demo = (window.grDemo = { state: "idle", callId: null, cluster: null, pop: null, rtt: null,
  packetsSent: 0, packetsReceived: 0, audioEnergy: 0, events: [], error: null, dataChannel: null, resumes: 0 });
let pc = null, dc = null, location = null, statsTimer = null, ctx = null, localStream = null;
let lastHeard = { packets: 0, at: 0 }, resuming = false;

function log(line) { const el = $("log"); el.textContent += line + "\\n"; el.scrollTop = el.scrollHeight; }
function setState(s) { demo.state = s; const el = $("state"); el.textContent = s; el.className = "state " + s; }

async function source() {
  if ($("source").value === "mic") {
    try { return await navigator.mediaDevices.getUserMedia({ audio: true }); }
    catch (e) { log("microphone unavailable (" + e.name + "), using a generated tone"); }
  }
  ctx = ctx || new AudioContext();
  const osc = ctx.createOscillator(); osc.frequency.value = $("source").value === "tone880" ? 880 : 440;
  const gain = ctx.createGain(); gain.gain.value = 0.2;
  const dest = ctx.createMediaStreamDestination();
  osc.connect(gain).connect(dest); osc.start();
  return dest.stream;
}

function meter(stream) {
  ctx = ctx || new AudioContext();
  const an = ctx.createAnalyser(); an.fftSize = 512;
  ctx.createMediaStreamSource(stream).connect(an);
  const buf = new Float32Array(an.fftSize);
  const tick = () => {
    if (!pc) return;
    an.getFloatTimeDomainData(buf);
    let e = 0; for (const v of buf) e += v * v;
    demo.audioEnergy = Math.sqrt(e / buf.length);
    $("meter").firstElementChild.style.width = Math.min(100, demo.audioEnergy * 1500) + "%";
    requestAnimationFrame(tick);
  };
  tick();
}

async function stats() {
  if (!pc) return;
  const report = await pc.getStats();
  let pair = null;
  report.forEach((s) => { if (s.type === "transport" && s.selectedCandidatePairId) pair = report.get(s.selectedCandidatePairId); });
  if (!pair) report.forEach((s) => { if (s.type === "candidate-pair" && s.nominated && s.state === "succeeded") pair = s; });
  if (pair) {
    const remote = report.get(pair.remoteCandidateId);
    if (remote) { demo.pop = (remote.address || remote.ip) + ":" + remote.port; $("pop").textContent = demo.pop; }
    if (pair.currentRoundTripTime !== undefined) { demo.rtt = pair.currentRoundTripTime * 1000; $("rtt").textContent = demo.rtt.toFixed(1) + " ms"; }
  }
  report.forEach((s) => {
    if (s.type === "outbound-rtp" && s.kind === "audio") demo.packetsSent = s.packetsSent;
    if (s.type === "inbound-rtp" && s.kind === "audio") demo.packetsReceived = s.packetsReceived;
  });
  $("packets").textContent = demo.packetsSent + " / " + demo.packetsReceived;
  watchMedia();
}

// Resume (docs/edge.md): audio stopped for a second → ask the API what happened; a call whose
// transceiver failed is resumed with a new offer on its own URL (same call id, new connection).
function watchMedia() {
  const now = performance.now();
  if (demo.packetsReceived !== lastHeard.packets || !lastHeard.at) { lastHeard = { packets: demo.packetsReceived, at: now }; return; }
  // A joiner's URL is a participant, not a call: resume is the owner's (docs/cascade.md).
  if (resuming || !location || demo.joined || demo.state === "connecting" || now - lastHeard.at < 1000) return;
  lastHeard.at = now;
  fetch(location, { headers: { authorization: "Bearer " + $("key").value } })
    .then((r) => r.json()).then((st) => { if (st.state === "ended" && st.endReason === "transceiver_failed") resume("transceiver_failed"); })
    .catch(() => {});
}

/** A new peer connection with the local audio and the events channel; resolves to its offer. */
async function newPeer() {
  const mine = (pc = new RTCPeerConnection());
  for (const t of localStream.getAudioTracks()) pc.addTrack(t, localStream);
  pc.ontrack = (ev) => {
    const audio = new Audio(); audio.srcObject = ev.streams[0] || new MediaStream([ev.track]); audio.play().catch(() => {});
    meter(audio.srcObject);
  };
  pc.onconnectionstatechange = () => { if (pc === mine) setState(pc.connectionState); };
  const channel = (dc = pc.createDataChannel("oai-events"));
  demo.dataChannel = "connecting";
  // A resumed call has a new connection: the old one's late events change nothing.
  dc.onopen = () => { if (dc === channel) { demo.dataChannel = "open"; $("ping").disabled = false; } };
  dc.onclose = () => { if (dc === channel) demo.dataChannel = "closed"; };
  dc.onmessage = (ev) => {
    demo.events.push(ev.data); log("← " + ev.data);
    if (ev.data.includes('"transceiver.resume_required"')) resume("drain");
  };
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((r) => { if (pc.iceGatheringState === "complete") r(); else { pc.onicegatheringstatechange = () => pc.iceGatheringState === "complete" && r(); setTimeout(r, 1500); } });
  return pc.localDescription.sdp;
}

async function resume(why) {
  if (resuming || !location || demo.joined) return;
  resuming = true; log("resuming the call (" + why + ")");
  try {
    for (let attempt = 0; attempt < 10 && location; attempt++) {
      if (pc) pc.close();
      const sdp = await newPeer();
      const res = await fetch(location, { method: "POST", body: sdp,
        headers: { "content-type": "application/sdp", authorization: "Bearer " + $("key").value } });
      if (res.status === 200) {
        await pc.setRemoteDescription({ type: "answer", sdp: await res.text() });
        demo.resumes++; lastHeard = { packets: 0, at: 0 }; log("resumed");
        return;
      }
      log("resume: edge answered " + res.status);
      await new Promise((r) => setTimeout(r, 1000));
    }
  } catch (e) { log("resume failed: " + (e && e.message || e)); }
  finally { resuming = false; }
}

async function start() {
  $("start").disabled = true; demo.error = null; setState("connecting");
  try {
    localStream = await source();
    const offer = await newPeer();
    const t0 = performance.now();
    // A call id to join: POST the offer to its participants (docs/cascade.md); else a new call.
    const joining = $("join").value.trim();
    const url = joining ? "/v1/realtime/calls/" + encodeURIComponent(joining) + "/participants" : "/v1/realtime/calls";
    const res = await fetch(url, { method: "POST", body: offer,
      headers: { "content-type": "application/sdp", authorization: "Bearer " + $("key").value } });
    if (res.status !== 201) { const body = await res.text(); throw new Error("edge answered " + res.status + ": " + body); }
    location = res.headers.get("location");
    demo.callId = joining || (location ? location.split("/").pop() : null);
    demo.joined = Boolean(joining);
    const invite = new URL("/?join=" + encodeURIComponent(demo.callId || ""), window.location.href).href;
    $("invite").textContent = demo.callId ? invite : "–";
    demo.cluster = res.headers.get("x-relay-cluster");
    $("cluster").textContent = demo.cluster || "?"; $("callid").textContent = demo.callId || "?";
    const st = (res.headers.get("server-timing") || "").split(",").map((m) => {
      const name = m.split(";")[0].trim(), dur = /dur=([0-9.]+)/.exec(m);
      return dur ? name + " " + Number(dur[1]).toFixed(0) + " ms" : null;
    }).filter(Boolean);
    $("timing").textContent = (performance.now() - t0).toFixed(0) + " ms offer → answer" + (st.length ? " (" + st.join(", ") + ")" : "");
    await pc.setRemoteDescription({ type: "answer", sdp: await res.text() });
    $("hangup").disabled = false;
    statsTimer = setInterval(stats, 250);
  } catch (e) {
    demo.error = String(e && e.message || e); log("error: " + demo.error); setState("failed"); await stop(false);
  }
}

async function stop(sendHangup = true) {
  clearInterval(statsTimer);
  if (sendHangup && location) await fetch(location, { method: "DELETE", headers: { authorization: "Bearer " + $("key").value } }).catch(() => {});
  if (pc) pc.close();
  if (localStream) localStream.getTracks().forEach((t) => t.stop());
  pc = null; dc = null; location = null;
  $("start").disabled = false; $("hangup").disabled = true; $("ping").disabled = true;
  if (demo.state !== "failed") setState("closed");
}

$("start").onclick = start;
$("hangup").onclick = () => stop(true);
$("ping").onclick = () => { const m = JSON.stringify({ type: "ping", at: Date.now() }); dc && dc.send(m); log("→ " + m); };
window.grDemoStart = start; window.grDemoHangup = () => stop(true);
window.grDemoSend = (obj) => dc && dc.readyState === "open" && (dc.send(JSON.stringify(obj)), true);

// Opt-in automation for browsers that no test driver controls (Firefox in test/interop):
// ?key=<API key>&source=tone|mic&autostart=1&report=<url>. With report, the page POSTs window.grDemo
// (and its user agent) to that URL every 250 ms; a JSON reply may carry a command: {"send": {...}}
// (one data-channel event), {"hangup": true} or {"start": true}. The URL must be on this page's
// own host, so a link cannot make the page report anywhere else.
const params = new URLSearchParams(window.location.search);
if (params.get("key")) $("key").value = params.get("key");
if (["tone", "tone880", "mic"].includes(params.get("source"))) $("source").value = params.get("source");
if (params.get("join")) $("join").value = params.get("join");
const reportUrl = (() => {
  try {
    const u = new URL(params.get("report") || "", window.location.href);
    return params.get("report") && u.hostname === window.location.hostname ? u.href : null;
  } catch { return null; }
})();
if (reportUrl) {
  const tick = async () => {
    try {
      const r = await fetch(reportUrl, { method: "POST", body: JSON.stringify({ ...demo, userAgent: navigator.userAgent }) });
      const cmd = await r.json().catch(() => null);
      if (cmd && cmd.send && window.grDemoSend(cmd.send)) log("→ " + JSON.stringify(cmd.send));
      if (cmd && cmd.hangup && pc) await stop(true);
      if (cmd && cmd.start && !pc) start();
    } catch {}
    setTimeout(tick, 250);
  };
  tick();
}
if (params.get("autostart") === "1") start();
</script>
</body>
</html>
`;
