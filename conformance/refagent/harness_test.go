package refagent

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
)

// msg is one line from the agent, decoded loosely for assertions.
type msg struct {
	raw    string
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID string         `json:"sessionId"`
		Update    map[string]any `json:"update"`
	} `json:"params"`
	RawParams json.RawMessage `json:"-"`
	Result    map[string]any  `json:"result"`
	Error     *acpsdk.Error   `json:"error"`
}

func (m msg) kind() string {
	if m.Method != "session/update" {
		return m.Method
	}
	k, _ := m.Params.Update["sessionUpdate"].(string)
	return k
}

func (m msg) text() string {
	c, _ := m.Params.Update["content"].(map[string]any)
	s, _ := c["text"].(string)
	return s
}

// client drives an in-process agent over pipes, answering the agent's own
// requests with answer.
type client struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan string
	done   chan error
	exits  chan int
	answer func(method string, params json.RawMessage) (any, *acpsdk.Error)
	nextID int
	closed sync.Once
}

// defaultAnswer refuses permission with the first reject option and
// answers everything else -32601, like an unattended client.
func defaultAnswer(method string, params json.RawMessage) (any, *acpsdk.Error) {
	if method == "session/request_permission" {
		var p struct {
			Options []struct{ OptionID, Kind string } `json:"options"`
		}
		_ = json.Unmarshal(params, &p)
		for _, o := range p.Options {
			if o.Kind == "reject_once" {
				return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": o.OptionID}}, nil
			}
		}
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
	}
	return nil, &acpsdk.Error{Code: -32601, Message: "method not found"}
}

func startAgent(t *testing.T, opts Options) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, lines: make(chan string, 1024), done: make(chan error, 1), exits: make(chan int, 4), answer: defaultAnswer}
	log := slog.New(slog.DiscardHandler)
	go func() {
		err := Serve(context.Background(), opts, inR, outW, log, func(code int) { c.exits <- code })
		outW.Close()
		c.done <- err
	}()
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(c.close)
	return c
}

func (c *client) write(line string) {
	c.t.Helper()
	_, err := io.WriteString(c.in, line+"\n")
	require.NoError(c.t, err)
}

func (c *client) send(method string, params any) int {
	c.t.Helper()
	c.nextID++
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	require.NoError(c.t, err)
	c.write(string(b))
	return c.nextID
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	require.NoError(c.t, err)
	c.write(string(b))
}

// next reads one line, bounded so a broken agent fails the test instead of
// hanging it.
func (c *client) next() (msg, bool) {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			return msg{}, false
		}
		var m msg
		m.raw = line
		if json.Unmarshal([]byte(line), &m) == nil {
			var p struct {
				Params json.RawMessage `json:"params"`
			}
			_ = json.Unmarshal([]byte(line), &p)
			m.RawParams = p.Params
		}
		return m, true
	case <-time.After(10 * time.Second):
		c.t.Fatal("no line from the agent within 10s")
		return msg{}, false
	}
}

// until reads lines, answering agent requests, until the response to id;
// it returns the lines before the response and the response.
func (c *client) until(id int) ([]msg, msg) {
	c.t.Helper()
	var seen []msg
	want := json.RawMessage(itoa(id))
	for {
		m, ok := c.next()
		require.True(c.t, ok, "agent output ended before response %d; saw %v", id, seen)
		if m.Method == "" && string(m.ID) == string(want) {
			return seen, m
		}
		if m.Method != "" && m.ID != nil && string(m.ID) != "null" {
			res, e := c.answer(m.Method, m.RawParams)
			reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
			if e != nil {
				reply["error"] = e
			} else {
				reply["result"] = res
			}
			b, err := json.Marshal(reply)
			require.NoError(c.t, err)
			c.write(string(b))
		}
		seen = append(seen, m)
	}
}

func (c *client) call(method string, params any) ([]msg, msg) {
	c.t.Helper()
	return c.until(c.send(method, params))
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// close ends the agent's input and waits for Serve to return, draining
// its output so no handler blocks on a write.
func (c *client) close() { c.closed.Do(c.doClose) }

func (c *client) doClose() {
	_ = c.in.Close()
	for range c.lines {
	}
	select {
	case err := <-c.done:
		require.NoError(c.t, err)
	case <-time.After(10 * time.Second):
		c.t.Fatal("Serve did not return within 10s of stdin closing")
	}
}

// handshake initializes and creates a session.
func (c *client) handshake() string {
	c.t.Helper()
	_, init := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	require.Nil(c.t, init.Error)
	_, created := c.call("session/new", map[string]any{"cwd": "/work", "mcpServers": []any{}})
	require.Nil(c.t, created.Error, created.raw)
	sid, _ := created.Result["sessionId"].(string)
	require.NotEmpty(c.t, sid)
	return sid
}

func (c *client) prompt(sid, text string) ([]msg, msg) {
	c.t.Helper()
	return c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
}

func kinds(ms []msg) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.kind())
	}
	return out
}
