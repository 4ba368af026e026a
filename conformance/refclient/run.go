package refclient

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// Name is the client's name in its initialize (clientInfo).
const Name = "acpkit-refclient"

// agentExitBound is how long the client waits for its agent to exit
// after closing its stdin, before killing it.
const agentExitBound = 5 * time.Second

// lateUpdateWait is how long --fail-late-update keeps reading after the
// prompt's answer, so an update that follows it is seen.
const lateUpdateWait = 2 * time.Second

// Main runs the reference client with args as its command line and
// returns its exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	o, err := ParseFlags(args, stderr)
	if err != nil {
		return 2 // the flag package or ParseFlags said why
	}
	c := &client{o: o, out: stdout, errw: stderr, permissionsReleased: make(chan struct{})}
	return c.run()
}

// client is one run of the reference client.
type client struct {
	o    Options
	out  io.Writer
	errw io.Writer
	side *acpsdk.ClientSide
	cmd  *exec.Cmd
	init *gen.InitializeResponse

	mu        sync.Mutex
	sessionID string
	cancelled bool
	// answerRead: the prompt's answer has been read (tap).
	answerRead bool
	// permissionsReleased is closed when held permission requests may be
	// answered: the turn was cancelled or ended.
	permissionsReleased chan struct{}
	releaseOnce         sync.Once
}

// abort ends the client at once, as a crash would: the defects that
// "lose the turn" use it.
func (c *client) abort(format string, args ...any) {
	fmt.Fprintf(c.errw, "refclient: aborting: "+format+"\n", args...)
	os.Exit(1)
}

func (c *client) run() int {
	ctx := context.Background()
	cmd := exec.Command(c.o.Agent[0], c.o.Agent[1:]...)
	cmd.Stderr = c.errw
	c.cmd = cmd
	side, err := acpsdk.StartAgent(cmd, c, &acpsdk.SideOptions{
		Options: acpsdk.Options{MaxLineBytes: c.o.MaxLine, Tap: c.tap, Observer: acpsdk.Observer{
			UnparsableLine: func([]byte) {
				if c.o.DieOnGarbage {
					c.abort("the agent wrote a line that is not JSON")
				}
			},
			OversizeLine: func(err *acpsdk.OversizeError) {
				if c.o.DieOnOversize {
					c.abort("%v", err)
				}
			},
		}},
		Middleware: c.middleware,
	})
	if err != nil {
		fmt.Fprintf(c.errw, "refclient: %v\n", err)
		return 1
	}
	c.side = side
	interrupts := make(chan os.Signal, 2)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)

	code := c.session(ctx, interrupts)
	return c.shutdown(code)
}

// session runs initialize, the session setup and the turn; it returns the
// exit status so far.
func (c *client) session(ctx context.Context, interrupts chan os.Signal) int {
	if !c.o.SkipInitialize {
		if code, ok := c.initialize(ctx); !ok {
			return code
		}
	}
	sid, err := c.setup(ctx)
	if err != nil {
		fmt.Fprintf(c.errw, "refclient: %v\n", err)
		return 1
	}
	c.mu.Lock()
	c.sessionID = sid
	c.mu.Unlock()
	return c.turn(ctx, sid, interrupts)
}

// initialize runs the handshake; ok is false when the run must end with
// code.
func (c *client) initialize(ctx context.Context) (code int, ok bool) {
	params := map[string]any{
		"protocolVersion":    c.o.ProtocolVersion,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": c.o.FS, "writeTextFile": c.o.FS}, "terminal": false},
	}
	if !c.o.NoClientInfo {
		params["clientInfo"] = map[string]any{"name": Name, "version": "1.0.0"}
	}
	var raw json.RawMessage
	if err := c.side.Call(ctx, gen.MethodInitialize, params, &raw); err != nil {
		fmt.Fprintf(c.errw, "refclient: initialize: %v\n", err)
		return 1, false
	}
	if c.o.StrictCapabilities {
		if extra := unknownMembers(raw); len(extra) > 0 {
			fmt.Fprintf(c.errw, "refclient: the initialize answer has members it does not know: %s\n", strings.Join(extra, ", "))
			return 1, false
		}
	}
	var res gen.InitializeResponse
	if err := res.UnmarshalJSON(raw); err != nil {
		fmt.Fprintf(c.errw, "refclient: initialize answer: %v\n", err)
		return 1, false
	}
	c.init = &res
	if res.ProtocolVersion != gen.ProtocolVersion(c.o.ProtocolVersion) && !c.o.IgnoreVersion {
		fmt.Fprintf(c.errw, "refclient: the agent answered protocol version %d, and this client speaks %d only\n", res.ProtocolVersion, c.o.ProtocolVersion)
		return 3, false
	}
	return 0, true
}

// setup creates the session or continues --resume's.
func (c *client) setup(ctx context.Context) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if c.o.RelativeCwd {
		cwd = "."
	}
	agent := c.side.Agent()
	if id := c.o.Resume; id != "" {
		var caps gen.AgentCapabilities
		if c.init != nil {
			caps = c.init.AgentCapabilities
		}
		resume := caps.SessionCapabilities.Resume != nil || c.o.LoadAndResume
		load := caps.LoadSession || c.o.ForceLoad || c.o.LoadAndResume
		continued := false
		if resume {
			if _, err := agent.ResumeSession(ctx, &gen.ResumeSessionRequest{SessionID: gen.SessionID(id), Cwd: cwd}); err != nil {
				return "", fmt.Errorf("session/resume: %w", err)
			}
			continued = true
		}
		if load && (!continued || c.o.LoadAndResume) {
			if _, err := agent.LoadSession(ctx, &gen.LoadSessionRequest{SessionID: gen.SessionID(id), Cwd: cwd, McpServers: []gen.McpServer{}}); err != nil {
				return "", fmt.Errorf("session/load: %w", err)
			}
			continued = true
		}
		if continued {
			return id, nil
		}
	}
	res, err := agent.NewSession(ctx, &gen.NewSessionRequest{Cwd: cwd, McpServers: []gen.McpServer{}})
	if err != nil {
		return "", fmt.Errorf("session/new: %w", err)
	}
	return string(res.SessionID), nil
}

// turn sends the prompt and waits for its answer, cancelling on the first
// interrupt.
func (c *client) turn(ctx context.Context, sid string, interrupts chan os.Signal) int {
	pc, err := c.side.Go(ctx, gen.MethodSessionPrompt, &gen.PromptRequest{
		SessionID: gen.SessionID(sid),
		Prompt:    []gen.ContentBlock{&gen.ContentBlockText{Text: c.o.Prompt}},
	})
	if err != nil {
		fmt.Fprintf(c.errw, "refclient: session/prompt: %v\n", err)
		return 1
	}
	if c.o.NoWaitPrompt {
		return 0
	}
	type answer struct {
		res gen.PromptResponse
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		var a answer
		a.err = pc.Wait(ctx, &a.res)
		answered <- a
	}()
	for {
		select {
		case a := <-answered:
			c.release()
			if a.err != nil {
				fmt.Fprintf(c.errw, "refclient: session/prompt: %v\n", a.err)
				return 1
			}
			fmt.Fprintf(c.out, "stop: %s\n", a.res.StopReason)
			if c.o.FailLateUpdate {
				// Reading on for a while: an update after the answer
				// aborts the client (the defect) before this ends.
				<-time.After(lateUpdateWait)
			}
			return 0
		case <-interrupts:
			c.mu.Lock()
			again := c.cancelled
			c.cancelled = true
			c.mu.Unlock()
			if again {
				fmt.Fprintln(c.errw, "refclient: interrupted again: exiting")
				return 130
			}
			c.release()
			if c.o.CancelRequestOnly {
				pc.Cancel()
				continue
			}
			if err := c.side.Agent().Cancel(ctx, &gen.CancelNotification{SessionID: gen.SessionID(sid)}); err != nil {
				fmt.Fprintf(c.errw, "refclient: session/cancel: %v\n", err)
			}
			if c.o.ExitOnCancel {
				_ = c.side.Conn().Flush(ctx)
				os.Exit(0)
			}
		}
	}
}

// tap sees every line read, in order, on the reader: an update read after
// the prompt's answer is late whenever its handler runs.
func (c *client) tap(dir acpsdk.Direction, line []byte) {
	if dir != acpsdk.DirectionIn || !c.o.FailLateUpdate {
		return
	}
	var m struct {
		Method string `json:"method"`
		Result struct {
			StopReason string `json:"stopReason"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case m.Result.StopReason != "":
		c.answerRead = true
	case m.Method == gen.MethodSessionUpdate && c.answerRead:
		c.abort("an update came after the prompt's answer")
	}
}

// release lets held permission requests be answered.
func (c *client) release() { c.releaseOnce.Do(func() { close(c.permissionsReleased) }) }

// shutdown ends the agent — by closing its stdin and waiting, or as the
// defects say — and returns code.
func (c *client) shutdown(code int) int {
	if c.o.KillAgent {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
		_ = c.side.Close()
		return code
	}
	_ = c.side.Close() // the agent's stdin and stdout
	if c.o.NoWaitAgent {
		return code
	}
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(agentExitBound):
		fmt.Fprintf(c.errw, "refclient: the agent did not exit within %v of its stdin closing; killing it\n", agentExitBound)
		_ = c.cmd.Process.Kill()
		<-exited
	}
	return code
}

// SessionUpdate prints the agent's text; the update defects abort here.
func (c *client) SessionUpdate(_ context.Context, p *gen.SessionNotification) error {
	c.mu.Lock()
	sid := c.sessionID
	c.mu.Unlock()
	switch {
	case c.o.FailEarlyUpdate && sid == "":
		c.abort("an update came before the session/new answer")
	case c.o.FailForeignUpdate && sid != "" && string(p.SessionID) != sid:
		c.abort("an update named the session %q", p.SessionID)
	}
	if sid != "" && string(p.SessionID) != sid {
		return nil // not this client's session
	}
	switch u := p.Update.(type) {
	case *gen.SessionUpdateUnknown:
		if c.o.FailUnknownUpdate {
			c.abort("an update of a kind this client does not know")
		}
	case *gen.SessionUpdateUsageUpdate:
		if c.o.FailUsageUpdate {
			c.abort("a usage_update")
		}
	case *gen.SessionUpdateAgentMessageChunk:
		if t, ok := u.Content.(*gen.ContentBlockText); ok {
			fmt.Fprintf(c.out, "agent: %s\n", t.Text)
		}
	}
	return nil
}

// RequestPermission refuses: the first refusing option, else cancelled;
// cancelled once the client cancelled the turn.
func (c *client) RequestPermission(ctx context.Context, p *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error) {
	if c.o.IgnorePermissions {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if c.o.HoldPermissions {
		select {
		case <-c.permissionsReleased:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.mu.Lock()
	cancelled := c.cancelled
	c.mu.Unlock()
	if cancelled && !c.o.PermissionAfterCancelSelected {
		return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeCancelled{}}, nil
	}
	for _, kind := range []gen.PermissionOptionKind{gen.PermissionOptionKindRejectOnce, gen.PermissionOptionKindRejectAlways} {
		for _, o := range p.Options {
			if o.Kind == kind {
				return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeSelected{OptionID: o.OptionID}}, nil
			}
		}
	}
	return &gen.RequestPermissionResponse{Outcome: &gen.RequestPermissionOutcomeCancelled{}}, nil
}

// ReadTextFile serves fs/read_text_file when --fs advertised it.
func (c *client) ReadTextFile(_ context.Context, p *gen.ReadTextFileRequest) (*gen.ReadTextFileResponse, error) {
	if !c.o.FS && !c.o.ServeUnadvertised {
		return nil, acpsdk.ErrMethodNotFound
	}
	path := p.Path
	if !filepath.IsAbs(path) && !c.o.FSRelative {
		return nil, &acpsdk.Error{Code: acpsdk.CodeInvalidParams, Message: "path must be absolute: " + path}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if c.o.ServeUnadvertised {
			return &gen.ReadTextFileResponse{}, nil
		}
		return nil, &acpsdk.Error{Code: acpsdk.CodeResourceNotFound, Message: err.Error()}
	}
	content := string(b)
	if c.o.FSReadWrong {
		content = "not what the file holds"
	}
	return &gen.ReadTextFileResponse{Content: content}, nil
}

// WriteTextFile serves fs/write_text_file when --fs advertised it.
func (c *client) WriteTextFile(_ context.Context, p *gen.WriteTextFileRequest) (*gen.WriteTextFileResponse, error) {
	if !c.o.FS && !c.o.ServeUnadvertised {
		return nil, acpsdk.ErrMethodNotFound
	}
	if !filepath.IsAbs(p.Path) {
		return nil, &acpsdk.Error{Code: acpsdk.CodeInvalidParams, Message: "path must be absolute: " + p.Path}
	}
	if c.o.FSWriteIgnore || c.o.ServeUnadvertised && !c.o.FS {
		return &gen.WriteTextFileResponse{}, nil
	}
	if err := os.WriteFile(p.Path, []byte(p.Content), 0o644); err != nil {
		return nil, &acpsdk.Error{Code: acpsdk.CodeInternalError, Message: err.Error()}
	}
	return &gen.WriteTextFileResponse{}, nil
}

// clientMethods are the agent-to-client methods the schema defines.
var clientMethods = map[string]bool{}

func init() {
	for _, m := range []string{gen.MethodSessionUpdate, gen.MethodSessionRequestPermission, gen.MethodFsReadTextFile, gen.MethodFsWriteTextFile,
		gen.MethodTerminalCreate, gen.MethodTerminalOutput, gen.MethodTerminalRelease, gen.MethodTerminalWaitForExit, gen.MethodTerminalKill,
		gen.MethodElicitationCreate, gen.MethodElicitationComplete, gen.MethodCancelRequest} {
		clientMethods[m] = true
	}
}

// middleware carries the defects that act before the typed dispatch.
func (c *client) middleware(ctx context.Context, req *acpsdk.Request, next acpsdk.HandlerFunc) (any, error) {
	known := clientMethods[req.Method]
	switch {
	case !known && !req.IsNotification() && c.o.UnknownRequestCode != 0:
		return nil, &acpsdk.Error{Code: int64(c.o.UnknownRequestCode), Message: "refclient: not this code"}
	case !known && req.IsNotification() && c.o.AnswerNotifications:
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"refclient answers the notification %s"}}`, req.Method)
		_ = c.side.Conn().WriteRaw(ctx, []byte(line))
		return nil, nil
	}
	res, err := next(ctx, req)
	if err != nil && req.Method == gen.MethodSessionUpdate && c.o.FailMalformedUpdate {
		c.abort("an update that does not decode: %v", err)
	}
	return res, err
}

// unknownMembers lists the members of an initialize answer that the
// schema does not define, by path.
func unknownMembers(raw json.RawMessage) []string {
	known := map[string][]string{
		"":                                      {"protocolVersion", "agentCapabilities", "authMethods", "agentInfo", "_meta"},
		"agentCapabilities":                     {"loadSession", "promptCapabilities", "mcpCapabilities", "sessionCapabilities", "auth", "_meta"},
		"agentCapabilities.promptCapabilities":  {"image", "audio", "embeddedContext", "_meta"},
		"agentCapabilities.mcpCapabilities":     {"http", "sse", "_meta"},
		"agentCapabilities.sessionCapabilities": {"list", "delete", "additionalDirectories", "resume", "close", "_meta"},
	}
	var out []string
	var walk func(path string, v json.RawMessage)
	walk = func(path string, v json.RawMessage) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil {
			return
		}
		for k, sub := range obj {
			p := strings.TrimPrefix(path+"."+k, ".")
			names, checked := known[path]
			if checked && !slices.Contains(names, k) {
				out = append(out, p)
				continue
			}
			if _, deeper := known[p]; deeper {
				walk(p, sub)
			}
		}
	}
	walk("", raw)
	return out
}
