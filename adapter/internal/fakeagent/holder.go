package fakeagent

import (
	"bufio"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Holders is the test side of SpawnHolder: a unix socket the descendants
// connect to. A holder's end of its connection closes when it exits, which
// is how the test sees it die; Release ends the ones still alive.
type Holders struct {
	// Path is the socket path to pass to the scenario.
	Path string
	ln   *net.UnixListener
	dir  string
	wg   sync.WaitGroup

	mu    sync.Mutex
	conns []*holder
	added chan struct{}
}

type holder struct {
	c    *net.UnixConn
	pid  int
	gone chan struct{}
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
	h := &Holders{Path: p, ln: ln, dir: dir, added: make(chan struct{}, 64)}
	h.wg.Add(1)
	go h.accept()
	return h, nil
}

func (h *Holders) accept() {
	defer h.wg.Done()
	for {
		c, err := h.ln.AcceptUnix()
		if err != nil {
			return
		}
		hd := &holder{c: c, gone: make(chan struct{})}
		br := bufio.NewReader(c)
		line, _ := br.ReadString('\n')
		hd.pid, _ = strconv.Atoi(strings.TrimSpace(line))
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			defer close(hd.gone)
			var b [1]byte
			for {
				if _, err := br.Read(b[:]); err != nil {
					return
				}
			}
		}()
		h.mu.Lock()
		h.conns = append(h.conns, hd)
		h.mu.Unlock()
		h.added <- struct{}{}
	}
}

// Wait waits until n holders have connected, bounded by d.
func (h *Holders) Wait(n int, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		h.mu.Lock()
		got := len(h.conns)
		h.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-h.added:
		case <-t.C:
			return errors.New("fakeagent: holders did not connect")
		}
	}
}

// PIDs returns the pid of every holder that has connected, in the order
// they connected.
func (h *Holders) PIDs() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	pids := make([]int, len(h.conns))
	for i, hd := range h.conns {
		pids[i] = hd.pid
	}
	return pids
}

// Alive reports how many connected holders are still running.
func (h *Holders) Alive() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, hd := range h.conns {
		select {
		case <-hd.gone:
		default:
			n++
		}
	}
	return n
}

// WaitGone waits, bounded by d, until every connected holder has exited on
// its own; false when one is still running.
func (h *Holders) WaitGone(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	h.mu.Lock()
	hs := append([]*holder(nil), h.conns...)
	h.mu.Unlock()
	for _, hd := range hs {
		select {
		case <-hd.gone:
		case <-t.C:
			return false
		}
	}
	return true
}

// Release ends every holder still running, waits until each has exited,
// removes the directory and returns the holders' PIDs.
func (h *Holders) Release() []int {
	h.ln.Close()
	h.mu.Lock()
	hs := append([]*holder(nil), h.conns...)
	h.mu.Unlock()
	var pids []int
	for _, hd := range hs {
		pids = append(pids, hd.pid)
		hd.c.CloseWrite()
		<-hd.gone
		hd.c.Close()
	}
	h.wg.Wait()
	os.RemoveAll(h.dir)
	return pids
}
