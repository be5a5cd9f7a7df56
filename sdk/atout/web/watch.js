// atout-bot watch --web: a recorded game stepped through on the dashboard's own table
// (table.js, cards.js); the events come from /record.json (atout.watch.web_events).

import { actionEl, el } from "./cards.js";
import { renderTable } from "./table.js";

const record = await (await fetch("/record.json")).json();
const events = record.events;
const names = record.seats.map((s) => (s.version ? `${s.bot} ${s.version}` : s.bot));
const viewer = record.viewer === "seat" ? record.seat : null;
const felt = document.getElementById("felt");
const counter = document.getElementById("counter");
const scores = document.getElementById("scores");
const log = document.getElementById("log");
let index = 0;
let timer = null;

document.getElementById("title").textContent = `${record.game}, ${record.players} players`;
document.getElementById("facts").textContent = [
  `seed ${record.seed}`, `${events.length - 1} moves`,
  viewer === null ? "every hand face up" : `what seat ${viewer} (${names[viewer]}) saw`,
  record.source && record.source.command ? record.source.command : "",
].filter(Boolean).join(" · ");

function scoreTable(view, atEnd) {
  const table = el("table", "scores");
  const head = el("tr");
  for (const h of ["seat", "bot", "score", "place"]) head.append(el("th", null, h));
  table.append(head);
  record.seats.forEach((s, i) => {
    const row = el("tr");
    row.dataset.seat = String(i);
    const score = atEnd ? record.scores[i] : (view.scores || [])[i];
    row.append(el("td", null, String(i)), el("td", null, names[i]), el("td", "score", score === undefined ? "–" : String(score)),
      el("td", null, atEnd ? String(record.ranking[i]) : "–"));
    table.append(row);
  });
  return table;
}

function go(i) {
  index = Math.max(0, Math.min(events.length - 1, i));
  const event = events[index];
  const atEnd = index === events.length - 1;
  renderTable(felt, {
    game: record.game, view: event.view, names, viewer, hands: event.hands || null,
    ended: atEnd ? { ranking: record.ranking, scores: record.scores } : null,
    lastStep: event.type === "step" ? { seat: event.seat, action: event.action } : null,
  });
  felt.dataset.ply = String(index);
  counter.textContent = `${index} / ${events.length - 1}`;
  scores.replaceChildren(scoreTable(event.view, atEnd));
  for (const li of log.children) li.classList.toggle("current", Number(li.dataset.ply) === index - 1);
  const current = log.querySelector(".current");
  if (current) {
    const top = current.offsetTop - log.offsetTop;
    if (top < log.scrollTop) log.scrollTop = top;
    else if (top + current.offsetHeight > log.scrollTop + log.clientHeight) log.scrollTop = top + current.offsetHeight - log.clientHeight;
  }
}

const buttons = document.getElementById("buttons");
function button(label, title, fn) {
  const b = el("button", "step-btn", label);
  b.type = "button";
  b.title = title;
  b.setAttribute("aria-label", title);
  b.onclick = fn;
  buttons.append(b);
  return b;
}
function stop() {
  clearInterval(timer);
  timer = null;
  play.textContent = "▶";
}
button("⇤", "first", () => { stop(); go(0); });
button("‹", "previous", () => { stop(); go(index - 1); });
const play = button("▶", "play", () => {
  if (timer) return stop();
  play.textContent = "❚❚";
  timer = setInterval(() => (index >= events.length - 1 ? stop() : go(index + 1)), 350);
});
button("›", "next", () => { stop(); go(index + 1); });
button("⇥", "last", () => { stop(); go(events.length - 1); });

for (const event of events) {
  if (event.type !== "step") continue;
  const li = el("li");
  li.dataset.ply = String(event.ply);
  li.append(el("span", "ply", String(event.ply + 1)), el("b", null, `${names[event.seat] || `seat ${event.seat}`}: `));
  li.append(actionEl(event.action));
  if (event.by && event.by !== "bot") li.append(" ", el("span", "by", event.by));
  if (event.note) li.append(el("span", "move-note", `note: ${event.note}`));
  li.onclick = () => { stop(); go(event.ply + 1); };
  log.append(li);
}

document.addEventListener("keydown", (e) => {
  if (e.key === "ArrowLeft") { stop(); go(index - 1); }
  else if (e.key === "ArrowRight") { stop(); go(index + 1); }
});
go(0);
document.body.dataset.ready = "1";
