#!/usr/bin/env python3
"""tui-mouse.py — the screen's mouse through a pseudo-terminal: tmux cannot
inject mouse events into a pane, so this test plays the terminal itself.
It checks that the screen turns xterm mouse reporting on, that a click on a
lineage row selects that candidate (its detail is drawn), and that the
screen turns mouse reporting off again when it quits."""
import os, pty, select, struct, subprocess, sys, tempfile, time, fcntl, termios

def read(fd, until, timeout=10.0):
    out, end = b'', time.time() + timeout
    while time.time() < end and until not in out:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    return out

def main():
    mkrun, cuco = os.environ['CUCO_MKRUN'], os.environ['CUCO_BIN']
    with tempfile.TemporaryDirectory() as tmp:
        run = os.path.join(tmp, 'run')
        subprocess.run([mkrun, run, 'create'], check=True)
        pid, fd = pty.fork()
        if pid == 0:
            os.environ.update(TERM='xterm-256color', LANG='C.UTF-8', LC_ALL='C.UTF-8')
            os.execv(cuco, ['cuco', 'tui', '--run', run])
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 40, 120, 0, 0))
        fails = []
        out = read(fd, b' zoom ')
        if b'\x1b[?1006;1000h' not in out:
            fails.append('mouse reporting never turned on')
        # Row 12, column 11 (1-based) is candidate #5's line in the tree:
        # status line, five rows of islands, the tree's border and header.
        os.write(fd, b'\x1b[<0;11;12M\x1b[<0;11;12m')
        if b'5  tune  done  island 1' not in read(fd, b'5  tune  done  island 1', 5):
            fails.append('a click on #5 did not select it')
        os.write(fd, b'q')
        out = read(fd, b'\x1b[?1006;1000l', 5)
        if b'\x1b[?1006;1000l' not in out:
            fails.append('mouse reporting left on after quitting')
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            fails.append('exit status %d' % os.waitstatus_to_exitcode(status))
        for f in fails:
            print('FAIL:', f)
        if not fails:
            print('tui-mouse: all passed')
        return 1 if fails else 0

sys.exit(main())
