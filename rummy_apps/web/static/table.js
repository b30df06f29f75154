// The web table's page (docs/web.md): draws what the server sends and turns pointing into moves.
// The server holds the game and checks every move; this page keeps only the order of the person's
// cards and what is selected. Card names come from /api/meta, so no G2 notation is copied here.
"use strict";

const params = new URLSearchParams(location.search);
const GAME_ID = /^[A-Za-z0-9_-]{1,64}$/;  // the server's game ids (URL-safe base64); anything else is a bad link
const $ = (id) => document.getElementById(id);
const page = {
  meta: null,        // GET /api/meta
  id: null,          // the game id
  table: null,       // the last snapshot the server sent
  settings: null,    // the new-game request of this match
  order: [],         // the person's cards in the order shown
  sortMode: "suit",  // suit | rank | melds | manual (after a drag)
  selected: new Set(), // positions in page.order
  busy: false,       // a request in flight
  timer: null,       // the next opponent move
  hint: null,        // the last hint, while it applies
  endClosed: false,  // the person closed the end-of-hand panel to look at the table
  replies: 0,        // replies taken in, refusals too (the browser tests wait on it)
};
window.rummyPage = page;  // for the browser tests and the curious

// ------------------------------------------------------------------ talking to the server

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  let response;
  try { response = await fetch(path, init); } catch (error) {
    return { ok: false, status: 0, data: { error: `the server cannot be reached (${error.message})` } };
  }
  let data;
  try { data = await response.json(); } catch (error) { data = { error: `the server answered ${response.status}` }; }
  return { ok: response.ok, status: response.status, data };
}

// A new match; ``notice`` (why this match, when the link asked for something else) is said once it starts.
async function startMatch(settings, notice = "") {
  clearTimeout(page.timer);
  page.settings = settings;
  const reply = await api("POST", "/api/games", settings);
  if (!reply.ok) { say(reply.data.error, "refused"); return; }
  page.sortMode = page.sortMode === "manual" ? "suit" : page.sortMode;
  page.order = [];
  accept(reply.data);
  say(notice, notice ? "notice" : "");
}

async function send(move) {
  if (page.busy || !page.id) return;
  page.busy = true;
  const reply = await api("POST", `/api/games/${page.id}/move`, move);
  page.busy = false;
  if (reply.ok) { say("", ""); accept(reply.data); return; }
  say(reply.data.error, "refused");
  if (reply.data.table) accept(reply.data, true);
}

async function opponentMove() {
  page.timer = null;
  const reply = await api("POST", `/api/games/${page.id}/opponent`);
  if (!reply.ok) { say(reply.data.error, "refused"); return; }
  accept(reply.data);
}

async function askHint() {
  if (!page.id) return;
  const reply = await api("GET", `/api/games/${page.id}/hint`);
  if (!reply.ok) { say(reply.data.error, "refused"); return; }
  page.hint = reply.data.hint;
  say(`hint (${page.hint.by}): ${page.hint.text}`, "info");
  render();
}

async function nextHand() {
  const reply = await api("POST", `/api/games/${page.id}/next`);
  if (!reply.ok) { say(reply.data.error, "refused"); return; }
  page.endClosed = false;
  accept(reply.data);
}

function accept(data, refused = false) {
  const before = page.table ? page.table.view.hand.join() : null;
  page.id = data.id;
  page.table = data.table;
  page.replies += 1;
  if (location.hash !== `#${data.id}`) history.replaceState(null, "", `#${data.id}`);
  if (before !== page.table.view.hand.join()) { page.selected.clear(); reorder(page.table.view.hand); }
  if (!refused) page.hint = null;
  if (!page.table.result) page.endClosed = false;
  render();
  schedule();
}

function schedule() {
  const t = page.table;
  clearTimeout(page.timer);
  page.timer = null;
  if (t.result || t.view.to_act === null || t.view.to_act === t.seat) return;
  const delay = params.has("delay") ? Number(params.get("delay")) : page.meta.defaults.delay_ms;
  page.timer = setTimeout(opponentMove, delay);
}

// ------------------------------------------------------------------ the person's cards

function sortKey(mode) {
  return (card) => {
    const f = face(card);
    if (f.suit === null) return [99, 99];
    return mode === "rank" ? [f.rank_index, f.suit_index] : [f.suit_index, f.rank_index];
  };
}

function sortedBy(cards, mode) {
  const key = sortKey(mode);
  return [...cards].sort((a, b) => { const x = key(a), y = key(b); return x[0] - y[0] || x[1] - y[1]; });
}

function reorder(hand) {
  const mode = page.sortMode;
  if (mode === "melds") {
    const a = page.table.view.arrangement;
    page.order = a.melds.flat().concat(a.loose);
  } else if (mode !== "manual") {
    page.order = sortedBy(hand, mode);
  } else {
    const left = {};
    for (const c of hand) left[c] = (left[c] || 0) + 1;
    const kept = [];
    for (const c of page.order) if (left[c]) { kept.push(c); left[c] -= 1; }
    for (const c of hand) if (left[c]) { kept.push(c); left[c] -= 1; }
    page.order = kept;
  }
}

function selectedCards() { return [...page.selected].sort((a, b) => a - b).map((p) => page.order[p]); }

function sameCards(a, b) { return a.length === b.length && sortedBy(a, "suit").join() === sortedBy(b, "suit").join(); }

// ------------------------------------------------------------------ drawing

function render() {
  const t = page.table;
  const v = t.view;
  const mine = v.to_act === t.seat;
  $("title").textContent = t.title;
  $("subtitle").textContent = `hand ${t.hand_number} · turn ${v.turn} · match to ${t.match.target}`;
  renderDealSeed(t);
  $("hint").disabled = !mine;
  renderOpponents(t);
  renderMiddle(t, mine);
  renderTable(t, mine);
  renderHand(t, mine);
  renderCue(t, mine);
  renderActions(t, mine);
  renderSide(t);
  renderEnd(t);
}

// A practice deal says so, with its seed; a secret deal's seed is shown once the match is over (for a replay).
function renderDealSeed(t) {
  const label = $("deal-seed");
  label.hidden = t.seed === null;
  if (t.practice) label.textContent = `practice deal, seed ${t.seed}`;
  else if (t.seed !== null) label.textContent = `the match is over: its deal seed was ${t.seed} (a practice deal with it replays it)`;
}

function legal(kind) { return page.table.view.legal.filter((m) => m.kind === kind); }

function hintIs(kind) { return page.hint && page.table.view.legal.some((m) => m.action === page.hint.action && m.kind === kind); }

function renderOpponents(t) {
  const box = $("opponents");
  box.replaceChildren();
  for (const p of t.view.players) {
    if (p.seat === t.seat) continue;
    const el = document.createElement("div");
    el.className = "opponent" + (t.view.to_act === p.seat ? " to-act" : "");
    el.dataset.seat = p.seat;
    const name = document.createElement("div");
    name.className = "name";
    name.textContent = `${t.names[p.seat]} · ${t.specs[p.seat]}` + (t.view.to_act === p.seat ? " · to act" : "");
    el.appendChild(name);
    const backs = document.createElement("div");
    backs.className = "backs";
    for (let i = 0; i < p.hand_size; i++) backs.appendChild(Object.assign(document.createElement("div"), { className: "card back" }));
    el.appendChild(backs);
    const facts = document.createElement("div");
    facts.className = "facts";
    facts.innerHTML = `<span class="hand-size">${p.hand_size} cards</span> `;
    if (p.opened !== null) facts.insertAdjacentHTML("beforeend", p.opened ? `<span class="badge opened">opened</span>` : `<span class="not-opened">not opened</span>`);
    el.appendChild(facts);
    if (p.known.length) {
      const known = document.createElement("div");
      known.textContent = "known: ";
      known.appendChild(miniCards(p.known));
      known.title = "cards known to be in this hand: taken from the discard pile or by a joker swap (G7, R5)";
      el.appendChild(known);
    }
    const last = document.createElement("div");
    last.className = "last-turn";
    last.textContent = `last turn: ${t.last_turns[p.seat] || "-"}`;
    el.appendChild(last);
    box.appendChild(el);
  }
}

function renderMiddle(t, mine) {
  const v = t.view;
  $("stock-count").textContent = `${v.stock}`;
  $("stock").classList.toggle("legal", mine && legal("draw").length > 0);
  $("stock").classList.toggle("hinted", hintIs("draw"));
  $("pile-top").replaceChildren(...(v.discard_top === null ? [] : [cardEl(v.discard_top)]));
  $("pile-count").textContent = `${v.discard_count}`;
  $("pile").classList.toggle("legal", mine && (legal("take_discard").length > 0 || legal("discard").length > 0 && page.selected.size === 1));
  $("pile").classList.toggle("hinted", hintIs("take_discard"));
  $("cut").hidden = v.cut_card === null;
  if (v.cut_card !== null) $("cut-card").replaceChildren(cardEl(v.cut_card));
  $("cut").classList.toggle("legal", mine && legal("take_cut").length > 0);
  $("cut").classList.toggle("hinted", hintIs("take_cut"));
  $("wild").hidden = v.wild_card === null;
  if (v.wild_card !== null) $("wild-card").replaceChildren(cardEl(v.wild_card));
  setText($("status"), statusText(t, mine));
}

function statusText(t, mine) {
  const v = t.view;
  if (t.result) return "the hand is over";
  if (!mine) return `${t.names[v.to_act]} is to play…`;
  if (v.phase === "draw") {
    const ways = ["draw from the stock"];
    if (legal("take_discard").length) ways.push("take the discard top");
    if (legal("take_cut").length) ways.push("take the cut card and go out (R4)");
    return `your turn: ${ways.join(", or ")}`;
  }
  if (v.owed.length) return `your turn: you must put ${v.owed.map((c) => face(c).words).join(" ")} on the table this turn (R4, R5)`;
  const game = page.meta.games[t.game];
  if (game.declares) return "your turn: discard a card, or declare with it (I5)";
  return "your turn: meld, lay off onto the table, then discard";
}

function renderTable(t, mine) {
  const box = $("table");
  box.hidden = t.view.table === null;
  if (t.view.table === null) return;
  box.replaceChildren();
  if (!t.view.table.length) box.textContent = "no melds on the table yet";
  const hintSlot = page.hint && (t.view.legal.find((m) => m.action === page.hint.action) || {}).slot;
  for (const meld of t.view.table) {
    const el = document.createElement("div");
    el.className = `meld ${meld.kind}`;
    el.dataset.slot = meld.slot;
    if (hintSlot === meld.slot) el.classList.add("hinted");
    if (t.fresh_melds.includes(meld.slot)) { el.classList.add("fresh"); el.title = "just laid or extended by another player"; }
    const number = document.createElement("span");
    number.className = "slot-number";
    number.textContent = `meld ${meld.slot + 1}`;
    el.appendChild(number);
    for (const [stands, physical] of meld.cards) el.appendChild(cardEl(physical, physical === 52 ? stands : null));
    const one = selectedCards();
    if (mine && one.length === 1 && t.view.legal.some((m) => m.slot === meld.slot && m.card === one[0] && m.kind.startsWith("place"))) el.classList.add("can-take");
    box.appendChild(el);
  }
}

function renderHand(t, mine) {
  const box = $("hand");
  box.replaceChildren();
  const discardable = new Set(mine ? legal("discard").map((m) => m.card) : []);
  const hinted = page.hint ? (t.view.legal.find((m) => m.action === page.hint.action) || {}) : {};
  const hintedCards = hinted.cards ? [...hinted.cards] : hinted.card !== undefined ? [hinted.card] : [];
  const owed = [...t.view.owed];
  page.order.forEach((card, pos) => {
    const el = cardEl(card, null, "in-hand");
    el.dataset.pos = pos;
    if (page.selected.has(pos)) el.classList.add("selected");
    if (discardable.has(card)) el.classList.add("discardable");
    const h = hintedCards.indexOf(card);
    if (h >= 0) { el.classList.add("hinted"); hintedCards.splice(h, 1); }
    const o = owed.indexOf(card);
    if (o >= 0) { el.classList.add("owed"); owed.splice(o, 1); }
    box.appendChild(el);
  });
  for (const b of document.querySelectorAll("#hand-tools button")) b.classList.toggle("on", b.dataset.sort === page.sortMode);
  const a = t.view.arrangement;
  const worth = t.match.lowest_wins ? `you would pay ${a.penalty}` : `cards worth ${a.penalty}`;
  setText($("arrangement"), `best arrangement: ${a.melds.length} meld${a.melds.length === 1 ? "" : "s"} · ${worth} (${t.match.payment_rule})`);
}

function button(text, onClick, primary = false) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  if (primary) b.className = "primary";
  b.addEventListener("click", onClick);
  return b;
}

// Said while a legal move would end the hand now: a declaration (I5), the hand's last cards, the cut card (R4).
function renderCue(t, mine) {
  const cue = $("cue");
  const finishing = mine ? t.view.legal.filter((m) => m.finishes) : [];
  cue.hidden = finishing.length === 0;
  if (!finishing.length) return;
  const declares = finishing.some((m) => m.kind === "declare");
  const ways = finishing.slice(0, 3).map((m) => m.text).join(" · ") + (finishing.length > 3 ? " · …" : "");
  setText(cue, declares ? `you can declare now (I5): ${ways}` : `you can go out now: ${ways}`);
}

function renderActions(t, mine) {
  const box = $("actions");
  box.replaceChildren();
  if (!mine || t.view.phase !== "play") return;
  const chosen = selectedCards();
  if (chosen.length === 1) {
    for (const m of t.view.legal) {
      if ((m.kind === "discard" || m.kind === "declare") && m.card === chosen[0]) {
        box.appendChild(button(m.text, () => send({ action: m.action }), true));
      } else if (m.kind.startsWith("place") && m.card === chosen[0]) {
        box.appendChild(button(m.text, () => send({ action: m.action })));
      }
    }
  }
  if (chosen.length >= 2 && page.meta.games[t.game].table_melds) {
    const melds = t.view.legal.filter((m) => m.kind === "meld" && sameCards(m.cards, chosen));
    for (const m of melds) box.appendChild(button(m.text, () => send({ action: m.action }), true));
    if (!melds.length) box.appendChild(button(`meld ${chosen.map((c) => face(c).words).join(" ")}`, () => send({ kind: "meld", cards: chosen })));
  }
  if (chosen.length === 0) {
    const hint = document.createElement("span");
    hint.className = "how";
    hint.textContent = page.meta.games[t.game].table_melds
      ? "tap cards to select them, then tap the discard pile, a meld or a button; or drag a card onto the pile or a meld"
      : "tap a card to select it, then tap the discard pile or a button; or drag it onto the pile";
    box.appendChild(hint);
  }
}

// What a finished hand added to each total: a payment where the lowest total wins (I8, R8), a score where
// the highest does (B6); the server says which (match.lowest_wins), from the game's rule set.
function addedWord(m) { return m.lowest_wins ? "pays" : "scores"; }

function addedVerb(m, name) { return name === "you" ? (m.lowest_wins ? "pay" : "score") : addedWord(m); }

function outcomeWords(t, hand) {
  const how = { declare: "declared", out: "went out" }[hand.outcome];
  if (how) return `${t.names[hand.winner]} ${how}`;
  return hand.outcome === "stalemate" ? "stalemate (G8)" : "cut off at the turn cap (G9)";
}

function renderSide(t) {
  const m = t.match;
  setText($("score-rule"), `${m.lowest_wins ? "lowest" : "highest"} total wins when a total reaches ${m.target} (${m.rule})`);
  const last = t.result ? t.finished[t.finished.length - 1] : null;
  const scores = $("scores");
  scores.replaceChildren();
  const head = scores.insertRow();
  head.innerHTML = "<th>player</th>" + (last ? `<th class="added">${addedWord(m)}</th>` : "") + "<th>total</th>";
  t.names.forEach((name, p) => {
    const row = scores.insertRow();
    row.dataset.seat = p;
    row.insertCell().textContent = name;
    if (last) { const c = row.insertCell(); c.className = "added"; c.textContent = last.added[p]; }
    row.insertCell().textContent = m.totals[p];
  });
  const finished = $("finished");
  finished.replaceChildren();
  for (const h of t.finished) {
    const li = document.createElement("li");
    li.dataset.hand = h.hand;
    const each = t.names.map((n, p) => `${n} ${addedVerb(m, n)} ${h.added[p]}`).join(", ");
    setText(li, `hand ${h.hand}: ${outcomeWords(t, h)}; ${each}`);
    finished.appendChild(li);
  }
  $("log-title").textContent = `hand ${t.hand_number}: ${t.moves_made} move${t.moves_made === 1 ? "" : "s"}`;
  const log = $("log");
  log.replaceChildren();
  for (const e of t.log) {
    const li = document.createElement("li");
    li.value = e.number;
    li.textContent = `${e.name}: ${e.text}`;
    if (e.seat === t.seat) li.className = "mine";
    log.appendChild(li);
  }
  log.scrollTop = log.scrollHeight;  // the newest move in view
}

function renderEnd(t) {
  const panel = $("end");
  panel.hidden = !t.result || page.endClosed;
  if (!t.result) return;
  const r = t.result;
  const m = t.match;
  const hand = t.finished[t.finished.length - 1];
  setText($("end-title"), r.winner === null ? `${outcomeWords(t, hand)}: nobody scores` : outcomeWords(t, hand));
  const rows = $("end-hands");
  rows.replaceChildren();
  const head = rows.insertRow();
  head.innerHTML = `<th>player</th><th>hand (melds underlined)</th><th>${addedWord(m)}</th><th>total</th>`;
  for (const h of r.hands) {
    const row = rows.insertRow();
    row.dataset.seat = h.seat;
    row.insertCell().textContent = t.names[h.seat];
    const cell = row.insertCell();
    cell.className = "revealed";
    for (const meld of h.arrangement.melds) {
      const group = miniCards(meld);
      group.className = "meld-group";
      cell.appendChild(group);
    }
    cell.appendChild(miniCards(h.arrangement.loose));
    row.insertCell().textContent = hand.added[h.seat];
    row.insertCell().textContent = m.totals[h.seat];
  }
  const rule = `${m.lowest_wins ? "lowest" : "highest"} total wins (${m.rule})`;
  setText($("end-match"), m.over
    ? `the match is over: ${m.winners.map((p) => t.names[p]).join(" and ")} ${m.winners.length === 1 && m.winners[0] !== t.seat ? "wins" : "win"}; ${rule}`
    : `the match goes on to ${m.target}; ${rule}`);
  $("next-hand").hidden = m.over;
  $("end-records").hidden = !m.over;  // the records show the deal: served once the match is over
  $("records-link").href = `/api/games/${page.id}/records`;
}

// ------------------------------------------------------------------ pointing

function toggle(el, pos) {
  // The hand is left in place (a double-click needs both clicks on one element); what depends on the selection is redrawn.
  if (page.selected.has(pos)) page.selected.delete(pos); else page.selected.add(pos);
  el.classList.toggle("selected", page.selected.has(pos));
  const t = page.table, mine = t.view.to_act === t.seat;
  renderMiddle(t, mine);
  renderTable(t, mine);
  renderActions(t, mine);
}

function placeMove(card, slot, lowEnd) {
  const options = page.table.view.legal.filter((m) => m.kind.startsWith("place") && m.card === card && m.slot === slot);
  const move = options.find((m) => m.end === (lowEnd ? "low" : "high")) || options[0];
  return move ? { action: move.action } : { kind: "place", card, slot };
}

function discardMove(card) {
  const move = page.table.view.legal.find((m) => m.kind === "discard" && m.card === card);
  return move ? { action: move.action } : { kind: "discard", card };
}

function dropOn(target, card, pos, x) {
  const meld = target && target.closest(".meld");
  if (meld) {
    const box = meld.getBoundingClientRect();
    send(placeMove(card, Number(meld.dataset.slot), x < box.left + box.width / 3));
    return;
  }
  if (target && target.closest("#pile")) { send(discardMove(card)); return; }
  const other = target && target.closest("#hand .card");
  if (other || (target && target.closest("#hand"))) {
    const moved = page.order.splice(pos, 1)[0];
    let at = other ? Number(other.dataset.pos) : page.order.length;
    if (other && at > pos) at -= 1;
    if (other && x > other.getBoundingClientRect().left + other.getBoundingClientRect().width / 2) at += 1;
    page.order.splice(at, 0, moved);
    page.sortMode = "manual";
    page.selected.clear();
    render();
  }
}

let drag = null;

$("hand").addEventListener("pointerdown", (e) => {
  const el = e.target.closest(".card");
  if (!el || e.button !== 0) return;
  drag = { el, pos: Number(el.dataset.pos), card: Number(el.dataset.card), x: e.clientX, y: e.clientY, ghost: null };
  e.preventDefault();
});

document.addEventListener("pointermove", (e) => {
  if (!drag) return;
  if (!drag.ghost && Math.hypot(e.clientX - drag.x, e.clientY - drag.y) > 6) {
    drag.ghost = drag.el.cloneNode(true);
    drag.ghost.classList.add("ghost");
    document.body.appendChild(drag.ghost);
  }
  if (drag.ghost) {
    drag.ghost.style.left = `${e.clientX - 20}px`;
    drag.ghost.style.top = `${e.clientY - 30}px`;
    for (const el of document.querySelectorAll(".drop-target")) el.classList.remove("drop-target");
    const over = document.elementFromPoint(e.clientX, e.clientY);
    const target = over && (over.closest(".meld") || over.closest("#pile"));
    if (target) target.classList.add("drop-target");
  }
});

document.addEventListener("pointerup", (e) => {
  if (!drag) return;
  const d = drag;
  drag = null;
  for (const el of document.querySelectorAll(".drop-target")) el.classList.remove("drop-target");
  if (!d.ghost) { toggle(d.el, d.pos); return; }
  d.ghost.remove();
  dropOn(document.elementFromPoint(e.clientX, e.clientY), d.card, d.pos, e.clientX);
});

$("hand").addEventListener("dblclick", (e) => {
  const el = e.target.closest(".card");
  if (!el) return;
  page.selected.clear();
  send(discardMove(Number(el.dataset.card)));
});

$("stock").addEventListener("click", () => send({ kind: "draw" }));
$("cut").addEventListener("click", () => send({ kind: "take_cut" }));
$("pile").addEventListener("click", () => {
  const chosen = selectedCards();
  if (page.table.view.phase === "play" && chosen.length === 1) send(discardMove(chosen[0]));
  else send({ kind: "take_discard" });
});
$("table").addEventListener("click", (e) => {
  const meld = e.target.closest(".meld");
  const chosen = selectedCards();
  if (meld && chosen.length === 1) send(placeMove(chosen[0], Number(meld.dataset.slot), false));
});
for (const b of document.querySelectorAll("#hand-tools button")) {
  b.addEventListener("click", () => { page.sortMode = b.dataset.sort; page.selected.clear(); reorder(page.table.view.hand); render(); });
}
$("hint").addEventListener("click", askHint);
$("next-hand").addEventListener("click", nextHand);
$("new-match").addEventListener("click", () => {
  const s = { ...page.settings };
  if (page.table.practice) s.seed = page.table.seed + 1;  // a practice match goes on to the next seed; else a secret deal
  page.endClosed = false;
  startMatch(s);
});
$("close-end").addEventListener("click", () => { page.endClosed = true; render(); });

// ------------------------------------------------------------------ setting up a game

function say(text, kind) {
  const m = $("message");
  setText(m, text);
  m.className = kind || "";
}

function fillSetup(game, chosen) {
  const g = page.meta.games[game];
  const players = $("setup-players");
  const wanted = chosen.players || Number(players.value) || g.players[0];
  players.replaceChildren();
  for (let n = g.players[0]; n <= g.players[1]; n++) players.add(new Option(`${n}`, `${n}`, false, n === wanted));
  if (!players.value) players.value = `${g.players[0]}`;
  const box = $("setup-opponents");
  box.replaceChildren();
  for (let p = 1; p < Number(players.value); p++) {
    const label = document.createElement("label");
    label.textContent = `player ${p} `;
    const select = document.createElement("select");
    select.className = "setup-opponent";
    const agents = g.agents[players.value];
    const pick = (chosen.opponents || [])[chosen.opponents && chosen.opponents.length === 1 ? 0 : p - 1] || agents[0];
    for (const spec of agents) select.add(new Option(spec, spec, false, spec === pick));
    label.appendChild(select);
    box.appendChild(label);
  }
  const hint = $("setup-hint");
  hint.replaceChildren();
  for (const spec of g.agents[players.value]) hint.add(new Option(spec, spec, false, spec === (chosen.hint || "rule")));
}

function setupSettings() {
  const game = $("setup-game").value;
  return {
    game,
    players: Number($("setup-players").value),
    opponents: [...document.querySelectorAll(".setup-opponent")].map((s) => s.value),
    hint: $("setup-hint").value,
    ...practiceFields(),
  };
}

// A new game's deal: the server's secret unless "practice deal" is ticked (with the seed typed, or a fresh one).
function practiceFields() {
  if (!page.meta.practice || !$("setup-practice").checked) return {};
  const seed = $("setup-seed").value.trim();
  return seed === "" ? { practice: true } : { seed: Number(seed) };
}

async function init() {
  const reply = await api("GET", "/api/meta");
  if (!reply.ok) { say(reply.data.error, "refused"); return; }
  page.meta = reply.data;
  cardFaces = page.meta.cards;
  const d = page.meta.defaults;
  const games = $("setup-game");
  for (const [name, g] of Object.entries(page.meta.games)) games.add(new Option(g.title, name, false, name === d.game));
  const notices = [];
  const asked = params.get("game");
  if (asked !== null && !(asked in page.meta.games)) {
    const known = Object.entries(page.meta.games).map(([name, g]) => `${g.title} (${name})`).join(", ");
    notices.push(`this link asks for a game "${asked.slice(0, 40)}" that this table does not play: it plays ${known}`);
  }
  games.value = asked in page.meta.games ? asked : d.game;
  fillSetup(games.value, games.value === d.game ? d : {});
  $("setup-practice-box").hidden = !page.meta.practice;
  $("setup-seed").max = `${page.meta.max_seed}`;
  $("setup-seed").value = params.get("seed") || "";
  $("setup-practice").checked = params.has("seed") || params.get("practice") === "1";
  if ((params.has("seed") || params.get("practice") === "1") && !page.meta.practice) {
    notices.push("practice deals (a chosen seed) are off on this server (--no-practice): the link's seed is not used, and this deal is secret");
  }
  $("setup-seed").addEventListener("input", () => { if ($("setup-seed").value !== "") $("setup-practice").checked = true; });
  games.addEventListener("change", () => fillSetup(games.value, {}));
  $("setup-players").addEventListener("change", () => fillSetup(games.value, { players: Number($("setup-players").value) }));
  $("show-setup").addEventListener("click", () => { $("setup").hidden = !$("setup").hidden; });
  $("setup").addEventListener("submit", (e) => { e.preventDefault(); $("setup").hidden = true; startMatch(setupSettings()); });
  const id = location.hash.slice(1);
  if (id && !GAME_ID.test(id)) {
    notices.push(`this link's game "${id.slice(0, 40)}" is not a game id (the page's own links end in #ID, 22 letters, digits, - or _)`);
  } else if (id) {
    const existing = await api("GET", `/api/games/${id}`);
    if (existing.ok) {
      const t = existing.data.table;
      page.settings = { game: t.game, players: t.players, opponents: t.specs.filter((s) => s !== null), hint: t.hint_by, options: t.options };
      accept(existing.data);
      return;
    }
    notices.push(`this link's game is gone: ${existing.data.error}`);
  }
  if (params.has("players") || params.has("opponents")) {
    fillSetup(games.value, { players: Number(params.get("players")) || 0, opponents: (params.get("opponents") || "").split(",").filter(Boolean) });
  }
  const settings = setupSettings();
  if (notices.length) notices.push(`here is a new game of ${page.meta.games[settings.game].title}`);
  startMatch(settings, notices.join(". "));
}

init();
