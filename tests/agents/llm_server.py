#!/usr/bin/env python3
"""A scripted model server for the LLM client's tests (Python 3 stdlib only).

Speaks POST /v1/chat/completions (OpenAI) and POST /v1/messages (Anthropic),
streamed (server-sent events) or not, answering each request with the next
entry of a script:

    {"replies": [
        {"text": "hello", "tokens_in": 12, "tokens_out": 3, "finish": "stop"},
        {"status": 429, "retry_after": "1"},      # any status, optional header
        {"fault": "truncate"},                    # stream/body cut before its end
        {"fault": "truncate", "after": 3},        # a stream cut after its first 3 events
        {"fault": "invalid_json"},                # 200 with a body that is not JSON
        {"fault": "close"},                       # close the connection, no answer
        {"fault": "refuse", "seconds": 2},        # close it, then stop listening for 2 s
        {"text": "slow", "delay": 0.2, "chunk": 2}, # stream 2 characters per event, 0.2 s apart
        {"text": "late", "wait": 1.5},            # 1.5 s of silence before the headers
        {"text": "stuck", "stall": 5},            # a stream silent for 5 s after its first event
        {"text": "x", "repeat": 5000000},         # the text 5 000 000 times (a flood, and a loop)
        {"count": 5000000},                       # 5 000 000 bytes of counting: a flood, no loop
        {"text": "x", "progress": [[512, 2048], [1024, 2048]]},
                                                  # llama.cpp's prompt_progress events first
                                                  # (processed, total), when streamed
        {"text": "x", "timings": {"prompt_n": 900, "prompt_ms": 3000}},
                                                  # llama.cpp's timings in the last event
        {"fault": "flood", "bytes": 9000000}      # 200, then 9 MB with no newline
    ]}

A script may also hold what the server's other routes answer, 404 where
it holds none: "models" (GET /v1/models), "props" (GET /props) and "show"
(POST /api/show), each a JSON value sent as it is, or {"status": N} for an
error. These requests take no entry and are not logged.

An error entry may carry "message" (put in the error body). An entry with
"match" answers only a request whose body holds that text: each request
takes the first unused entry it may (so that, with several calls in flight
at once, a planner's request and an executor's each get their own kind of
reply whichever arrives first). Once the script is used up every request
gets HTTP 500 "script exhausted". Every request is
appended to the log as one JSON line (time, path, headers, body, and
"fault": what the answer was, "ok" for a plain reply), so tests can count
attempts, time them, and check what was sent.

Instead of a list, a script may ask for faults at random, for soak runs:

    {"random": {"seed": 7, "idle": 2, "refuse_s": 3,
                "faults": {"truncate": 0.05, "refuse": 0.02, "wait": 0.05, "slow": 0.05,
                           "stall": 0.02, "500": 0.05, "429": 0.05, "invalid_json": 0.05,
                           "close": 0.02},
                "replies": [{"kind": "good", "weight": 6, "text": "... {n} ..."}, ...]}}

Each request draws a fault by those probabilities (none: a plain reply), and
each reply (plain or delayed) draws a text by weight, with {n} replaced by
the request's number so that no two replies are alike. "idle" is the
client's idle limit: a stall lasts past it, a wait or a slow stream stays
well within it. A refusal lasts up to "refuse_s" seconds.
The log adds "kind", the reply's kind, and "delivered": whether a whole
reply was sent (plain, wait and slow ones).

A test may replace the script file (write and rename) between requests: the
next request starts the new script from its first entry. One server then
serves a whole test program, which keeps the interpreter's start-up (slow
behind version-manager shims) out of every test.

usage: llm_server.py SCRIPT LOG PORTFILE
Binds 127.0.0.1 on a free port, writes the port to PORTFILE, and serves
until killed or until its parent process goes away.
"""
import http.server
import json
import os
import random
import sys
import threading
import time


def fault_of(entry):
    """What an entry does to the client, as the log names it."""
    if "fault" in entry:
        return entry["fault"]
    if "status" in entry:
        return str(entry["status"])
    for key in ("stall", "wait"):
        if entry.get(key):
            return key
    return "slow" if entry.get("delay") else "ok"


class Random:
    """Faults drawn at random, reproducibly from a seed."""

    def __init__(self, spec):
        self.rng = random.Random(spec.get("seed", 1))
        self.idle = spec.get("idle", 2)
        self.refuse_s = spec.get("refuse_s", 3)
        self.faults = spec.get("faults", {})
        self.replies = spec.get("replies", [{"kind": "good", "text": "reply {n}"}])
        self.count = 0

    def reply(self):
        r = self.rng.choices(self.replies, [r.get("weight", 1) for r in self.replies])[0]
        return {"kind": r.get("kind", "good"), "text": r["text"].replace("{n}", str(self.count)),
                "tokens_in": r.get("tokens_in", 1000), "tokens_out": r.get("tokens_out", 100)}

    def draw(self):
        self.count += 1
        u, fault = self.rng.random(), "ok"
        for name, p in self.faults.items():
            if u < p:
                fault = name
                break
            u -= p
        if fault in ("500", "429"):
            return {"status": int(fault), "retry_after": "1"} if fault == "429" else {"status": 500}
        if fault == "refuse":
            return {"fault": "refuse", "seconds": self.rng.uniform(0.5, self.refuse_s)}
        if fault in ("close", "invalid_json"):
            return {"fault": fault}
        entry = self.reply()
        if fault == "truncate":
            entry.update(fault="truncate", after=self.rng.randint(1, 4), chunk=64)
        elif fault == "wait":
            entry["wait"] = self.rng.uniform(0.2, self.idle * 0.5)
        elif fault == "slow":
            entry.update(chunk=64, delay=self.rng.uniform(0.01, 0.05))
        elif fault == "stall":
            entry["stall"] = self.idle + 2
        return entry


class Script:
    def __init__(self, path, log):
        self.path = path
        self.version = None
        self.lock = threading.Lock()
        self.log = log
        self.refuse_until = 0

    def reload(self):
        st = os.stat(self.path)
        version = (st.st_ino, st.st_mtime_ns, st.st_size)
        if version != self.version:
            with open(self.path) as f:
                script = json.load(f)
            self.random = Random(script["random"]) if "random" in script else None
            self.replies = script.get("replies", [])
            self.routes = {"/v1/models": script.get("models"), "/props": script.get("props"),
                           "/api/show": script.get("show")}
            self.version = version
            self.used = set()

    def entry(self, body):
        if self.random:
            return self.random.draw()
        text = json.dumps(body)
        for i, entry in enumerate(self.replies):
            if i not in self.used and entry.get("match", "") in text:
                self.used.add(i)
                return entry
        return {"status": 500, "message": "script exhausted"}

    def route(self, path):
        """What a side route answers: no entry is taken, nothing logged."""
        with self.lock:
            self.reload()
            return self.routes.get(path)

    def take(self, record):
        with self.lock:
            self.reload()
            entry = self.entry(record.get("body"))
            record.update(fault=fault_of(entry), kind=entry.get("kind", ""),
                          delivered=fault_of(entry) in ("ok", "wait", "slow"))
            with open(self.log, "a") as f:
                f.write(json.dumps(record) + "\n")
            return entry


def text_of(entry):
    if "count" in entry:
        parts, size, i = [], 0, 0
        while size < entry["count"]:
            parts.append(str(i) + "\n")
            size += len(parts[-1])
            i += 1
        return "".join(parts)[:entry["count"]]
    return entry.get("text", "") * entry.get("repeat", 1)


def openai_body(entry, model):
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "finish_reason": entry.get("finish", "stop"),
                     "message": {"role": "assistant", "content": text_of(entry)}}],
        "usage": {"prompt_tokens": entry.get("tokens_in", 0),
                  "completion_tokens": entry.get("tokens_out", 0)},
    }


def anthropic_body(entry, model):
    return {
        "id": "msg_test", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text_of(entry)}],
        "stop_reason": entry.get("finish", "end_turn"),
        "usage": {"input_tokens": entry.get("tokens_in", 0),
                  "output_tokens": entry.get("tokens_out", 0)},
    }


def openai_events(entry, model):
    text, step = text_of(entry), entry.get("chunk", 16)
    for processed, total in entry.get("progress", []):
        yield None, {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None},
                                  "finish_reason": None}], "model": model,
                     "prompt_progress": {"total": total, "cache": 0, "processed": processed,
                                         "time_ms": 10}}
    for i in range(0, len(text), step):
        yield None, {"choices": [{"index": 0, "delta": {"content": text[i:i + step]},
                                  "finish_reason": None}], "model": model}
    last = {"choices": [{"index": 0, "delta": {}, "finish_reason": entry.get("finish", "stop")}]}
    if "timings" in entry:
        last["timings"] = entry["timings"]
    yield None, last
    yield None, {"choices": [], "usage": {"prompt_tokens": entry.get("tokens_in", 0),
                                          "completion_tokens": entry.get("tokens_out", 0)}}
    yield None, "[DONE]"


def anthropic_events(entry, model):
    text, step = text_of(entry), entry.get("chunk", 16)
    yield "message_start", {"type": "message_start", "message": {
        "id": "msg_test", "type": "message", "role": "assistant", "model": model, "content": [],
        "usage": {"input_tokens": entry.get("tokens_in", 0), "output_tokens": 1}}}
    yield "content_block_start", {"type": "content_block_start", "index": 0,
                                  "content_block": {"type": "text", "text": ""}}
    yield "ping", {"type": "ping"}
    for i in range(0, len(text), step):
        yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "text_delta", "text": text[i:i + step]}}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": entry.get("finish", "end_turn")},
                            "usage": {"output_tokens": entry.get("tokens_out", 0)}}
    yield "message_stop", {"type": "message_stop"}


class Handler(http.server.BaseHTTPRequestHandler):
    # HTTP/1.0: a streamed reply ends when the connection closes, so a cut
    # stream looks complete to the transport and only its missing end event
    # tells; that is the case the client must catch.
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):
        pass

    def side_route(self):
        answer = self.server.script.route(self.path)
        if answer is None:
            answer = {"status": 404, "message": "no such endpoint: " + self.path}
        if isinstance(answer, dict) and "status" in answer:
            self.answer_error(answer)
            return
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.side_route()

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if self.path == "/api/show":
            self.side_route()
            return
        entry = self.server.script.take({"time": time.time(), "path": self.path,
                                         "headers": dict(self.headers.items()), "body": body})
        anthropic = self.path.endswith("/messages")
        if self.path not in ("/v1/chat/completions", "/v1/messages"):
            entry = {"status": 404, "message": "no such endpoint: " + self.path}
        model = (body or {}).get("model", "")
        fault = entry.get("fault")
        if fault in ("close", "refuse"):
            self.close_connection = True
            if fault == "refuse":
                self.server.script.refuse_until = time.time() + entry.get("seconds", 1)
                threading.Thread(target=self.server.shutdown, daemon=True).start()
            return
        if entry.get("wait"):
            time.sleep(entry["wait"])
        if "status" in entry:
            self.answer_error(entry)
        elif (body or {}).get("stream"):
            self.stream(entry, model, anthropic)
        else:
            self.whole(entry, model, anthropic)

    def answer_error(self, entry):
        data = json.dumps({"error": {"type": "test_error",
                                     "message": entry.get("message", "scripted error")}}).encode()
        self.send_response(entry["status"])
        if "retry_after" in entry:
            self.send_header("Retry-After", str(entry["retry_after"]))
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def whole(self, entry, model, anthropic):
        if entry.get("fault") == "invalid_json":
            data = b'{"choices": [ this is not json'
        else:
            make = anthropic_body if anthropic else openai_body
            data = json.dumps(make(entry, model)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if entry.get("fault") == "truncate":
            # Promise more than is sent: the transport sees a short body.
            self.send_header("Content-Length", str(len(data) * 2))
        else:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def stream(self, entry, model, anthropic):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        if entry.get("fault") == "flood":
            try:
                for _ in range(0, entry.get("bytes", 1 << 20), 1 << 16):
                    self.wfile.write(b"a" * (1 << 16))
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped reading at its cap
            return
        events = list((anthropic_events if anthropic else openai_events)(entry, model))
        fault = entry.get("fault")
        if fault == "truncate":
            events = events[:entry.get("after", len(events) // 2)]
        for i, (name, data) in enumerate(events):
            if i > 0 and entry.get("delay"):
                time.sleep(entry["delay"])
            if i == 1 and entry.get("stall"):
                time.sleep(entry["stall"])
            text = data if isinstance(data, str) else json.dumps(data)
            if fault == "invalid_json" and i == 1:
                text = "{not json"
            chunk = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
            try:
                self.wfile.write(chunk.encode())
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up on purpose: a timeout or cancel test


def watch_parent(parent):
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(0)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: llm_server.py SCRIPT LOG PORTFILE")
    script_path, log, portfile = sys.argv[1:]
    script = Script(script_path, log)
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    port = 0
    while True:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        server.daemon_threads = True
        server.script = script
        if port == 0:
            port = server.server_address[1]
            tmp = portfile + ".tmp"
            with open(tmp, "w") as f:
                f.write(str(port))
            os.rename(tmp, portfile)
        server.serve_forever()
        # A "refuse" entry stopped the loop: nobody listens on the port
        # (connections are refused) until its time is up.
        server.server_close()
        time.sleep(max(0.0, script.refuse_until - time.time()))


if __name__ == "__main__":
    main()
