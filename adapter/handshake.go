package adapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk"
	"acpkit.dev/adapter/internal/normalize"
)

// initializeParams is HS-1's request, fixed: protocol version 1 and no
// client capability (no fs, no terminal, nothing else offered).
var initializeParams = json.RawMessage(`{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}`)

// handshakeFacts are what the session keeps from the initialize response
// (HS-7).
type handshakeFacts struct {
	hasAgentInfo   bool
	agentName      string
	agentVersion   string
	loadSession    bool
	resume         bool
	close          bool
	delete         bool
	mcpHTTP        bool
	protocolVerson int64
}

// initializeResult is the part of the response the adapter reads. Members
// stay raw so a wrong-typed optional member degrades to "not advertised"
// instead of failing the whole handshake; only protocolVersion is required.
type initializeResult struct {
	ProtocolVersion   *int64          `json:"protocolVersion"`
	AgentInfo         json.RawMessage `json:"agentInfo"`
	AgentCapabilities json.RawMessage `json:"agentCapabilities"`
}

type agentCapabilities struct {
	LoadSession         json.RawMessage `json:"loadSession"`
	McpCapabilities     json.RawMessage `json:"mcpCapabilities"`
	SessionCapabilities json.RawMessage `json:"sessionCapabilities"`
}

type sessionCapabilities struct {
	Resume json.RawMessage `json:"resume"`
	Close  json.RawMessage `json:"close"`
	Delete json.RawMessage `json:"delete"`
}

// decodeInitialize extracts the handshake facts (HS-4, HS-7).
func decodeInitialize(raw []byte) (handshakeFacts, bool) {
	var r initializeResult
	if json.Unmarshal(raw, &r) != nil || r.ProtocolVersion == nil {
		return handshakeFacts{}, false
	}
	f := handshakeFacts{protocolVerson: *r.ProtocolVersion}
	var info struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if present(r.AgentInfo) && json.Unmarshal(r.AgentInfo, &info) == nil {
		f.hasAgentInfo, f.agentName, f.agentVersion = true, info.Name, info.Version
	}
	var caps agentCapabilities
	if json.Unmarshal(r.AgentCapabilities, &caps) == nil {
		f.loadSession = isTrue(caps.LoadSession)
		var mcp struct {
			HTTP json.RawMessage `json:"http"`
		}
		if json.Unmarshal(caps.McpCapabilities, &mcp) == nil {
			f.mcpHTTP = isTrue(mcp.HTTP)
		}
		var sc sessionCapabilities
		if present(caps.SessionCapabilities) && json.Unmarshal(caps.SessionCapabilities, &sc) == nil {
			// Presence of the member means support (protocol §4).
			f.resume, f.close, f.delete = present(sc.Resume), present(sc.Close), present(sc.Delete)
		}
	}
	return f, true
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

func isTrue(raw json.RawMessage) bool { return string(raw) == "true" }

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
	if err := s.conn.Call(cctx, methodInitialize, initializeParams, &raw); err != nil {
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
	if f.protocolVerson != 1 {
		return handshakeFacts{}, newError(KindResponseError, fmt.Sprintf(msgProtocolVersion, f.protocolVerson), nil)
	}
	return f, nil
}
