// The replay viewer (docs/web.md "Replays"): a records file read here, sent to POST /api/replays, which
// checks every record and returns one hand as face-up steps; this page steps through them.
"use strict";

const $ = (id) => document.getElementById(id);
const replay = {
  text: null,   // the records file
  data: null,   // the last reply: the hand's steps
  step: 0,      // the step shown
  replies: 0,   // replies taken in, refusals too (the browser tests wait on it)
};
window.rummyReplay = replay;

function say(text) { setText($("message"), text); }

// The card names (GET /api/meta), which drawing waits for.
const metaLoaded = (async () => {
  const response = await fetch("/api/meta").catch(() => null);
  if (!response || !response.ok) { say("the server cannot be reached: reload the page"); return; }
  cardFaces = (await response.json()).cards;
})();

async function load(hand) {
  let response, data;
  try {
    response = await fetch(`/api/replays?hand=${hand}`, {
      method: "POST", headers: { "Content-Type": "application/x-ndjson" }, body: replay.text });
    data = await response.json();
  } catch (error) {
    data = { error: response ? `the server answered ${response.status}` : `the server cannot be reached (${error.message})` };
  }
  await metaLoaded;
  replay.replies += 1;
  if (!response || !response.ok) { say(data.error); return; }
  replay.data = data;
  replay.step = 0;
  say("");
  const choice = $("hand-choice");
  choice.replaceChildren();
  for (const h of data.hands) {
    const ending = h.winner === null ? h.outcome : `player ${h.winner} ${h.outcome === "declare" ? "declared" : "went out"}`;
    choice.add(new Option(`hand ${h.hand} (line ${h.line}): ${h.game}, ${ending}`, `${h.hand}`, false, h.hand === data.hand));
  }
  choice.hidden = data.hands.length < 2;
  draw();
}

function name(seat) { return `player ${seat} (${replay.data.players[seat]})`; }

function go(step) {
  if (!replay.data) return;
  replay.step = Math.max(0, Math.min(replay.data.steps.length - 1, step));
  draw();
}

function pileCard(slot, card) { $(slot).replaceChildren(...(card === null ? [] : [cardEl(card)])); }

function draw() {
  const d = replay.data;
  const s = d.steps[replay.step];
  const last = d.steps.length - 1;
  $("intro").hidden = true;
  $("stepper").hidden = false;
  $("middle").hidden = false;
  $("subtitle").textContent = `${d.title}, ${d.players.length} players` + (d.seed === null ? "" : ` · seed ${d.seed}`);
  $("step-number").textContent = `step ${s.step} of ${last} · turn ${s.turn}`;
  $("first").disabled = $("back").disabled = s.step === 0;
  $("forward").disabled = $("last").disabled = s.step === last;
  setText($("move"), s.step === 0 ? `the deal: ${name(s.to_act)} plays first (G6)` : `${s.step}. ${name(s.seat)} ${s.text}`);
  pileCard("stock-top", s.stock_top);
  $("stock-count").textContent = `${s.stock}`;
  pileCard("pile-top", s.discard_top);
  $("pile-count").textContent = `${s.discard_count}`;
  $("cut").hidden = s.cut_card === null;
  if (s.cut_card !== null) pileCard("cut-card", s.cut_card);
  $("wild").hidden = s.wild_card === null;
  if (s.wild_card !== null) pileCard("wild-card", s.wild_card);
  drawTable(s);
  drawSeats(s);
  drawResult(d, s.step === last);
}

function drawTable(s) {
  const box = $("table");
  box.hidden = s.table === null;
  if (s.table === null) return;
  box.replaceChildren();
  if (!s.table.length) box.textContent = "no melds on the table yet";
  for (const meld of s.table) {
    const el = document.createElement("div");
    el.className = `meld ${meld.kind}`;
    const number = document.createElement("span");
    number.className = "slot-number";
    number.textContent = `meld ${meld.slot + 1}`;
    el.appendChild(number);
    for (const [stands, physical] of meld.cards) el.appendChild(cardEl(physical, physical === 52 ? stands : null));
    box.appendChild(el);
  }
}

function drawSeats(s) {
  const box = $("seats");
  box.replaceChildren();
  s.hands.forEach((hand, seat) => {
    const el = document.createElement("div");
    el.className = "seat" + (s.to_act === seat ? " to-act" : "") + (s.seat === seat ? " moved" : "");
    el.dataset.seat = seat;
    const head = document.createElement("div");
    head.className = "name";
    head.textContent = `${name(seat)} · ${hand.length} cards` + (s.opened && s.opened[seat] ? " · opened" : "")
      + (s.to_act === seat ? " · to act" : "");
    el.appendChild(head);
    const cards = document.createElement("div");
    cards.className = "cards";
    for (const c of hand) cards.appendChild(cardEl(c));
    el.appendChild(cards);
    box.appendChild(el);
  });
}

function drawResult(d, shown) {
  const box = $("result");
  box.hidden = !shown;
  if (!shown) return;
  const r = d.result;
  const how = { declare: "declared (I5)", out: "went out" }[r.outcome];
  const ending = how ? `${name(r.winner)} ${how}` : r.outcome === "stalemate" ? "a stalemate: the stock ran out twice (G8)" : "cut off at the turn cap (G9)";
  const each = d.players.map((_, p) => `${name(p)} pays ${r.payments[p]}, points ${r.points[p] > 0 ? "+" : ""}${r.points[p]}`);
  setText(box, `the hand is over: ${ending}. ${each.join("; ")}`);
}

$("file").addEventListener("change", async () => {
  const file = $("file").files[0];
  if (!file) return;
  replay.text = await file.text();
  replay.data = null;
  load(1);
});
$("hand-choice").addEventListener("change", () => load(Number($("hand-choice").value)));
$("first").addEventListener("click", () => go(0));
$("back").addEventListener("click", () => go(replay.step - 1));
$("forward").addEventListener("click", () => go(replay.step + 1));
$("last").addEventListener("click", () => go(Infinity));
document.addEventListener("keydown", (e) => {
  if (!replay.data || e.target.closest("select, input")) return;
  const to = { ArrowLeft: replay.step - 1, ArrowRight: replay.step + 1, Home: 0, End: Infinity }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  go(to);
});

