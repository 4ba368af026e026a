package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
)

// Names this agent reports in initialize.
const (
	agentName    = "acpkit-tsinterop-goagent"
	agentVersion = "1.0.0"
)

// Option ids offered by every permission request (the same as agent.mjs).
const (
	allowID  gen.PermissionOptionID = "allow-once"
	rejectID gen.PermissionOptionID = "reject-once"
)

// clientAPI is what the agent needs from its connection to the client;
// *gen.ClientPeer provides it.
type clientAPI interface {
	SessionUpdate(ctx context.Context, params *gen.SessionNotification) error
	RequestPermission(ctx context.Context, params *gen.RequestPermissionRequest) (*gen.RequestPermissionResponse, error)
}

// agent is the Go twin of agent.mjs: the same deterministic behaviour
// (README.md), written on acpsdk's agent side.
type agent struct {
	log   *slog.Logger
	store *store
	// client is set once by setClient, which closes clientSet. The
	// connection starts reading before its client peer can be handed over,
	// so handlers wait for it rather than race on the field.
	client    clientAPI
	clientSet chan struct{}
}

func newAgent(log *slog.Logger, s *store) *agent {
	return &agent{log: log, store: s, clientSet: make(chan struct{})}
}

// setClient hands the agent its connection's client peer; call it once.
func (a *agent) setClient(c clientAPI) {
	a.client = c
	close(a.clientSet)
}

// peer returns the client peer, waiting for setClient.
func (a *agent) peer() clientAPI {
	<-a.clientSet
	return a.client
}

var (
	_ gen.Agent              = (*agent)(nil)
	_ gen.LoadSessionHandler = (*agent)(nil)
)

// turn is one session/prompt in progress. cancelled closes on session/cancel
// or when the prompt's own context ends ($/cancel_request, connection end).
type turn struct {
	once      sync.Once
	cancelled chan struct{}
}

func newTurn() *turn { return &turn{cancelled: make(chan struct{})} }

func (t *turn) cancel() { t.once.Do(func() { close(t.cancelled) }) }

func (t *turn) isCancelled() bool {
	select {
	case <-t.cancelled:
		return true
	default:
		return false
	}
}

// Initialize answers with protocol version 1 whatever the client asked: it is
// the only version this agent speaks, and the client decides whether to go on.
func (a *agent) Initialize(_ context.Context, req *gen.InitializeRequest) (*gen.InitializeResponse, error) {
	a.log.Info("initialize", "protocolVersion", req.ProtocolVersion)
	return &gen.InitializeResponse{
		ProtocolVersion:   1,
		AgentCapabilities: gen.AgentCapabilities{LoadSession: true},
		AgentInfo:         &gen.Implementation{Name: agentName, Version: agentVersion},
		AuthMethods:       []gen.AuthMethod{},
	}, nil
}

// NewSession creates an empty session.
func (a *agent) NewSession(context.Context, *gen.NewSessionRequest) (*gen.NewSessionResponse, error) {
	id, err := a.store.create()
	if err != nil {
		return nil, err
	}
	a.log.Info("session/new", "sessionId", id)
	return &gen.NewSessionResponse{SessionID: id}, nil
}

// LoadSession replays the stored conversation, then answers.
func (a *agent) LoadSession(ctx context.Context, req *gen.LoadSessionRequest) (*gen.LoadSessionResponse, error) {
	a.store.mu.Lock()
	sess, err := a.store.lookupLocked(req.SessionID)
	var history []entry
	if err == nil {
		history = append(history, sess.history...)
	}
	a.store.mu.Unlock()
	if err != nil {
		return nil, wireError(req.SessionID, err)
	}
	a.log.Info("session/load", "sessionId", req.SessionID, "entries", len(history))
	for _, e := range history {
		chunk := gen.ContentChunk{Content: &gen.ContentBlockText{Text: e.Text}}
		var u gen.SessionUpdate
		if e.Role == roleUser {
			u = (*gen.SessionUpdateUserMessageChunk)(&chunk)
		} else {
			u = (*gen.SessionUpdateAgentMessageChunk)(&chunk)
		}
		if err := a.peer().SessionUpdate(ctx, &gen.SessionNotification{SessionID: req.SessionID, Update: u}); err != nil {
			return nil, fmt.Errorf("replay session %s: %w", req.SessionID, err)
		}
	}
	return &gen.LoadSessionResponse{}, nil
}

// Cancel stops the session's running turn; with none running there is
// nothing to stop.
func (a *agent) Cancel(_ context.Context, n *gen.CancelNotification) error {
	a.store.mu.Lock()
	sess := a.store.sessions[n.SessionID]
	var t *turn
	if sess != nil {
		t = sess.turn
	}
	a.store.mu.Unlock()
	a.log.Info("session/cancel", "sessionId", n.SessionID, "active", t != nil)
	if t != nil {
		t.cancel()
	}
	return nil
}

// Prompt runs one turn; see README.md for what each prompt word does.
func (a *agent) Prompt(ctx context.Context, req *gen.PromptRequest) (*gen.PromptResponse, error) {
	text := promptText(req.Prompt)
	a.store.mu.Lock()
	sess, err := a.store.lookupLocked(req.SessionID)
	if err != nil {
		a.store.mu.Unlock()
		return nil, wireError(req.SessionID, err)
	}
	if sess.turn != nil {
		a.store.mu.Unlock()
		return nil, &acpsdk.Error{Code: acpsdk.CodeInvalidRequest, Message: "session " + string(req.SessionID) + " already has a prompt turn running"}
	}
	t := newTurn()
	sess.turn = t
	sess.history = append(sess.history, entry{Role: roleUser, Text: text})
	turnNo := 0
	for _, e := range sess.history {
		if e.Role == roleUser {
			turnNo++
		}
	}
	a.store.mu.Unlock()

	stop := context.AfterFunc(ctx, t.cancel)
	defer stop()
	defer func() {
		a.store.mu.Lock()
		defer a.store.mu.Unlock()
		sess.turn = nil
		if err := a.store.saveLocked(req.SessionID, sess); err != nil {
			a.log.Error("save session", "sessionId", req.SessionID, "err", err)
		}
	}()

	r := turnRunner{a: a, ctx: ctx, id: req.SessionID, sess: sess}
	reason, err := r.run(t, turnNo, text)
	if err != nil {
		return nil, err
	}
	return &gen.PromptResponse{StopReason: reason}, nil
}

// turnRunner sends one turn's updates.
type turnRunner struct {
	a    *agent
	ctx  context.Context
	id   gen.SessionID
	sess *session
}

func (r *turnRunner) update(u gen.SessionUpdate) error {
	return r.a.peer().SessionUpdate(r.ctx, &gen.SessionNotification{SessionID: r.id, Update: u})
}

// say sends one agent_message_chunk and records it for replay.
func (r *turnRunner) say(text string) error {
	r.a.store.mu.Lock()
	r.sess.history = append(r.sess.history, entry{Role: roleAgent, Text: text})
	r.a.store.mu.Unlock()
	return r.update(&gen.SessionUpdateAgentMessageChunk{Content: &gen.ContentBlockText{Text: text}})
}

func (r *turnRunner) run(t *turn, turnNo int, text string) (gen.StopReason, error) {
	if strings.Contains(text, "slow") {
		// One chunk tells the client the turn is running; then nothing
		// happens until the client cancels.
		if err := r.say("working slowly; waiting for session/cancel"); err != nil {
			return "", err
		}
		<-t.cancelled
		return gen.StopReasonCancelled, nil
	}

	for _, chunk := range []string{"turn " + strconv.Itoa(turnNo) + ": ", text, " [done]"} {
		if err := r.say(chunk); err != nil {
			return "", err
		}
	}
	toolCallID := gen.ToolCallID("call-" + strconv.Itoa(turnNo))
	title := "Echo the prompt"
	if err := r.update(&gen.SessionUpdateToolCall{
		ToolCallID: toolCallID,
		Title:      title,
		Kind:       ptr(gen.ToolKindOther),
		Status:     ptr(gen.ToolCallStatusPending),
	}); err != nil {
		return "", err
	}

	status := gen.ToolCallStatusCompleted
	if strings.Contains(text, "permission") {
		res, err := r.a.peer().RequestPermission(r.ctx, &gen.RequestPermissionRequest{
			SessionID: r.id,
			ToolCall: gen.ToolCallUpdate{
				ToolCallID: toolCallID,
				Title:      &title,
				Kind:       ptr(gen.ToolKindOther),
				Status:     ptr(gen.ToolCallStatusPending),
			},
			Options: []gen.PermissionOption{
				{OptionID: allowID, Name: "Allow once", Kind: gen.PermissionOptionKindAllowOnce},
				{OptionID: rejectID, Name: "Reject once", Kind: gen.PermissionOptionKindRejectOnce},
			},
		})
		if err != nil {
			return "", fmt.Errorf("session/request_permission: %w", err)
		}
		chosen := "cancelled"
		switch o := res.Outcome.(type) {
		case *gen.RequestPermissionOutcomeSelected:
			chosen = string(o.OptionID)
		case *gen.RequestPermissionOutcomeCancelled:
		default:
			return "", &acpsdk.Error{Code: acpsdk.CodeInternalError, Message: fmt.Sprintf("client answered permission with unknown outcome %T", o)}
		}
		if err := r.say("permission: " + chosen); err != nil {
			return "", err
		}
		if chosen != string(allowID) {
			status = gen.ToolCallStatusFailed
		}
	}

	result := text
	if status != gen.ToolCallStatusCompleted {
		result = "not run"
	}
	if err := r.update(&gen.SessionUpdateToolCallUpdate{
		ToolCallID: toolCallID,
		Status:     &status,
		Content:    []gen.ToolCallContent{&gen.ToolCallContentContent{Content: &gen.ContentBlockText{Text: result}}},
	}); err != nil {
		return "", err
	}
	if t.isCancelled() {
		return gen.StopReasonCancelled, nil
	}
	return gen.StopReasonEndTurn, nil
}

// promptText joins the text blocks of a prompt.
func promptText(blocks []gen.ContentBlock) string {
	var b strings.Builder
	for _, blk := range blocks {
		if t, ok := blk.(*gen.ContentBlockText); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// wireError turns a store error into the protocol's answer: an unknown
// session is -32002 with data.sessionId, as the TypeScript SDK sends it.
func wireError(id gen.SessionID, err error) error {
	if errors.Is(err, errUnknownSession) {
		data, _ := json.Marshal(map[string]string{"sessionId": string(id)})
		return &acpsdk.Error{Code: acpsdk.CodeResourceNotFound, Message: "resource not found", Data: data}
	}
	return err
}

func ptr[T any](v T) *T { return &v }
