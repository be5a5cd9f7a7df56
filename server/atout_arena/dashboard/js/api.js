// The REST API from the browser: JSON calls with the optional token, and a server-sent
// events reader built on fetch (EventSource cannot send an Authorization header).

const TOKEN_KEY = "atout-token";

export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY) || "",
  set: (value) => {
    if (value) sessionStorage.setItem(TOKEN_KEY, value.trim());
    else sessionStorage.removeItem(TOKEN_KEY);
  },
};

export class ApiError extends Error {
  constructor(status, detail) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.status = status;
  }
}

function headers(extra = {}) {
  const h = { Accept: "application/json", ...extra };
  const t = token.get();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

export async function api(path, { method = "GET", body, signal } = {}) {
  const response = await fetch(path, {
    method,
    signal,
    headers: headers(body ? { "Content-Type": "application/json" } : {}),
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiError(response.status, data && data.detail ? data.detail : text);
  return data;
}

// Follow a text/event-stream: onEvent(type, data) for each event. Reconnects after a drop
// until an "end" event came or stop() is called. Returns { stop }.
export function followEvents(path, onEvent, { onState = () => {} } = {}) {
  const controller = new AbortController();
  let ended = false;

  async function once() {
    const response = await fetch(path, {
      signal: controller.signal,
      headers: headers({ Accept: "text/event-stream" }),
    });
    if (!response.ok) {
      const text = await response.text();
      let detail = text;
      try { detail = JSON.parse(text).detail; } catch { /* plain text */ }
      throw new ApiError(response.status, detail);
    }
    onState("live");
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
        let type = "message";
        const data = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith("event:")) type = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (!data.length) continue; // a keep-alive comment
        const event = JSON.parse(data.join("\n"));
        onEvent(type, event);
        if (type === "end") ended = true;
      }
    }
  }

  (async () => {
    while (!ended && !controller.signal.aborted) {
      try {
        await once();
      } catch (error) {
        if (controller.signal.aborted) return;
        if (error instanceof ApiError && error.status < 500) {
          onState("error", error.message);
          return;
        }
        onState("reconnecting");
      }
      if (!ended && !controller.signal.aborted) await new Promise((r) => setTimeout(r, 1000));
    }
    if (ended) onState("ended");
  })();

  return { stop: () => controller.abort() };
}
