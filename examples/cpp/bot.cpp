// An Atout bot in C++, written from docs/protocol.md and the .proto alone.
//
//   atout-bot --server HOST:PORT --token TOKEN [--version LABEL] [--tls] [--ca FILE]
//
// It opens one BotGateway.Connect stream (metadata `authorization: Bearer <token>`), sends a
// Hello, answers every DecisionRequest with a random one of its legal_actions (the same answer
// again if the request is sent again after a reconnect), answers the arena's Pings with Pongs,
// pings a silent arena itself, logs rejections, errors, match starts and ends (one line each),
// and reconnects with exponential backoff (0.2 s doubling to 10 s, with jitter) whenever the
// stream ends. It stops for good on what a retry cannot cure: a refused token (exit 2), Error
// "replaced", "unsupported_version", "too_many_versions" or "revoked" (exit 1).
//
// TLS: --tls checks the arena's certificate against the system's CAs, --ca FILE against a
// private CA's PEM file (implies --tls), with grpc::SslCredentials.
// The address, token and CA file may also come from ATOUT_SERVER / ATOUT_TOKEN / ATOUT_CA_FILE.
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "atout.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;
using atout::v1::ArenaMessage;
using atout::v1::BotMessage;

constexpr int kBackoffBaseMs = 200;
constexpr int kBackoffCapMs = 10000;
constexpr int kPingAfterMs = 1000;      // ping the arena after this long without a message from it
constexpr int kSilentGiveUpMs = 5000;   // ... and give the stream up after this long
constexpr size_t kRemembered = 10000;   // request ids remembered (answers sent again on reconnect)
const std::set<std::string> kFatalErrors = {"replaced", "unsupported_version", "too_many_versions", "revoked"};

std::atomic<bool> g_stopping{false};
std::mutex g_log_mutex;

void log_line(const std::string& text) {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::lock_guard<std::mutex> lock(g_log_mutex);
  std::cout << std::put_time(&tm, "%Y-%m-%dT%H:%M:%S") << '.' << std::setw(3) << std::setfill('0') << ms
            << "Z " << text << std::endl;
}

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Args {
  std::string server = "127.0.0.1:50051";
  std::string token;
  std::string version;
  std::string ca;
  bool tls = false;
};

[[noreturn]] void usage() {
  std::cerr << "usage: atout-bot --server HOST:PORT --token TOKEN [--version LABEL] [--tls] [--ca FILE]\n";
  std::exit(2);
}

Args parse_args(int argc, char** argv) {
  Args args;
  if (const char* v = std::getenv("ATOUT_SERVER")) args.server = v;
  if (const char* v = std::getenv("ATOUT_TOKEN")) args.token = v;
  if (const char* v = std::getenv("ATOUT_CA_FILE")) args.ca = v;
  for (int i = 1; i < argc; ++i) {
    std::string key = argv[i];
    if (key == "--tls") { args.tls = true; continue; }
    if (i + 1 >= argc) usage();
    std::string value = argv[++i];
    if (key == "--server") args.server = value;
    else if (key == "--token") args.token = value;
    else if (key == "--version") args.version = value;
    else if (key == "--ca") args.ca = value;
    else usage();
  }
  if (args.token.empty()) {
    std::cerr << "no token: pass --token or set ATOUT_TOKEN\n";
    std::exit(2);
  }
  if (!args.ca.empty()) args.tls = true;
  return args;
}

std::shared_ptr<grpc::ChannelCredentials> credentials(const Args& args) {
  if (!args.tls) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  if (!args.ca.empty()) {
    std::ifstream file(args.ca);
    if (!file) {
      std::cerr << "error: --ca " << args.ca << ": cannot read it\n";
      std::exit(2);
    }
    std::stringstream pem;
    pem << file.rdbuf();
    options.pem_root_certs = pem.str();  // empty: the system's CAs
  }
  return grpc::SslCredentials(options);
}

std::string join(const google::protobuf::RepeatedPtrField<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

template <typename T>
std::string json_list(const google::protobuf::RepeatedField<T>& items) {
  std::string out = "[";
  for (int i = 0; i < items.size(); ++i) out += (i ? "," : "") + std::to_string(items.Get(i));
  return out + "]";
}

// What the bot remembers across streams: the answers given (a request sent again after a
// reconnect gets the same one), the requests open (to answer again after a rejection), the
// matches it sits in.
class Memory {
 public:
  std::string answer_for(const atout::v1::DecisionRequest& request) {
    auto found = answers_.find(request.request_id());
    if (found != answers_.end()) return found->second;
    // The observation (request.observation_json()) is described per game by the JSON Schemas of
    // proto/atout/v1/observations/; this bot needs nothing but the legal actions (never empty).
    const auto& legal = request.legal_actions();
    std::uniform_int_distribution<int> pick(0, legal.size() - 1);
    std::string action = legal.Get(pick(rng_));
    remember(request.request_id(), action, request);
    return action;
  }

  // Another legal action than those refused, or "" when none is left or the deadline passed.
  std::string another_answer(const atout::v1::Rejection& rejection) {
    auto found = requests_.find(rejection.request_id());
    if (found == requests_.end() || unix_ms() >= found->second.deadline_unix_ms()) return "";
    auto& refused = refused_[rejection.request_id()];
    refused.insert(rejection.action());
    for (const auto& action : found->second.legal_actions()) {
      if (!refused.count(action)) {
        answers_[rejection.request_id()] = action;
        return action;
      }
    }
    return "";
  }

  std::map<std::string, uint32_t> matches;  // match id -> the bot's seat

 private:
  void remember(const std::string& id, const std::string& action, const atout::v1::DecisionRequest& request) {
    answers_[id] = action;
    requests_[id] = request;
    order_.push_back(id);
    while (order_.size() > kRemembered) {
      answers_.erase(order_.front());
      requests_.erase(order_.front());
      refused_.erase(order_.front());
      order_.pop_front();
    }
  }

  std::mt19937 rng_{std::random_device{}()};
  std::unordered_map<std::string, std::string> answers_;
  std::unordered_map<std::string, atout::v1::DecisionRequest> requests_;
  std::unordered_map<std::string, std::set<std::string>> refused_;
  std::deque<std::string> order_;
};

// One Connect stream: a reader (this thread) and a watchdog thread that pings a quiet arena and
// cancels the call when it stays silent. Writes from both go through one mutex.
class Stream {
 public:
  Stream(const Args& args, Memory& memory) : args_(args), memory_(memory) {}

  // Runs the stream to its end; returns why it ended (for the log). Exits on a fatal end.
  std::string run(bool& welcomed) {
    auto channel = grpc::CreateChannel(args_.server, credentials(args_));
    auto stub = atout::v1::BotGateway::NewStub(channel);
    context_.AddMetadata("authorization", "Bearer " + args_.token);
    stream_ = stub->Connect(&context_);

    BotMessage hello;
    hello.mutable_hello()->set_protocol_version(1);
    hello.mutable_hello()->set_client("atout-cpp-example/0.1.0 grpc++/" + grpc::Version());
    hello.mutable_hello()->set_version(args_.version);
    send(hello);

    last_heard_ = Clock::now();
    std::thread watchdog([this] { watch(); });
    ArenaMessage message;
    while (stream_->Read(&message)) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        last_heard_ = Clock::now();
      }
      try {
        handle(message, welcomed);
      } catch (const std::exception& err) {
        log_line(std::string("error while handling a message: ") + err.what());  // never end the bot for it
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ended_ = true;
    }
    wake_.notify_all();
    watchdog.join();
    grpc::Status status = stream_->Finish();
    if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
        status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
      log_line("fatal: the arena refused the token: " + status.error_message() + "; not reconnecting");
      std::exit(2);
    }
    if (!reason_.empty()) return reason_;
    if (!status.ok()) return "status " + std::to_string(status.error_code()) + ": " + status.error_message();
    return "the stream ended";
  }

  void cancel() { context_.TryCancel(); }

 private:
  void send(const BotMessage& message) {
    std::lock_guard<std::mutex> lock(write_mutex_);
    stream_->Write(message);  // false once the stream is broken: the reader sees it end
  }

  void watch() {
    uint64_t nonce = 0;
    auto last_ping = Clock::now() - std::chrono::hours(1);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!ended_) {
      wake_.wait_for(lock, std::chrono::milliseconds(200));
      if (ended_) break;
      auto now = Clock::now();
      auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_heard_).count();
      if (g_stopping) {
        lock.unlock();
        {
          std::lock_guard<std::mutex> write_lock(write_mutex_);
          stream_->WritesDone();  // close our side: the arena ends the stream cleanly
        }
        std::this_thread::sleep_for(std::chrono::seconds(1));
        context_.TryCancel();
        lock.lock();
        wake_.wait(lock, [this] { return ended_; });
        break;
      }
      if (silent > kSilentGiveUpMs) {
        reason_ = "the arena was silent for " + std::to_string(silent / 1000) + " s";
        context_.TryCancel();
      } else if (welcomed_ && silent > kPingAfterMs && now - last_ping > std::chrono::milliseconds(kPingAfterMs)) {
        last_ping = now;
        BotMessage ping;
        ping.mutable_ping()->set_nonce(++nonce);
        lock.unlock();
        send(ping);
        lock.lock();
      }
    }
  }

  void answer(const std::string& request_id, const std::string& match_id, const std::string& action) {
    BotMessage reply;
    auto* a = reply.mutable_action();
    a->set_request_id(request_id);
    a->set_match_id(match_id);
    a->set_action(action);
    send(reply);
  }

  void handle(const ArenaMessage& message, bool& welcomed) {
    switch (message.kind_case()) {
      case ArenaMessage::kWelcome: {
        const auto& w = message.welcome();
        {
          std::lock_guard<std::mutex> lock(mutex_);
          welcomed_ = true;
        }
        welcomed = true;
        log_line("connected as " + w.bot_name() + " (bot " + w.bot_id() + ") to game server " + w.server_id() +
                 ", keep-alive " + std::to_string(w.keepalive_ms()) + " ms");
        break;
      }
      case ArenaMessage::kPing: {
        BotMessage pong;
        pong.mutable_pong()->set_nonce(message.ping().nonce());
        send(pong);
        break;
      }
      case ArenaMessage::kPong:
        break;  // the answer to our own ping: hearing it is all it is for
      case ArenaMessage::kMatchStart:
        on_match_start(message.match_start());
        break;
      case ArenaMessage::kDecision:
        on_decision(message.decision());
        break;
      case ArenaMessage::kDecisions:  // only sent to a bot whose Hello lists "batch" (not this one)
        for (const auto& request : message.decisions().requests()) on_decision(request);
        break;
      case ArenaMessage::kBundle:  // only sent to a bot whose Hello lists "bundle" (not this one)
        for (const auto& inner : message.bundle().messages()) handle(inner, welcomed);
        break;
      case ArenaMessage::kRejection:
        on_rejection(message.rejection());
        break;
      case ArenaMessage::kMatchEnd:
        on_match_end(message.match_end());
        break;
      case ArenaMessage::kError:
        on_error(message.error());
        break;
      default:
        log_line("ignoring a message of a kind this bot does not know (" + std::to_string(message.kind_case()) + ")");
    }
  }

  void on_match_start(const atout::v1::MatchStart& start) {
    // Sent again on every reconnect while the match runs; again after a MatchEnd "restarted".
    auto known = memory_.matches.find(start.match_id());
    if (known != memory_.matches.end() && known->second == start.seat()) return;  // nothing new
    memory_.matches[start.match_id()] = start.seat();
    nlohmann::json options = nlohmann::json::object();
    if (!start.options_json().empty()) options = nlohmann::json::parse(start.options_json(), nullptr, false);
    log_line("match " + start.match_id() + " started: " + start.game() + " " + options.dump() + ", seat " +
             std::to_string(start.seat()) + " of " + std::to_string(start.players()) + " (" +
             join(start.seat_names()) + ")");
  }

  void on_decision(const atout::v1::DecisionRequest& request) {
    answer(request.request_id(), request.match_id(), memory_.answer_for(request));
  }

  void on_rejection(const atout::v1::Rejection& rejection) {
    log_line("match " + rejection.match_id() + ": \"" + rejection.action() + "\" rejected: " + rejection.reason());
    std::string other = memory_.another_answer(rejection);
    if (!other.empty()) answer(rejection.request_id(), rejection.match_id(), other);
  }

  void on_match_end(const atout::v1::MatchEnd& end) {
    memory_.matches.erase(end.match_id());
    std::string place = "no ranking";
    if (static_cast<int>(end.seat()) < end.ranking_size() && end.ranking(end.seat()) > 0) {
      place = "place " + std::to_string(end.ranking(end.seat())) + " of " + std::to_string(end.ranking_size());
    }
    log_line("match " + end.match_id() + " ended (" + end.reason() + "): seat " + std::to_string(end.seat()) +
             ", " + place + ", scores " + json_list(end.scores()));
  }

  void on_error(const atout::v1::Error& error) {
    log_line("arena error " + error.code() + ": " + error.message());
    if (kFatalErrors.count(error.code())) {
      log_line("fatal: " + error.code() + ": " + error.message() + "; not reconnecting");
      std::exit(1);
    }
    // The stream ends (keepalive_timeout, shutting_down, moved...): reconnect.
    std::lock_guard<std::mutex> lock(mutex_);
    reason_ = error.code() + ": " + error.message();
  }

  const Args& args_;
  Memory& memory_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<BotMessage, ArenaMessage>> stream_;
  std::mutex write_mutex_;
  std::mutex mutex_;  // guards what follows
  std::condition_variable wake_;
  Clock::time_point last_heard_;
  bool welcomed_ = false;
  bool ended_ = false;
  std::string reason_;
};

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv);
  std::signal(SIGINT, [](int) { g_stopping = true; });
  std::signal(SIGTERM, [](int) { g_stopping = true; });
  Memory memory;
  std::mt19937 rng{std::random_device{}()};
  int failures = 0;  // attempts in a row without a Welcome
  while (!g_stopping) {
    bool welcomed = false;
    std::string reason;
    {
      Stream stream(args, memory);
      reason = stream.run(welcomed);
    }
    if (g_stopping) break;
    if (welcomed) failures = 0;
    failures += 1;
    double delay_ms = std::min<double>(kBackoffCapMs, kBackoffBaseMs * std::pow(2.0, failures - 1)) *
                      std::uniform_real_distribution<double>(0.5, 1.0)(rng);
    std::ostringstream line;
    line << "connection lost (" << reason << "); reconnecting in " << std::fixed << std::setprecision(1)
         << delay_ms / 1000 << " s (attempt " << failures << ")";
    log_line(line.str());
    auto until = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(delay_ms));
    while (!g_stopping && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  log_line("stopping");
  return 0;
}
