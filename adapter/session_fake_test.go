package adapter

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/adapter/internal/fakeagent"
)

// coopAgent is the scripted runtime of these tests. Its arguments configure
// the handshake and what happens around session creation; the prompt text
// is a list of space-separated commands it executes in order, ending the
// turn with end_turn unless a command answered otherwise. It appends every
// line it reads to the file named by record=, so tests see the wire.
//
// Arguments (key or key=value): record=PATH, sid=ID, auth=ID+ID (advertised
// auth methods; "term-…" ones are terminal methods), authneeded (session/new
// refused -32000 until authenticate succeeded), autherr=CODE, load, resume, close,
// delete, noinfo, http, version=N, initerr=CODE, initerrdata=TEXT,
// newerr=CODE, newbad, exit-before-init, ignore-term, no-eof-exit,
// newburst=CMDS (run in the same write as the session/new answer),
// loadreplay, loadreplayother, loaderr=CODE, resumeerr=CODE, hang-control,
// hang-load, control-ok, closeerr=CODE, hang-close,
// beforenew=CMDS, afternew=CMDS (commands joined by commas),
// holder=SOCKET, init-hang.
func coopAgent(a *fakeagent.Agent) {
	cfg := map[string]string{}
	for _, arg := range a.Args {
		k, v, _ := strings.Cut(arg, "=")
		cfg[k] = v
	}
	has := func(k string) bool { _, ok := cfg[k]; return ok }
	var rec *os.File
	if p := cfg["record"]; p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			a.Fail("record: %v", err)
		}
		rec = f
	}
	if has("exit-before-init") {
		fmt.Fprintln(os.Stderr, "boom: \x1b[31mno credentials\x1b[0m")
		fmt.Fprintln(os.Stderr, "second line")
		os.Exit(7)
	}
	if has("ignore-term") {
		fakeagent.IgnoreTerm()
	}
	sid := "sess-1"
	if v := cfg["sid"]; v != "" {
		sid = v
	}
	r := &runner{a: a, cfg: cfg, sid: sid, newSid: sid, rec: rec}
	if has("holder-before-init") {
		fakeagent.SpawnHolder(cfg["holder"], has("detach"))
		os.Exit(0)
	}
	if has("close-stdout-before-init") {
		os.Stdout.Close()
		fakeagent.Hang()
	}
	for {
		m, err := r.read()
		if err == io.EOF {
			if has("no-eof-exit") {
				fakeagent.Hang()
			}
			return
		}
		if err != nil {
			continue
		}
		r.dispatch(m)
	}
}

type runner struct {
	a      *fakeagent.Agent
	cfg    map[string]string
	sid    string // the session updates name
	newSid string // what session/new answers
	rec    *os.File
}

func (r *runner) has(k string) bool { _, ok := r.cfg[k]; return ok }

func (r *runner) code(k string) int {
	n, err := strconv.Atoi(r.cfg[k])
	if err != nil {
		r.a.Fail("bad %s: %v", k, err)
	}
	return n
}

func (r *runner) read() (fakeagent.Msg, error) {
	m, err := r.a.Read()
	if r.rec != nil && len(m.Raw) > 0 {
		r.rec.Write(m.Raw)
	}
	return m, err
}

func (r *runner) dispatch(m fakeagent.Msg) {
	a := r.a
	switch m.Method {
	case "initialize":
		if r.has("init-hang") {
			fmt.Fprintln(os.Stderr, "init received")
			return
		}
		if r.has("initerr") {
			var data any
			if d := r.cfg["initerrdata"]; d != "" {
				data = d
			}
			a.ReplyError(m, r.code("initerr"), "Authentication required", data)
			return
		}
		caps := map[string]any{}
		sc := map[string]any{}
		if r.has("load") {
			caps["loadSession"] = true
		}
		for _, k := range []string{"resume", "close", "delete"} {
			if r.has(k) {
				sc[k] = map[string]any{}
			}
		}
		if len(sc) > 0 {
			caps["sessionCapabilities"] = sc
		}
		if r.has("http") {
			caps["mcpCapabilities"] = map[string]any{"http": true}
		}
		res := fakeagent.InitResult(caps)
		if v := r.cfg["auth"]; v != "" {
			res["authMethods"] = authMethods(v)
		}
		if r.has("noinfo") {
			delete(res, "agentInfo")
		}
		if v := r.cfg["version"]; v != "" {
			n, _ := strconv.Atoi(v)
			res["protocolVersion"] = n
		}
		if r.has("initbad") {
			a.Reply(m, "not an object")
			return
		}
		a.Reply(m, res)
	case "authenticate": // AU-5
		if r.has("autherr") {
			a.ReplyError(m, r.code("autherr"), "invalid API key", map[string]any{"details": "401 from the backend"})
			return
		}
		r.cfg["authenticated"] = ""
		a.Reply(m, map[string]any{})
	case "session/new":
		if r.has("authneeded") && !r.has("authenticated") {
			a.ReplyError(m, -32000, "Authentication required", nil)
			return
		}
		r.script(r.cfg["beforenew"])
		if r.has("newerr") {
			a.ReplyError(m, r.code("newerr"), "no session for you", map[string]any{"why": "test"})
			return
		}
		if r.has("new-hang") {
			return
		}
		if r.has("newbad") {
			a.Reply(m, map[string]any{"sessionId": 42})
			return
		}
		r.sid = r.newSid
		if r.has("close-stdin-after-new") {
			// Closed before answering, so the prompt that follows is
			// certain to meet a closed pipe.
			os.Stdin.Close()
			a.Reply(m, map[string]any{"sessionId": r.sid})
			fakeagent.Hang()
		}
		if r.has("newburst") {
			a.Hold()
		}
		a.Reply(m, map[string]any{"sessionId": r.sid})
		r.script(r.cfg["newburst"])
		a.Release()
		r.script(r.cfg["afternew"])
		if r.has("stall-after-new") {
			fakeagent.Hang() // never reads stdin again
		}
	case "_sortie.dev/probe/unimplemented":
		switch {
		case r.has("hang-control"):
		case r.has("control-ok"):
			a.Reply(m, map[string]any{})
		default:
			a.ReplyError(m, -32601, "Method not found", nil)
		}
	case "session/load":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(m.Params, &p)
		switch {
		case r.has("hang-load"):
			return
		case r.has("loaderr"):
			a.ReplyError(m, r.code("loaderr"), "cannot load", nil)
			return
		}
		if r.has("loadreplay") {
			a.Update(p.SessionID, `{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"earlier question"}}`)
			a.Update(p.SessionID, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"earlier answer"},"messageId":"old"}`)
		}
		if r.has("loadreplayother") {
			a.Update("someone-else", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}`)
		}
		r.sid = p.SessionID
		a.Reply(m, map[string]any{})
	case "session/resume":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(m.Params, &p)
		if r.has("resumeerr") {
			a.ReplyError(m, r.code("resumeerr"), "cannot resume", nil)
			return
		}
		r.sid = p.SessionID
		a.Reply(m, map[string]any{})
	case "session/close", "session/delete":
		switch {
		case r.has("hang-close"):
		case r.has("closeerr"):
			a.ReplyError(m, r.code("closeerr"), "secret detail that must not be logged", nil)
		default:
			a.Reply(m, map[string]any{})
		}
	case "session/prompt":
		var p struct {
			Prompt []struct {
				Text string `json:"text"`
			} `json:"prompt"`
		}
		json.Unmarshal(m.Params, &p)
		text := ""
		if len(p.Prompt) > 0 {
			text = p.Prompt[0].Text
		}
		r.prompt(m, strings.Fields(text))
	case "":
		// A response to one of our requests outside a wait: ignore.
	default:
		if m.ID != nil {
			a.ReplyError(m, -32601, "Method not found", nil)
		}
	}
}

// script runs between-turn commands (comma-separated).
func (r *runner) script(s string) {
	if s == "" {
		return
	}
	for _, c := range strings.Split(s, ",") {
		r.command(fakeagent.Msg{}, c)
	}
}

// prompt runs a prompt's commands; the last answer wins unless a command
// answered already.
func (r *runner) prompt(m fakeagent.Msg, cmds []string) {
	for _, c := range cmds {
		if r.command(m, c) {
			return
		}
	}
	r.a.Reply(m, map[string]any{"stopReason": "end_turn"})
}

// command executes one command; true when it answered the prompt (or
// must not go on).
func (r *runner) command(m fakeagent.Msg, c string) bool {
	a := r.a
	name, arg, _ := strings.Cut(c, ":")
	switch name {
	case "chunk": // chunk:ID:TEXT (ID may be empty)
		id, text, _ := strings.Cut(arg, ":")
		u := map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text}}
		if id != "" {
			u["messageId"] = id
		}
		b, _ := json.Marshal(u)
		a.Update(r.sid, string(b))
	case "long": // long:N: one chunk of N runes
		n, _ := strconv.Atoi(arg)
		a.Update(r.sid, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`+strings.Repeat("é", n)+`"}}`)
	case "user":
		a.Update(r.sid, `{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}`)
	case "thought":
		a.Update(r.sid, `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`)
	case "plan":
		a.Update(r.sid, `{"sessionUpdate":"plan","entries":[]}`)
	case "image":
		a.Update(r.sid, `{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}`)
	case "usage":
		a.Update(r.sid, `{"sessionUpdate":"usage_update","used":10,"size":100}`)
	case "commands":
		a.Update(r.sid, `{"sessionUpdate":"available_commands_update","availableCommands":[]}`)
	case "mystery":
		a.Update(r.sid, `{"sessionUpdate":"mystery_update","x":1}`)
	case "tool": // tool:ID:KIND
		id, kind, _ := strings.Cut(arg, ":")
		a.Update(r.sid, `{"sessionUpdate":"tool_call","toolCallId":"`+id+`","title":"start","kind":"`+kind+`","name":7}`)
	case "tooldone": // tooldone:ID:STATUS:TITLE
		parts := strings.SplitN(arg, ":", 3)
		for len(parts) < 3 {
			parts = append(parts, "")
		}
		a.Update(r.sid, `{"sessionUpdate":"tool_call_update","toolCallId":"`+parts[0]+`","status":"`+parts[1]+`","title":"`+parts[2]+`"}`)
	case "foreign":
		a.Update("other-session", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"not yours"}}`)
	case "badupdate":
		a.Notify("session/update", map[string]any{"nope": true})
	case "nullid":
		a.WriteLine(`{"jsonrpc":"2.0","id":null,"method":"session/update","params":{"sessionId":"` + r.sid + `","update":{"sessionUpdate":"plan","entries":[]}}}`)
	case "vendornote":
		a.Notify("_vendor/note", map[string]any{})
	case "garbage":
		a.WriteLine("this is not json")
	case "oversize":
		a.WriteLine(`{"jsonrpc":"2.0","method":"session/update","params":{"pad":"` + strings.Repeat("x", 11<<20) + `"}}`)
	case "stray":
		a.WriteLine(`{"jsonrpc":"2.0","id":999,"result":{}}`)
	case "perm": // perm:KIND+KIND... — the answer is echoed back as a chunk
		id := a.Request("session/request_permission", map[string]any{
			"sessionId": r.sid, "toolCall": map[string]any{"toolCallId": "t"}, "options": permOptions(arg),
		})
		ans := r.awaitResponse(id)
		a.Update(r.sid, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`+strconv.Quote("answer="+string(ans))+`},"messageId":"ans"}`)
	case "permquiet": // permquiet:KIND+KIND...: asked and answered, then nothing more is sent (DI-11)
		r.awaitResponse(a.Request("session/request_permission", map[string]any{
			"sessionId": r.sid, "toolCall": map[string]any{"toolCallId": "t"}, "options": permOptions(arg),
		}))
	case "permtool": // permtool:TOOLKIND:KIND+KIND...: perm for a titled tool call (PM-11)
		kind, opts, _ := strings.Cut(arg, ":")
		id := a.Request("session/request_permission", map[string]any{
			"sessionId": r.sid, "toolCall": map[string]any{"toolCallId": "t-" + kind, "title": "Run the " + kind + " tool", "kind": kind}, "options": permOptions(opts),
		})
		ans := r.awaitResponse(id)
		a.Update(r.sid, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`+strconv.Quote("answer="+string(ans))+`},"messageId":"ans"}`)
	case "elicit":
		id := a.Request("elicitation/create", map[string]any{"message": "what?"})
		ans := r.awaitResponse(id)
		a.Update(r.sid, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`+strconv.Quote("answer="+string(ans))+`},"messageId":"ans"}`)
	case "unknownreq":
		id := a.Request("fs/read_text_file", map[string]any{"sessionId": r.sid, "path": "/etc/passwd"})
		ans := r.awaitResponse(id)
		a.Update(r.sid, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`+strconv.Quote("answer="+string(ans))+`},"messageId":"ans"}`)
	case "burst": // burst:CMD,CMD,...: the commands' lines in one write
		answered := false
		a.Hold()
		for _, sub := range strings.Split(arg, ",") {
			if r.command(m, sub) {
				answered = true
			}
		}
		a.Release()
		return answered
	case "permask": // permask:KIND+KIND...: a permission request, not waited for
		a.Request("session/request_permission", map[string]any{
			"sessionId": r.sid, "toolCall": map[string]any{"toolCallId": "t"}, "options": permOptions(arg),
		})
	case "permnull": // permnull:KIND+KIND...: the same with "id": null
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "method": "session/request_permission", "params": map[string]any{
			"sessionId": r.sid, "toolCall": map[string]any{"toolCallId": "t"}, "options": permOptions(arg),
		}})
		a.WriteLine(string(b))
	case "elicitask":
		a.Request("elicitation/create", map[string]any{"message": "what?"})
	case "fsask":
		a.Request("fs/read_text_file", map[string]any{"sessionId": r.sid, "path": "/etc/passwd"})
	case "fsnull":
		a.WriteLine(`{"jsonrpc":"2.0","id":null,"method":"fs/read_text_file","params":{"sessionId":"` + r.sid + `","path":"/etc/passwd"}}`)
	case "eof": // what is held goes out, then stdout closes and the runtime exits
		a.Release()
		os.Stdout.Close()
		os.Exit(0)
	case "stop": // stop:REASON
		a.Reply(m, map[string]any{"stopReason": arg})
		return true
	case "quota": // quota:IN/OUT — end_turn with a _meta.quota block (MS-5)
		in, out, _ := strings.Cut(arg, "/")
		ni, _ := strconv.Atoi(in)
		no, _ := strconv.Atoi(out)
		a.Reply(m, map[string]any{"stopReason": "end_turn", "_meta": map[string]any{"quota": map[string]any{
			"token_count": map[string]any{"input_tokens": ni, "output_tokens": no}}}})
		return true
	case "err": // err:CODE
		n, _ := strconv.Atoi(arg)
		a.ReplyError(m, n, "prompt went wrong", nil)
		return true
	case "errdata": // errdata:CODE — the cause only in data, as Qwen Code answers (DI-11)
		n, _ := strconv.Atoi(arg)
		a.ReplyError(m, n, "prompt went wrong", map[string]any{"details": "401 Incorrect API key provided"})
		return true
	case "badresult":
		a.Reply(m, map[string]any{"stopReason": 5})
		return true
	case "crash":
		fmt.Fprintln(os.Stderr, "crashing now")
		os.Exit(7)
	case "exit0":
		os.Exit(0)
	case "hang":
		return true // never answer; keep reading in the main loop
	case "waitcancel-perm": // after session/cancel, ask permission, then answer cancelled
		r.awaitCancel()
		r.command(m, "perm:reject_once")
		a.Reply(m, map[string]any{"stopReason": "cancelled"})
		return true
	case "permnoid":
		a.WriteLine(`{"jsonrpc":"2.0","method":"session/request_permission","params":{"sessionId":"` + r.sid + `","toolCall":{"toolCallId":"t"},"options":[]}}`)
	case "permstrid": // a permission request with a string id; the raw response is echoed
		a.WriteLine(`{"jsonrpc":"2.0","id":"req-7","method":"session/request_permission","params":{"sessionId":"` + r.sid + `","toolCall":{"toolCallId":"t"},"options":[{"optionId":"r","name":"no","kind":"reject_once"}]}}`)
		for {
			m2, err := r.read()
			if err != nil {
				os.Exit(0)
			}
			if m2.Method == "" {
				a.Update(r.sid, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`+strconv.Quote("id="+string(m2.ID))+`},"messageId":"ans"}`)
				break
			}
		}
	case "waitcancel": // waitcancel:REASON|none — answer after session/cancel
		r.awaitCancel()
		if arg != "none" {
			a.Reply(m, map[string]any{"stopReason": arg})
		}
		return true
	case "holder": // leave a descendant holding stdout, then exit
		_, detach := r.cfg["detach"]
		fakeagent.SpawnHolder(r.cfg["holder"], detach)
		os.Exit(0)
	case "tree": // leave a setsid'd command with a child and a daemon (TD-15)
		fakeagent.SpawnTree(r.cfg["holder"])
	default:
		a.Fail("unknown command %q", c)
	}
	return false
}

// authMethods builds initialize's authMethods from ID+ID...; an id
// "term-…" is a terminal method.
func authMethods(arg string) []map[string]any {
	var out []map[string]any
	for _, id := range strings.Split(arg, "+") {
		m := map[string]any{"id": id, "name": "Method " + id}
		if strings.HasPrefix(id, "term-") {
			m["type"] = "terminal"
		}
		out = append(out, m)
	}
	return out
}

// permOptions builds a permission request's options from KIND+KIND...
func permOptions(arg string) []map[string]any {
	var opts []map[string]any
	if arg != "" {
		for i, k := range strings.Split(arg, "+") {
			opts = append(opts, map[string]any{"optionId": fmt.Sprintf("opt-%d-%s", i, k), "name": k, "kind": k})
		}
	}
	return opts
}

// awaitResponse reads until the response to id arrives, recording lines.
func (r *runner) awaitResponse(id int) []byte {
	want := strconv.Itoa(id)
	for {
		m, err := r.read()
		if err != nil {
			os.Exit(0)
		}
		if m.Method == "" && string(m.ID) == want {
			if m.Error != nil {
				b, _ := json.Marshal(m.Error)
				return b
			}
			return m.Result
		}
		if m.Method == "session/cancel" {
			continue
		}
	}
}

// awaitCancel reads until session/cancel arrives.
func (r *runner) awaitCancel() {
	for {
		m, err := r.read()
		if err != nil {
			os.Exit(0)
		}
		if m.Method == "session/cancel" {
			return
		}
	}
}

// helloAgent is the runtime of the package example: it greets every
// prompt and ends the turn.
func helloAgent(a *fakeagent.Agent) {
	a.Handshake(fakeagent.InitResult(map[string]any{"loadSession": true}), "hello-1")
	for {
		m, err := a.Read()
		if err != nil {
			return
		}
		if m.Method != "session/prompt" {
			continue
		}
		a.Update("hello-1", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello from "},"messageId":"m1"}`)
		a.Update("hello-1", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"the runtime."},"messageId":"m1"}`)
		a.Reply(m, map[string]any{"stopReason": "end_turn"})
	}
}
