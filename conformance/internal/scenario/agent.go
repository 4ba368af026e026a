package scenario

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/segmentio/encoding/json"
)

// Command is the subcommand of acpcheck that runs the scenario agent:
// `acpcheck scenario-agent SOCKET TOKEN`.
const Command = "scenario-agent"

// LinkPrefix starts the name of the link to acpcheck's executable that a
// grader puts beside its socket for each client run: LinkPrefix + token
// (+ ".exe" on Windows). Run by that name, acpcheck is the scenario agent
// of that run, with no argument at all — so {agent} is one path with no
// whitespace, which survives any client: one that splits a command line
// on whitespace, one that parses it like a shell, one that takes a plain
// argv.
const LinkPrefix = "acpcheck-scenario-agent-"

// SocketName is the grader's socket's name, beside the links.
const SocketName = "grader.sock"

// FromLink reports whether argv0 is a scenario agent's link, and if so
// the socket and token it stands for.
func FromLink(argv0 string) (socket, token string, ok bool) {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	token, ok = strings.CutPrefix(base, LinkPrefix)
	if !ok || token == "" {
		return "", "", false
	}
	return filepath.Join(filepath.Dir(argv0), SocketName), token, true
}

// Main is the scenario agent: args are SOCKET and TOKEN (after the
// subcommand). It returns the exit code the grader asked for; 2 when the
// arguments are wrong or the grader cannot be reached, 1 when the grader
// went away first.
func Main(args []string, stdin io.Reader, stdout, stderr io.WriteCloser) int {
	if len(args) != 2 {
		fmt.Fprintf(stderr, "acpcheck %s: want SOCKET TOKEN, got %d arguments; acpcheck starts this itself for a graded client\n", Command, len(args))
		return 2
	}
	// Signals are reported, never obeyed: whether the client closes stdin
	// or only signals is what the grader wants to see.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, reportedSignals...)
	defer signal.Stop(sigs)

	conn, err := net.Dial("unix", args[0])
	if err != nil {
		fmt.Fprintf(stderr, "acpcheck %s: cannot reach the grader: %v\n", Command, err)
		return 2
	}
	defer conn.Close()
	a := &agent{conn: conn, stdout: stdout, stderr: stderr}
	cwd, _ := os.Getwd()
	hello, _ := json.Marshal(Hello{Token: args[1], PID: os.Getpid(), Argv: os.Args, Cwd: cwd})
	if err := a.send(KindHello, hello); err != nil {
		fmt.Fprintf(stderr, "acpcheck %s: cannot greet the grader: %v\n", Command, err)
		return 2
	}
	go a.relayStdin(stdin)
	go func() {
		for s := range sigs {
			_ = a.send(KindSignal, []byte(signalName(s)))
		}
	}()
	return a.serve()
}

// agent is one scenario agent's connection to the grader.
type agent struct {
	conn   net.Conn
	stdout io.WriteCloser
	stderr io.Writer
	mu     sync.Mutex // one frame at a time on conn
}

func (a *agent) send(kind byte, data []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return WriteFrame(a.conn, kind, data)
}

// relayStdin forwards stdin as it arrives and reports its end.
func (a *agent) relayStdin(stdin io.Reader) {
	buf := make([]byte, 64<<10)
	for {
		n, err := stdin.Read(buf)
		if n > 0 {
			if a.send(KindStdin, buf[:n]) != nil {
				return
			}
		}
		if err != nil {
			msg := ""
			if !errors.Is(err, io.EOF) {
				msg = err.Error()
			}
			_ = a.send(KindStdinEnd, []byte(msg))
			return
		}
	}
}

// serve carries out the grader's frames until it says exit or goes away.
func (a *agent) serve() int {
	r := bufio.NewReaderSize(a.conn, 64<<10)
	for {
		kind, data, err := ReadFrame(r)
		if err != nil {
			return 1 // the grader is gone: nothing is left to play
		}
		switch kind {
		case KindStdout:
			if _, err := a.stdout.Write(data); err != nil {
				_ = a.send(KindNote, []byte("writing to stdout failed: "+err.Error()))
			}
		case KindStderr:
			_, _ = a.stderr.Write(data)
		case KindCloseStdout:
			_ = a.stdout.Close()
		case KindExit:
			code, err := strconv.Atoi(string(data))
			if err != nil {
				code = 1
			}
			_ = a.send(KindExiting, []byte(strconv.Itoa(code)))
			return code
		}
	}
}
