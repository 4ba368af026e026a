package adapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/gen"
	"acpkit.dev/adapter/internal/normalize"
)

// initializeParams is HS-1's request, fixed: protocol version 1 and no
// client capability (no fs, no terminal, nothing else offered).
var initializeParams = json.RawMessage(`{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}`)

// handshakeFacts are what the session keeps from the initialize response
// (HS-7).
type handshakeFacts struct {
	hasAgentInfo    bool
	agentName       string
	agentVersion    string
	loadSession     bool
	resume          bool
	close           bool
	delete          bool
	mcpHTTP         bool
	protocolVersion int64
	// authMethods are the ids authenticate may be called with (AU-5).
	authMethods []string
}

// decodeInitialize extracts the handshake facts (HS-4, HS-7) through the
// generated wire type: protocolVersion is required, and a malformed
// optional member (a capability of the wrong type, say) decodes to its
// default, so it reads as "not advertised" rather than failing the start.
func decodeInitialize(raw []byte) (handshakeFacts, bool) {
	var r gen.InitializeResponse
	if r.UnmarshalJSON(raw) != nil {
		return handshakeFacts{}, false
	}
	caps := r.AgentCapabilities
	sc := caps.SessionCapabilities
	f := handshakeFacts{
		protocolVersion: int64(r.ProtocolVersion),
		loadSession:     caps.LoadSession,
		mcpHTTP:         caps.McpCapabilities.HTTP,
		// Presence of the member means support (protocol §4).
		resume: sc.Resume != nil,
		close:  sc.Close != nil,
		delete: sc.Delete != nil,
		// AU-5
		authMethods: authMethodIDs(r.AuthMethods),
	}
	if info := r.AgentInfo; info != nil {
		f.hasAgentInfo, f.agentName, f.agentVersion = true, info.Name, info.Version
	}
	return f, true
}

// errLostConnection marks a start call that failed because the connection
// ended (not a timeout); the start reports it per SS-3..SS-5.
var errLostConnection = errors.New("agent connection lost")

// callError classifies the failure of a start-time call: our own bound
// elapsing is a timeout, the caller's context ending is a cancelled start,
// and anything else from the connection is a lost connection. A JSON-RPC
// error answer is returned as is for the caller's own mapping.
func callError(caller, bounded context.Context, err error) error {
	if _, ok := errors.AsType[*acpsdk.Error](err); ok {
		return err
	}
	switch {
	case caller.Err() != nil:
		return newError(KindTurnCancelled, msgStartCancelled, caller.Err())
	case errors.Is(err, context.DeadlineExceeded) && bounded.Err() != nil:
		return newError(KindResponseTimeout, msgResponseTimeout, err)
	default:
		return fmt.Errorf("%w: %w", errLostConnection, err)
	}
}

// rpcStartError maps a JSON-RPC error answer to initialize or session/new
// (HS-3, SR-10): -32000 is a refused credential everywhere.
func rpcStartError(format string, e *acpsdk.Error) error {
	text := normalize.ErrorText(e.Message, e.Data)
	if e.Code == acpsdk.CodeAuthRequired {
		return newError(KindCredentialUnverified, msgCredentialRefused+text, e)
	}
	return newError(KindResponseError, fmt.Sprintf(format, e.Code, text), e)
}

// initialize runs the handshake (§6), bounded by max(read timeout, 60 s).
func (s *session) initialize(ctx context.Context) (handshakeFacts, error) {
	cctx, cancel := context.WithTimeout(ctx, max(s.readTimeout, s.a.handshakeFloor))
	defer cancel()
	var raw json.RawMessage
	if err := s.conn.Call(cctx, gen.MethodInitialize, initializeParams, &raw); err != nil {
		err = callError(ctx, cctx, err)
		if e, ok := errors.AsType[*acpsdk.Error](err); ok {
			return handshakeFacts{}, rpcStartError(msgInitializeError, e)
		}
		return handshakeFacts{}, err
	}
	f, ok := decodeInitialize(raw)
	if !ok {
		return handshakeFacts{}, newError(KindResponseError, msgInitUndecodable, nil)
	}
	if f.protocolVersion != 1 {
		return handshakeFacts{}, newError(KindResponseError, fmt.Sprintf(msgProtocolVersion, f.protocolVersion), nil)
	}
	return f, nil
}
