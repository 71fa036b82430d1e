#!/usr/bin/env python3
"""A scripted model server for the LLM client's tests (Python 3 stdlib only).

Speaks POST /v1/chat/completions (OpenAI) and POST /v1/messages (Anthropic),
streamed (server-sent events) or not, answering each request with the next
entry of a script:

    {"replies": [
        {"text": "hello", "tokens_in": 12, "tokens_out": 3, "finish": "stop"},
        {"status": 429, "retry_after": "1"},      # any status, optional header
        {"fault": "truncate"},                    # stream/body cut before its end
        {"fault": "invalid_json"},                # 200 with a body that is not JSON
        {"fault": "close"},                       # close the connection, no answer
        {"text": "slow", "delay": 0.2, "chunk": 2} # stream 2 characters per event, 0.2 s apart
    ]}

An error entry may carry "message" (put in the error body). Once the script
is used up every request gets HTTP 500 "script exhausted". Every request is
appended to the log as one JSON line (time, path, headers, body), so tests
can count attempts, time them, and check what was sent.

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
import sys
import threading
import time


class Script:
    def __init__(self, path, log):
        self.path = path
        self.version = None
        self.lock = threading.Lock()
        self.log = log

    def reload(self):
        st = os.stat(self.path)
        version = (st.st_ino, st.st_mtime_ns, st.st_size)
        if version != self.version:
            with open(self.path) as f:
                self.replies = json.load(f)["replies"]
            self.version = version
            self.next = 0

    def take(self, record):
        with self.lock:
            self.reload()
            with open(self.log, "a") as f:
                f.write(json.dumps(record) + "\n")
            if self.next >= len(self.replies):
                return {"status": 500, "message": "script exhausted"}
            entry = self.replies[self.next]
            self.next += 1
            return entry


def openai_body(entry, model):
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "finish_reason": entry.get("finish", "stop"),
                     "message": {"role": "assistant", "content": entry.get("text", "")}}],
        "usage": {"prompt_tokens": entry.get("tokens_in", 0),
                  "completion_tokens": entry.get("tokens_out", 0)},
    }


def anthropic_body(entry, model):
    return {
        "id": "msg_test", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": entry.get("text", "")}],
        "stop_reason": entry.get("finish", "end_turn"),
        "usage": {"input_tokens": entry.get("tokens_in", 0),
                  "output_tokens": entry.get("tokens_out", 0)},
    }


def openai_events(entry, model):
    text, step = entry.get("text", ""), entry.get("chunk", 16)
    for i in range(0, len(text), step):
        yield None, {"choices": [{"index": 0, "delta": {"content": text[i:i + step]},
                                  "finish_reason": None}], "model": model}
    yield None, {"choices": [{"index": 0, "delta": {},
                              "finish_reason": entry.get("finish", "stop")}]}
    yield None, {"choices": [], "usage": {"prompt_tokens": entry.get("tokens_in", 0),
                                          "completion_tokens": entry.get("tokens_out", 0)}}
    yield None, "[DONE]"


def anthropic_events(entry, model):
    text, step = entry.get("text", ""), entry.get("chunk", 16)
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

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        entry = self.server.script.take({"time": time.time(), "path": self.path,
                                         "headers": dict(self.headers.items()), "body": body})
        anthropic = self.path.endswith("/messages")
        if self.path not in ("/v1/chat/completions", "/v1/messages"):
            entry = {"status": 404, "message": "no such endpoint: " + self.path}
        model = (body or {}).get("model", "")
        fault = entry.get("fault")
        if fault == "close":
            self.close_connection = True
            return
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
        events = list((anthropic_events if anthropic else openai_events)(entry, model))
        fault = entry.get("fault")
        if fault == "truncate":
            events = events[:len(events) // 2]
        for i, (name, data) in enumerate(events):
            if i > 0 and entry.get("delay"):
                time.sleep(entry["delay"])
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
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.script = Script(script_path, log)
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, portfile)
    server.serve_forever()


if __name__ == "__main__":
    main()
