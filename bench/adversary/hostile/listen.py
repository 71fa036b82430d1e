"""Test helper of bench/adversary/sandbox: listen on the Unix sockets named on the
command line and append one line per connection accepted to the log named first."""
import selectors, socket, sys

log, paths = sys.argv[1], sys.argv[2:]
sel = selectors.DefaultSelector()
for p in paths:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(p)
    s.listen(8)
    sel.register(s, selectors.EVENT_READ, p)
print("listening", flush=True)
while True:
    for key, _ in sel.select():
        conn, _ = key.fileobj.accept()
        with open(log, "a") as f:
            f.write(key.data + "\n")
        conn.close()
