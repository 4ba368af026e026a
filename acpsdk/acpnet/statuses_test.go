package acpnet_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"acpkit.dev/acpsdk"
	"acpkit.dev/acpsdk/acpnet"
	"acpkit.dev/internal/acpnettest"
)

// TestTR1to9_Statuses runs the raw-HTTP status table against the Handler
// (conformance/tsinterop runs the same table against it and against the
// TypeScript SDK's server).
func TestTR1to9_Statuses(t *testing.T) {
	h := acpnet.NewHandler(newTestAgent, nil)
	broken := acpnet.NewHandler(func(io.ReadWriteCloser, acpnet.Peer) *acpsdk.Conn { return nil }, nil)
	mux := http.NewServeMux()
	mux.Handle("/acp", h)
	mux.Handle("/broken", broken)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer func() { require.NoError(t, broken.Close()) }()
	defer func() { require.NoError(t, h.Close()) }()
	acpnettest.Statuses(t, acpnettest.Server{Endpoint: srv.URL + "/acp", BrokenEndpoint: srv.URL + "/broken"})
}
