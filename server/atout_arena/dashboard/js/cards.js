// Card faces: rank and suit symbol, red or black; jokers; card backs; actions as people read them.

export const SUITS = { c: "♣", d: "♦", h: "♥", s: "♠" };
export const SUIT_NAMES = { c: "clubs", d: "diamonds", h: "hearts", s: "spades" };
const RANKS = { T: "10" };
const CARD = /^(?:[2-9TJQKA][cdhs]|RJ|BJ)$/;

export function isCard(text) {
  return CARD.test(text);
}

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

function isRed(code) {
  return code === "RJ" || code[1] === "h" || code[1] === "d";
}

export function cardLabel(code) {
  if (code === "RJ" || code === "BJ") return `${code === "RJ" ? "red" : "black"} joker`;
  return `${RANKS[code[0]] || code[0]}${SUITS[code[1]]}`;
}

// A card face. size: "" (table), "sm" (hands of others, tricks history), "xs" (inline).
export function cardEl(code, size = "") {
  const card = el("div", `card ${size} ${isRed(code) ? "red" : "black"}`);
  card.dataset.card = code;
  card.title = cardLabel(code);
  if (code === "RJ" || code === "BJ") {
    card.classList.add("joker");
    card.append(el("span", "corner", "★"), el("span", "pip", "JOKER"));
    return card;
  }
  const rank = RANKS[code[0]] || code[0];
  const suit = SUITS[code[1]];
  const corner = el("span", "corner");
  corner.append(el("b", null, rank), el("i", null, suit));
  card.append(corner, el("span", "pip", suit));
  if (!size) {
    const bottom = el("span", "corner bottom");
    bottom.append(el("b", null, rank), el("i", null, suit));
    card.append(bottom);
  }
  return card;
}

export function backEl(size = "sm") {
  return el("div", `card back ${size}`);
}

// Inline mini card for text (logs, tables): "Q♥" in the suit's colour.
export function inlineCard(code) {
  const span = el("span", `ic ${isRed(code) ? "red" : "black"}`, cardLabel(code));
  span.dataset.card = code;
  return span;
}

export function suitEl(letter) {
  const span = el("span", `suit ${letter === "h" || letter === "d" ? "red" : "black"}`, SUITS[letter] || "?");
  span.title = SUIT_NAMES[letter] || "";
  return span;
}

// An action string with its cards (and suits, for "trump h") drawn: a DocumentFragment.
// Régicide's "trump h invert" (both changes at once) reads "trump ♥ + invert".
export function actionEl(action) {
  const fragment = document.createDocumentFragment();
  const words = String(action).split(" ");
  words.forEach((word, i) => {
    if (i) fragment.append(" ");
    if (isCard(word)) fragment.append(inlineCard(word));
    else if (i === 1 && words[0] === "trump" && SUITS[word]) fragment.append(suitEl(word));
    else if (i === 2 && words[0] === "trump" && word === "invert") fragment.append("+ invert");
    else fragment.append(word);
  });
  return fragment;
}
