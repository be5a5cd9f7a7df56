#!/usr/bin/env node
// An Atout bot in JavaScript, written from docs/protocol.md and the .proto alone.
//
//   node bot.js --server 127.0.0.1:50051 --token TOKEN [--version LABEL] [--proto PATH]
//               [--tls] [--ca FILE]
//
// It opens one BotGateway.Connect stream, answers every DecisionRequest with a random legal
// action (the same answer again if the request is sent again), answers the arena's pings,
// pings a silent arena itself, logs rejections, match starts and ends, and reconnects with
// exponential backoff (0.2 s doubling to 10 s, with jitter) whenever the stream breaks.
// It stops for good on what a retry cannot cure: a refused token, Error "replaced",
// "unsupported_version", "too_many_versions" or "revoked". SIGINT / SIGTERM end it cleanly.
//
// TLS: --tls checks the arena's certificate against the system's CAs, --ca FILE against a
// private CA's PEM file (implies --tls). A certificate refused before the first Welcome
// (another CA, another host name) or an arena that does not speak TLS is one line and exit 2:
// retrying cannot change a certificate.
//
// The arena address, token and CA file may also come from ATOUT_SERVER / ATOUT_TOKEN / ATOUT_CA_FILE.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const FATAL_ERRORS = new Set(["replaced", "unsupported_version", "too_many_versions", "revoked"]);
const BACKOFF_BASE_MS = 200;
const BACKOFF_CAP_MS = 10_000;
const PING_AFTER_MS = 1_000; // ping the arena after this long without a message from it
const SILENT_GIVE_UP_MS = 5_000; // ... and give the stream up after this long (docs/protocol.md)
const REMEMBERED_REQUESTS = 10_000;

function parseArgs(argv) {
  const args = {
    server: process.env.ATOUT_SERVER || "127.0.0.1:50051",
    token: process.env.ATOUT_TOKEN || "",
    version: "",
    proto: path.resolve(__dirname, "..", "..", "proto", "atout", "v1", "atout.proto"),
    ca: process.env.ATOUT_CA_FILE || "",
    tls: false,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const key = argv[i].replace(/^--/, "");
    if (key === "tls") {
      args.tls = true;
      continue;
    }
    if (!(key in args) || i + 1 >= argv.length) {
      console.error("usage: node bot.js --server HOST:PORT --token TOKEN [--version LABEL] [--proto PATH] " +
                    "[--tls] [--ca FILE]");
      process.exit(2);
    }
    args[key] = argv[(i += 1)];
  }
  if (!args.token) {
    console.error("no token: pass --token or set ATOUT_TOKEN");
    process.exit(2);
  }
  if (args.ca) {
    try {
      args.rootCerts = fs.readFileSync(args.ca);
    } catch (err) {
      console.error(`error: --ca ${args.ca}: cannot read it (${err.code || err.message})`);
      process.exit(2);
    }
    args.tls = true;
  }
  return args;
}

// grpc-js gives Node the host it dials as the TLS server name, an IP address too (127.0.0.1),
// which Node warns about (DEP0123) on every connection: harmless (the certificate is still
// checked against the address), and two lines of noise beside the bot's own.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = (warning, ...rest) => {
  if (rest.some((r) => r === "DEP0123" || (r && r.code === "DEP0123"))) return;
  emitWarning(warning, ...rest);
};

// The one line for people of a TLS handshake that failed (grpc-js's UNAVAILABLE details), or "".
function tlsRefusal(fullDetails, args) {
  if (!args.tls) return "";
  const found = /Last error: (?:Error: )?(.*?)(?:\. Resolution note:.*)?$/.exec(fullDetails);
  const details = found ? found[1] : fullDetails;
  if (/altnames|hostname|host name/i.test(details)) {
    return `TLS: the arena's certificate is not for ${args.server.replace(/:\d+$/, "")} (${details}): ` +
           "connect with a host name (or IP address) it names";
  }
  if (/certificate|self.signed|issuer/i.test(details)) {
    const hint = args.ca ? `is ${args.ca} the CA that signed it?` : "pass --ca FILE with the CA that signed it";
    return `TLS: the arena's certificate is not trusted (${details}): ${hint}`;
  }
  if (/SSL|TLS|wrong version/i.test(details)) {
    return `TLS: the handshake with ${args.server} failed (${details}): does the arena serve TLS on this port?`;
  }
  return "";
}

function log(...parts) {
  console.log(new Date().toISOString(), ...parts);
}

function loadGateway(protoPath) {
  const definition = protoLoader.loadSync(protoPath, {
    keepCase: true, // field names as in the .proto: request_id, legal_actions...
    longs: String, // uint64 / int64 (Ping.nonce, deadline_unix_ms) as decimal strings
    enums: String,
    defaults: true, // unset fields read as their zero value, as the .proto says
    oneofs: true, // message.kind names the field of the oneof that is set
  });
  return grpc.loadPackageDefinition(definition).atout.v1.BotGateway;
}

class Bot {
  constructor(args) {
    this.args = args;
    this.BotGateway = loadGateway(args.proto);
    this.failures = 0; // connection attempts in a row without a Welcome
    this.welcomed = false; // a Welcome came once: a TLS refusal later is retried like any failure
    this.stopping = false;
    this.call = null;
    this.matches = new Map(); // match id -> { seat, game, run }
    this.answers = new Map(); // request id -> the action sent (a request sent again gets the same)
    this.requests = new Map(); // request id -> the DecisionRequest (to answer again after a rejection)
    this.rejected = new Map(); // request id -> Set of the actions the arena refused
    this.stats = { connections: 0, decisions: 0, rejections: 0, starts: 0, ends: {} };
  }

  run() {
    for (const signal of ["SIGINT", "SIGTERM"]) {
      process.on(signal, () => this.stop(signal));
    }
    this.connect();
  }

  stop(why) {
    if (this.stopping) return;
    this.stopping = true;
    log(`stopping (${why}); ${JSON.stringify(this.stats)}`);
    if (this.call) this.call.end(); // close our side: the arena ends the stream cleanly
    setTimeout(() => process.exit(0), 1000).unref();
  }

  fatal(why, code = 1) {
    log(`fatal: ${why}; not reconnecting`);
    this.stopping = true;
    if (this.call) this.call.cancel();
    process.exit(code);
  }

  connect() {
    if (this.stopping) return;
    this.stats.connections += 1;
    // TLS: grpc-js offers ALPN h2, what a proxy terminating TLS in front of the arena must accept
    const credentials = this.args.tls ? grpc.credentials.createSsl(this.args.rootCerts || null)
      : grpc.credentials.createInsecure();
    const client = new this.BotGateway(this.args.server, credentials);
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${this.args.token}`);
    const call = client.Connect(metadata);
    this.call = call;
    const stream = { welcome: null, lastHeard: Date.now(), lastPing: 0, nonce: 0, ended: false, reason: "" };

    const send = (message) => {
      if (!stream.ended) call.write(message);
    };
    this.send = send;

    // The watchdog: ping an arena silent for 1 s, give up on one silent for 5 s (a hung game
    // server keeps the connection open and says nothing; a live one answers a Ping at once).
    const watchdog = setInterval(() => {
      const silent = Date.now() - stream.lastHeard;
      if (silent > SILENT_GIVE_UP_MS) {
        stream.reason = `the arena was silent for ${Math.round(silent / 1000)} s`;
        call.cancel();
      } else if (stream.welcome && silent > PING_AFTER_MS && Date.now() - stream.lastPing > PING_AFTER_MS) {
        stream.lastPing = Date.now();
        stream.nonce += 1;
        send({ ping: { nonce: String(stream.nonce) } });
      }
    }, 200);

    call.on("data", (message) => {
      stream.lastHeard = Date.now();
      try {
        this.onMessage(message, stream, send);
      } catch (err) {
        log(`error while handling ${message.kind}: ${err && err.stack}`); // never end the bot for it
      }
    });
    call.on("error", (err) => {
      if (err.code === grpc.status.UNAUTHENTICATED || err.code === grpc.status.PERMISSION_DENIED) {
        this.fatal(`the arena refused the token: ${err.details}`, 2);
      }
      const refused = !stream.welcome && !this.welcomed && err.code === grpc.status.UNAVAILABLE &&
        tlsRefusal(String(err.details), this.args);
      if (refused) { // a certificate does not change by retrying: one line, exit 2
        console.error(`error: ${refused}`);
        this.stopping = true;
        process.exit(2);
      }
      if (!stream.reason) stream.reason = `${grpc.status[err.code] || err.code}: ${err.details}`;
    });
    call.on("status", () => {
      if (stream.ended) return;
      stream.ended = true;
      clearInterval(watchdog);
      client.close();
      if (this.stopping) return;
      this.reconnectLater(stream.reason || "the stream ended");
    });

    send({
      hello: {
        protocol_version: 1,
        client: `atout-node-example/0.1.0 node/${process.versions.node}`,
        version: this.args.version,
      },
    });
  }

  reconnectLater(reason) {
    this.failures += 1;
    const delay = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (this.failures - 1)) * (0.5 + Math.random() / 2);
    log(`connection lost (${reason}); reconnecting in ${(delay / 1000).toFixed(1)} s (attempt ${this.failures})`);
    setTimeout(() => this.connect(), delay);
  }

  onMessage(message, stream, send) {
    switch (message.kind) {
      case "welcome":
        stream.welcome = message.welcome;
        this.welcomed = true;
        this.failures = 0;
        log(`connected as ${message.welcome.bot_name} (bot ${message.welcome.bot_id}) to game server ` +
            `${message.welcome.server_id}, keep-alive ${message.welcome.keepalive_ms} ms`);
        break;
      case "ping":
        send({ pong: { nonce: message.ping.nonce } });
        break;
      case "pong":
        break; // the answer to our own ping: hearing it is all it is for
      case "match_start":
        this.onMatchStart(message.match_start);
        break;
      case "decision":
        this.onDecision(message.decision, send);
        break;
      case "decisions": // a DecisionBatch: only sent to a bot whose Hello lists "batch" (not this one)
        for (const request of message.decisions.requests) this.onDecision(request, send);
        break;
      case "rejection":
        this.onRejection(message.rejection, send);
        break;
      case "match_end":
        this.onMatchEnd(message.match_end);
        break;
      case "error":
        this.onError(message.error, stream);
        break;
      default:
        log(`ignoring a message of a kind this bot does not know: ${message.kind}`);
    }
  }

  onMatchStart(start) {
    // Sent again on every reconnect while the match runs; again after a MatchEnd "restarted".
    const known = this.matches.get(start.match_id);
    if (known && known.seat === start.seat) return; // told again after a reconnect: nothing new
    this.matches.set(start.match_id, { seat: start.seat, game: start.game });
    this.stats.starts += 1;
    const options = start.options_json ? JSON.parse(start.options_json) : {};
    log(`match ${start.match_id} started: ${start.game} ${JSON.stringify(options)}, seat ${start.seat} ` +
        `of ${start.players} (${start.seat_names.join(", ")})`);
  }

  onDecision(request, send) {
    this.stats.decisions += 1;
    let action = this.answers.get(request.request_id);
    if (action === undefined) {
      // The observation (request.observation_json) is described per game by the JSON Schemas
      // of proto/atout/v1/observations/; this bot needs nothing but the legal actions.
      const legal = request.legal_actions;
      action = legal[Math.floor(Math.random() * legal.length)];
      this.answers.set(request.request_id, action);
      if (this.answers.size > REMEMBERED_REQUESTS) this.answers.delete(this.answers.keys().next().value);
    }
    this.requests.set(request.request_id, request);
    if (this.requests.size > REMEMBERED_REQUESTS) this.requests.delete(this.requests.keys().next().value);
    send({ action: { request_id: request.request_id, match_id: request.match_id, action } });
  }

  onRejection(rejection, send) {
    this.stats.rejections += 1;
    log(`match ${rejection.match_id}: ${JSON.stringify(rejection.action)} rejected: ${rejection.reason}`);
    const request = this.requests.get(rejection.request_id);
    if (!request || Date.now() >= Number(request.deadline_unix_ms)) return; // nothing more to try
    // final: the decision is over (the fallback played); another code than "illegal" is the game
    // server's (too late, unknown request...): answering again changes nothing
    if (rejection.final || (rejection.code && rejection.code !== "illegal")) return;
    const refused = this.rejected.get(rejection.request_id) || new Set();
    refused.add(rejection.action);
    this.rejected.set(rejection.request_id, refused);
    const other = request.legal_actions.find((a) => !refused.has(a));
    if (other !== undefined) {
      this.answers.set(rejection.request_id, other);
      send({ action: { request_id: rejection.request_id, match_id: rejection.match_id, action: other } });
    }
  }

  onMatchEnd(end) {
    this.matches.delete(end.match_id);
    this.stats.ends[end.reason] = (this.stats.ends[end.reason] || 0) + 1;
    const place = end.ranking[end.seat];
    log(`match ${end.match_id} ended (${end.reason}): seat ${end.seat}, ` +
        `${place ? `place ${place} of ${end.ranking.length}` : "no ranking"}, scores ${JSON.stringify(end.scores)}`);
  }

  onError(error, stream) {
    log(`arena error ${error.code}: ${error.message}`);
    if (FATAL_ERRORS.has(error.code)) this.fatal(`${error.code}: ${error.message}`);
    stream.reason = `${error.code}: ${error.message}`; // the stream ends: reconnect (keepalive_timeout, shutting_down)
  }
}

if (require.main === module) {
  new Bot(parseArgs(process.argv.slice(2))).run();
}

module.exports = { Bot, loadGateway };
