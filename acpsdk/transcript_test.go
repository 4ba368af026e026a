package acpsdk

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk/gen"
)

var update = flag.Bool("update", false, "rewrite the wire transcripts in testdata/transcripts")

// call adapts a typed peer method to a transcript step: decode the params
// JSON into the typed request and make the typed call.
func call[Peer any, P any, R any](m func(Peer, context.Context, *P) (R, error)) func(context.Context, *sidePair, Peer, []byte) error {
	return func(ctx context.Context, _ *sidePair, peer Peer, raw []byte) error {
		var p P
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		_, err := m(peer, ctx, &p)
		return err
	}
}

func notify[Peer any, P any](m func(Peer, context.Context, *P) error) func(context.Context, *sidePair, Peer, []byte) error {
	return func(ctx context.Context, _ *sidePair, peer Peer, raw []byte) error {
		var p P
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		return m(peer, ctx, &p)
	}
}

// transcriptCase is one method's exchange. Exactly one of byClient and
// byAgent is set: the side that makes the call. await, when set, waits for
// the receiver to have handled a notification.
type transcriptCase struct {
	name     string // file name without .txtar
	method   string
	doc      string
	params   string
	byClient func(context.Context, *sidePair, *gen.AgentPeer, []byte) error
	byAgent  func(context.Context, *sidePair, *gen.ClientPeer, []byte) error
	await    func(*testing.T, *sidePair)
}

var transcriptCases = []transcriptCase{
	{name: "initialize", method: gen.MethodInitialize, doc: "The client opens the connection; the agent states its capabilities.",
		params:   `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"acpsdk-test","version":"0.1.0"}}`,
		byClient: call((*gen.AgentPeer).Initialize)},
	{name: "authenticate", method: gen.MethodAuthenticate, doc: "The client authenticates with one of the agent's authMethods.",
		params: `{"methodId":"token"}`, byClient: call((*gen.AgentPeer).Authenticate)},
	{name: "logout", method: gen.MethodLogout, doc: "The client logs out (agentCapabilities.auth.logout).",
		params: `{}`, byClient: call((*gen.AgentPeer).Logout)},
	{name: "session_new", method: gen.MethodSessionNew, doc: "The client creates a session; the agent returns its id and modes.",
		params: `{"cwd":"/work","mcpServers":[]}`, byClient: call((*gen.AgentPeer).NewSession)},
	{name: "session_load", method: gen.MethodSessionLoad, doc: "The agent replays the conversation as session/update before answering.",
		params: `{"sessionId":"s1","cwd":"/work","mcpServers":[]}`, byClient: call((*gen.AgentPeer).LoadSession)},
	{name: "session_resume", method: gen.MethodSessionResume, doc: "Resume without replay.",
		params: `{"sessionId":"s1","cwd":"/work"}`, byClient: call((*gen.AgentPeer).ResumeSession)},
	{name: "session_list", method: gen.MethodSessionList, doc: "Cursor-paginated session list.",
		params: `{"cwd":"/work"}`, byClient: call((*gen.AgentPeer).ListSessions)},
	{name: "session_close", method: gen.MethodSessionClose, params: `{"sessionId":"s1"}`, doc: "Close a session.",
		byClient: call((*gen.AgentPeer).CloseSession)},
	{name: "session_delete", method: gen.MethodSessionDelete, params: `{"sessionId":"s1"}`, doc: "Delete a session.",
		byClient: call((*gen.AgentPeer).DeleteSession)},
	{name: "session_set_mode", method: gen.MethodSessionSetMode, params: `{"sessionId":"s1","modeId":"code"}`, doc: "Switch the session's mode.",
		byClient: call((*gen.AgentPeer).SetSessionMode)},
	{name: "session_set_config_option", method: gen.MethodSessionSetConfigOption, doc: "Set a session config option.",
		params: `{"sessionId":"s1","configId":"model","value":"fast"}`, byClient: call((*gen.AgentPeer).SetSessionConfigOption)},
	{name: "session_prompt", method: gen.MethodSessionPrompt, doc: "A full turn: a streamed update, a permission request, then the stop reason.",
		params: `{"sessionId":"s1","prompt":[{"type":"text","text":"Hello"}]}`, byClient: call((*gen.AgentPeer).Prompt)},
	{name: "session_cancel", method: gen.MethodSessionCancel, doc: "A notification; never answered.",
		params: `{"sessionId":"s1"}`, byClient: notify((*gen.AgentPeer).Cancel),
		await: func(t *testing.T, p *sidePair) { require.Equal(t, "s1", await(t, p.fa.cancelled)) }},
	{name: "cancel_request", method: gen.MethodCancelRequest, doc: "The client cancels its call (PendingCall.Cancel): it sends $/cancel_request and still gets the final answer.",
		params: `{"sessionId":"wait","prompt":[{"type":"text","text":"Wait"}]}`,
		byClient: func(ctx context.Context, p *sidePair, _ *gen.AgentPeer, raw []byte) error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			pc, err := p.client.Go(ctx, gen.MethodSessionPrompt, json.RawMessage(raw))
			if err != nil {
				return err
			}
			pc.Cancel()
			cancel()
			var res gen.PromptResponse
			if err := pc.Result(&res); err != nil {
				return err
			}
			if res.StopReason != gen.StopReasonCancelled {
				return &Error{Code: 1, Message: "unexpected stop reason " + string(res.StopReason)}
			}
			return nil
		}},
	{name: "session_update", method: gen.MethodSessionUpdate, doc: "A notification from the agent; never answered.",
		params:  `{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call1","title":"Read file","kind":"read","status":"pending"}}`,
		byAgent: notify((*gen.ClientPeer).SessionUpdate),
		await: func(t *testing.T, p *sidePair) {
			require.Equal(t, gen.SessionID("s1"), await(t, p.fc.updates).SessionID)
		}},
	{name: "session_request_permission", method: gen.MethodSessionRequestPermission, doc: "The agent asks before a tool call; the client selects an option.",
		params:  `{"sessionId":"s1","toolCall":{"toolCallId":"call1"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}]}`,
		byAgent: call((*gen.ClientPeer).RequestPermission)},
	{name: "fs_read_text_file", method: gen.MethodFsReadTextFile, params: `{"sessionId":"s1","path":"/work/a.txt","line":1,"limit":10}`, doc: "Read a file through the client.",
		byAgent: call((*gen.ClientPeer).ReadTextFile)},
	{name: "fs_write_text_file", method: gen.MethodFsWriteTextFile, params: `{"sessionId":"s1","path":"/work/a.txt","content":"hi\n"}`, doc: "Write a file through the client.",
		byAgent: call((*gen.ClientPeer).WriteTextFile)},
	{name: "terminal_create", method: gen.MethodTerminalCreate, params: `{"sessionId":"s1","command":"ls","args":["-l"],"cwd":"/work"}`, doc: "Start a command in a client terminal.",
		byAgent: call((*gen.ClientPeer).CreateTerminal)},
	{name: "terminal_output", method: gen.MethodTerminalOutput, params: `{"sessionId":"s1","terminalId":"t1"}`, doc: "Read a terminal's output.",
		byAgent: call((*gen.ClientPeer).TerminalOutput)},
	{name: "terminal_wait_for_exit", method: gen.MethodTerminalWaitForExit, params: `{"sessionId":"s1","terminalId":"t1"}`, doc: "Wait for a terminal's command to exit.",
		byAgent: call((*gen.ClientPeer).WaitForTerminalExit)},
	{name: "terminal_kill", method: gen.MethodTerminalKill, params: `{"sessionId":"s1","terminalId":"t1"}`, doc: "Kill a terminal's command.",
		byAgent: call((*gen.ClientPeer).KillTerminal)},
	{name: "terminal_release", method: gen.MethodTerminalRelease, params: `{"sessionId":"s1","terminalId":"t1"}`, doc: "Release a terminal.",
		byAgent: call((*gen.ClientPeer).ReleaseTerminal)},
	{name: "elicitation_create", method: gen.MethodElicitationCreate, doc: "The agent asks the user for structured input.",
		params:  `{"sessionId":"s1","message":"Which branch?","mode":"form","requestedSchema":{"type":"object","properties":{"branch":{"type":"string"}}}}`,
		byAgent: call((*gen.ClientPeer).CreateElicitation)},
	{name: "elicitation_complete", method: gen.MethodElicitationComplete, doc: "URL-mode elicitation finished; a notification.",
		params: `{"elicitationId":"e1"}`, byAgent: notify((*gen.ClientPeer).CompleteElicitation),
		await: func(t *testing.T, p *sidePair) { require.Equal(t, "e1", await(t, p.fc.complete)) }},
}

// TestSDK6_WireTranscripts drives every method through the typed API
// between a ClientSide and an AgentSide and compares both sides' lines with
// testdata/transcripts/<method>.txtar (go test -run WireTranscripts -update
// rewrites them).
func TestSDK6_WireTranscripts(t *testing.T) {
	for _, tc := range transcriptCases {
		t.Run(tc.name, func(t *testing.T) {
			p := newSidePair(t, false, false)
			ctx := t.Context()
			var err error
			if tc.byClient != nil {
				err = tc.byClient(ctx, p, p.client.Agent(), []byte(tc.params))
			} else {
				err = tc.byAgent(ctx, p, p.agent.Client(), []byte(tc.params))
			}
			require.NoError(t, err)
			if tc.await != nil {
				tc.await(t, p)
			}
			// Everything either side queued has been written.
			require.NoError(t, p.client.Conn().Flush(ctx))
			require.NoError(t, p.agent.Conn().Flush(ctx))
			got := formatTranscript(tc.method, tc.doc, p.clientTx.take(), p.agentTx.take())
			path := filepath.Join("testdata", "transcripts", tc.name+".txtar")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, got, 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "missing transcript; run go test ./acpsdk -run WireTranscripts -update")
			require.Equal(t, string(want), string(got))
			// Every line in the transcript is one valid JSON-RPC 2.0 message.
			for _, sec := range parseTranscript(t, want) {
				for _, line := range sec {
					require.True(t, json.Valid([]byte(line)), line)
					require.True(t, strings.HasPrefix(line, `{"jsonrpc":"2.0",`), line)
				}
			}
		})
	}
}

// TestSDK6_TranscriptForEveryMethod: the table covers every method of the
// schema, so a schema bump that adds one fails here until it has a
// transcript.
func TestSDK6_TranscriptForEveryMethod(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range transcriptCases {
		covered[tc.method] = true
	}
	var missing []string
	for _, m := range gen.Methods {
		if !covered[m.Name] {
			missing = append(missing, m.Name)
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing)
}

func formatTranscript(method, doc string, client, agent []string) []byte {
	var b bytes.Buffer
	b.WriteString("# " + method + ": " + doc + "\n")
	b.WriteString("# Lines each side wrote, in order. Generated by TestSDK6_WireTranscripts -update.\n")
	for _, sec := range []struct {
		name  string
		lines []string
	}{{"client", client}, {"agent", agent}} {
		b.WriteString("-- " + sec.name + " --\n")
		for _, l := range sec.lines {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes()
}

// parseTranscript returns the lines of each "-- name --" section.
func parseTranscript(t *testing.T, data []byte) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --") {
			cur = strings.TrimSuffix(strings.TrimPrefix(line, "-- "), " --")
			out[cur] = []string{}
			continue
		}
		if cur != "" {
			out[cur] = append(out[cur], line)
		}
	}
	require.Contains(t, out, "client")
	require.Contains(t, out, "agent")
	return out
}
