"""A loopback HTTP server for scripts/run-readme.sh: answers every request 200 with `{}` and appends what it got
(method, path, headers, body) to a JSON Lines log. Binds 127.0.0.1 on a free port, written to PORT_FILE; stops by
itself after LIFETIME seconds."""
import http.server, json, sys, threading

log_path, port_file, lifetime = sys.argv[1], sys.argv[2], float(sys.argv[3])


class Handler(http.server.BaseHTTPRequestHandler):
    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with open(log_path, "a") as log:
            log.write(json.dumps({"method": self.command, "path": self.path, "headers": dict(self.headers),
                                  "body": body.decode("utf-8", "replace")}) + "\n")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file, "w") as out:
    out.write(str(server.server_address[1]))
threading.Timer(lifetime, server.shutdown).start()
server.serve_forever()
