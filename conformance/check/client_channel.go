package check

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/conformance/internal/scenario"
)

// channel is the grader's end of the private channel scenario agents
// reach it over: a Unix socket in a directory only this user can enter
// (Windows 10 and later have AF_UNIX too), and a fresh token per client
// run, so a scenario agent is matched to the run that started its client
// and nothing else on the machine can pose as one.
type channel struct {
	dir     string
	path    string
	program string // the acpcheck executable every run's link names
	ln      net.Listener

	mu   sync.Mutex
	runs map[string]chan *relayConn // token → the run's arrivals

	done chan struct{} // closed when the accept loop has ended
}

// ErrChannel is the kind of the error when the private channel cannot be
// set up.
var ErrChannel = errors.New("check: cannot open the scenario agent's channel")

// openChannel listens on a new socket, beside which each run links
// program as its scenario agent. The directory's path must contain no
// whitespace, since the links are the {agent} command line.
func openChannel(program string) (*channel, error) {
	dir, err := os.MkdirTemp("", "acpcheck-")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrChannel, err)
	}
	path := filepath.Join(dir, scenario.SocketName)
	if strings.ContainsFunc(path, isSpace) {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: the socket path %q contains whitespace; set TMPDIR to a directory without it", ErrChannel, path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: %w", ErrChannel, err)
	}
	c := &channel{dir: dir, path: path, program: program, ln: ln, runs: map[string]chan *relayConn{}, done: make(chan struct{})}
	go c.accept()
	return c, nil
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}

// helloBound bounds how long a connection may take to say which run it
// belongs to.
const helloBound = 10 * time.Second

func (c *channel) accept() {
	defer close(c.done)
	var greeting sync.WaitGroup
	defer greeting.Wait()
	for {
		nc, err := c.ln.Accept()
		if err != nil {
			return
		}
		greeting.Add(1)
		go func() {
			defer greeting.Done()
			c.greet(nc)
		}()
	}
}

// greet reads a connection's hello and hands it to its run; a stranger or
// a run that has ended is hung up on.
func (c *channel) greet(nc net.Conn) {
	_ = nc.SetReadDeadline(time.Now().Add(helloBound))
	r := bufio.NewReaderSize(nc, 64<<10)
	kind, data, err := scenario.ReadFrame(r)
	var h scenario.Hello
	if err != nil || kind != scenario.KindHello || json.Unmarshal(data, &h) != nil {
		_ = nc.Close()
		return
	}
	_ = nc.SetReadDeadline(time.Time{})
	c.mu.Lock()
	arrivals := c.runs[h.Token]
	c.mu.Unlock()
	if arrivals == nil {
		_ = nc.Close()
		return
	}
	select {
	case arrivals <- &relayConn{conn: nc, r: r, hello: h}:
	default: // the run takes no more connections
		_ = nc.Close()
	}
}

// register opens a run: a token, the scenario agent's command line for
// its {agent} (a link to the acpcheck executable named after the token)
// and the channel its scenario agents arrive on.
func (c *channel) register() (token, agent string, arrivals chan *relayConn, err error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token = hex.EncodeToString(b[:])
	agent = c.link(token)
	if err := linkProgram(c.program, agent); err != nil {
		return "", "", nil, fmt.Errorf("%w: %w", ErrChannel, err)
	}
	arrivals = make(chan *relayConn, maxAgentConns)
	c.mu.Lock()
	c.runs[token] = arrivals
	c.mu.Unlock()
	return token, agent, arrivals, nil
}

// link is the path of a run's scenario agent.
func (c *channel) link(token string) string {
	name := scenario.LinkPrefix + token
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(c.dir, name)
}

// linkProgram makes link run program: a symbolic link, else a hard link
// (Windows without the privilege for symbolic ones), else a copy.
func linkProgram(program, link string) error {
	if os.Symlink(program, link) == nil || os.Link(program, link) == nil {
		return nil
	}
	in, err := os.ReadFile(program)
	if err != nil {
		return fmt.Errorf("the scenario agent %s: %w", program, err)
	}
	return os.WriteFile(link, in, 0o755)
}

// unregister ends a run: later arrivals are hung up on, and those that
// arrived but were never taken are closed.
func (c *channel) unregister(token string) {
	c.mu.Lock()
	ch := c.runs[token]
	delete(c.runs, token)
	c.mu.Unlock()
	_ = os.Remove(c.link(token))
	for {
		select {
		case rc := <-ch:
			_ = rc.conn.Close()
		default:
			return
		}
	}
}

// close stops listening and removes the socket's directory.
func (c *channel) close() {
	_ = c.ln.Close()
	<-c.done
	_ = os.RemoveAll(c.dir)
}

// maxAgentConns bounds how many scenario agents one client run may start
// (a client that starts one per session, say); more are hung up on.
const maxAgentConns = 8

// relayConn is one scenario agent's connection.
type relayConn struct {
	conn  net.Conn
	r     *bufio.Reader
	hello scenario.Hello

	mu sync.Mutex // one frame at a time
}

// send writes one frame (split as needed).
func (rc *relayConn) send(kind byte, data []byte) error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return scenario.WriteFrame(rc.conn, kind, data)
}
