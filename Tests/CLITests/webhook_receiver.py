"""A webhook receiver for the end-to-end tests: checks every delivery with PyPI's
standardwebhooks (an implementation independent of ours) and writes one JSON line per
request to OUT. It fails the first FAIL_FIRST attempts of each message id with a 500, or
answers every request with STATUS when given. OUT appears once it listens on PORT.

Usage: webhook_receiver.py SECRET OUT PORT FAIL_FIRST [STATUS]"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Lock

from standardwebhooks.webhooks import Webhook

secret, out_path, port, fail_first = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fixed_status = int(sys.argv[5]) if len(sys.argv) > 5 else None
verifier = Webhook(secret)
attempts = {}
lock = Lock()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            verifier.verify(body, headers)
            verified = True
        except Exception as error:  # a bad or missing signature, a stale timestamp
            verified = False
            sys.stderr.write(f"unverified: {error}\n")
        msg = headers.get("webhook-id", "")
        with lock:
            attempts[msg] = attempts.get(msg, 0) + 1
            attempt = attempts[msg]
            if fixed_status is not None:
                status = fixed_status
            elif not verified:
                status = 400
            else:
                status = 500 if attempt <= fail_first else 204
            out.write(json.dumps({"id": msg, "attempt": attempt, "verified": verified, "status": status, "body": body.decode()}) + "\n")
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


ThreadingHTTPServer.allow_reuse_address = True
server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
out = open(out_path, "a", buffering=1)
server.serve_forever()
