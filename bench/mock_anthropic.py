#!/usr/bin/env python3
"""A model server on 127.0.0.1 that answers Claude Code's Messages API, for bench/run's real rows.

Only what a headless `claude -p` turn asks for: `POST /v1/messages` streamed as server-sent
events in the order research/real-agents-offline.md records for Claude Code 2.1.332
(message_start, content_block_start, ping, content_block_delta, content_block_stop,
message_delta with usage, message_stop), a one-object reply when the request does not stream,
`count_tokens` and the model list. Replies at once, so a turn's time is the agent's own plus
the loopback's. Standard library only; prints its URL on the first line and serves until killed.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY = "MOCK-REPLY: hi"
USAGE = {"input_tokens": 12, "output_tokens": 3, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def events(model):
    yield "message_start", {
        "type": "message_start",
        "message": {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": USAGE,
        },
    }
    yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    yield "ping", {"type": "ping"}
    yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": REPLY}}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": USAGE["output_tokens"]},
    }
    yield "message_stop", {"type": "message_stop"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, value):
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.split("?")[0].endswith("/models"):
            self.send_json({"data": [{"id": "claude-bench", "type": "model"}], "has_more": False})
        else:
            self.send_error(404)

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            self.send_json({"input_tokens": 42})
            return
        if not path.endswith("/v1/messages"):
            self.send_error(404)
            return
        model = request.get("model", "claude-bench")
        if not request.get("stream"):
            self.send_json(
                {
                    "id": "msg_bench",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "text", "text": REPLY}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": USAGE,
                }
            )
            return
        body = b"".join(
            f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events(model)
        )
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
