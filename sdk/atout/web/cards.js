// Card faces: rank and suit symbol, red or black; jokers; card backs; actions as people read them.
// Every card and suit drawn has a spoken name (role "img", aria-label "king of hearts"): a screen
// reader says the card once, not its corners ("K♥♥K♥").

export const SUITS = { c: "♣", d: "♦", h: "♥", s: "♠" };
export const SUIT_NAMES = { c: "clubs", d: "diamonds", h: "hearts", s: "spades" };
const RANKS = { T: "10" };
const RANK_NAMES = {
  2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", T: "ten",
  J: "jack", Q: "queen", K: "king", A: "ace",
};
const CARD_IN_TEXT = /\b(?:[2-9TJQKA][cdhs]|RJ|BJ)\b/g;
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

// A card's spoken name: "king of hearts", "ten of spades", "red joker".
export function cardName(code) {
  if (code === "RJ" || code === "BJ") return `${code === "RJ" ? "red" : "black"} joker`;
  return `${RANK_NAMES[code[0]]} of ${SUIT_NAMES[code[1]]}`;
}

// Text with its card codes in words: "play 8h" -> "play eight of hearts".
export function inWords(text) {
  return String(text).replace(CARD_IN_TEXT, (code) => cardName(code));
}

// An action as people say it: "play king of hearts", "beat six of clubs with nine of clubs",
// "trump hearts + invert".
export function actionName(action) {
  const words = String(action).split(" ");
  if (words[0] === "beat" && words.length === 3 && isCard(words[1]) && isCard(words[2])) {
    return `beat ${cardName(words[1])} with ${cardName(words[2])}`;
  }
  if (words[0] === "trump" && SUIT_NAMES[words[1]]) {
    return ["trump", SUIT_NAMES[words[1]], ...(words[2] === "invert" ? ["+ invert"] : words.slice(2))].join(" ");
  }
  return inWords(action);
}

function spoken(node, name) {
  node.setAttribute("role", "img");
  node.setAttribute("aria-label", name);
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
  card.title = cardName(code);
  spoken(card, cardName(code));
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
  return spoken(span, cardName(code));
}

export function suitEl(letter) {
  const span = el("span", `suit ${letter === "h" || letter === "d" ? "red" : "black"}`, SUITS[letter] || "?");
  span.title = SUIT_NAMES[letter] || "";
  return spoken(span, SUIT_NAMES[letter] || "unknown suit");
}

// An action string with its cards (and suits, for "trump h") drawn: a DocumentFragment.
// Régicide's "trump h invert" (both changes at once) reads "trump ♥ hearts + invert": the suit
// on a white chip (its colour on a coloured button is unreadable) and its name in words
// ("trump ♦" and "trump ♥" differ by more than a shape).
export function actionEl(action) {
  const fragment = document.createDocumentFragment();
  const words = String(action).split(" ");
  words.forEach((word, i) => {
    if (i) fragment.append(" ");
    if (isCard(word)) fragment.append(inlineCard(word));
    else if (i === 1 && words[0] === "trump" && SUITS[word]) {
      const chip = suitEl(word);
      chip.classList.add("ic");
      chip.setAttribute("aria-hidden", "true");
      chip.removeAttribute("role");
      chip.removeAttribute("aria-label");
      fragment.append(chip, ` ${SUIT_NAMES[word]}`);
    }
    else if (i === 2 && words[0] === "trump" && word === "invert") fragment.append("+ invert");
    else fragment.append(word);
  });
  return fragment;
}
