package fakeagent

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Holders is the test side of SpawnHolder: a unix socket the descendants
// connect to. Release ends them and waits until each has exited.
type Holders struct {
	// Path is the socket path to pass to the scenario.
	Path  string
	ln    *net.UnixListener
	dir   string
	conns chan *net.UnixConn
	pids  chan int
}

// NewHolders listens on a fresh socket in a new temporary directory.
func NewHolders() (*Holders, error) {
	dir, err := os.MkdirTemp("", "fakeagent-")
	if err != nil {
		return nil, err
	}
	p := filepath.Join(dir, "h.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	h := &Holders{Path: p, ln: ln, dir: dir, conns: make(chan *net.UnixConn, 16), pids: make(chan int, 16)}
	go h.accept()
	return h, nil
}

func (h *Holders) accept() {
	defer close(h.conns)
	for {
		c, err := h.ln.AcceptUnix()
		if err != nil {
			return
		}
		h.conns <- c
	}
}

// Release stops accepting, ends every connected holder and waits for each to
// exit (its end of the socket closes when the process dies), then removes
// the directory. It returns the holders' PIDs.
func (h *Holders) Release() []int {
	h.ln.Close()
	var pids []int
	for c := range h.conns {
		line, _ := bufio.NewReader(c).ReadString('\n')
		if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
			pids = append(pids, pid)
		}
		c.CloseWrite()
		var b [1]byte
		for {
			if _, err := c.Read(b[:]); err != nil {
				break
			}
		}
		c.Close()
	}
	os.RemoveAll(h.dir)
	return pids
}
