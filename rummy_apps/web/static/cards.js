// Cards and rule ids as both pages draw them (the table, table.js; the replay viewer, replay.js).
// Card names come from /api/meta ("cards"), which each page puts in ``cardFaces`` before drawing.
"use strict";

let cardFaces = [];  // per card type 0..52: its names, rank and suit (GET /api/meta)

function face(card) { return cardFaces[card]; }

const RULE_ID = /\b([GIBR]\d{1,2})\b/g;

// ``text`` into ``el``, each rule id (R4) a link to the rule book's rule (GET /rules).
function setText(el, text) {
  el.replaceChildren();
  let at = 0;
  for (const m of (text || "").matchAll(RULE_ID)) {
    el.append(text.slice(at, m.index));
    const a = document.createElement("a");
    a.href = `/rules#${m[1]}`;
    a.target = "_blank";
    a.rel = "noopener";
    a.className = "rule";
    a.title = `rule ${m[1]} in the rule book`;
    a.textContent = m[1];
    el.append(a);
    at = m.index + m[0].length;
  }
  el.append((text || "").slice(at));
}

function cardEl(card, standsFor = null, extra = "") {
  const el = document.createElement("div");
  const f = face(card);
  el.className = `card ${extra}`;
  el.dataset.card = card;
  if (f.suit === null) {
    el.classList.add("joker");
    const standing = standsFor !== null && standsFor !== undefined;
    el.innerHTML = `<span class="corner">★</span><span class="pip joker-pip"></span>`;
    el.querySelector(".pip").textContent = standing ? `=${face(standsFor).symbol}` : "JOKER";
    if (standing) el.title = `a joker standing for ${face(standsFor).words}`;
  } else {
    const rank = f.rank === "T" ? "10" : f.rank;
    const suit = f.symbol.slice(-1);
    if (f.suit === "h" || f.suit === "d") el.classList.add("red");
    el.innerHTML = `<span class="corner">${rank}${suit}</span><span class="pip">${suit}</span>`;
    el.title = f.words;
  }
  el.setAttribute("aria-label", f.words);
  return el;
}

function miniCards(cards) {
  const span = document.createElement("span");
  for (const c of cards) span.appendChild(cardEl(c, null, "mini"));
  return span;
}
