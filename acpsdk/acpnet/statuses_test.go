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

// statuses runs the rows of the raw-HTTP status table (internal/acpnettest)
// for one requirement against the Handler; conformance/tsinterop runs the
// whole table against it and against the TypeScript SDK's server.
func statuses(t *testing.T, id string) {
	h := acpnet.NewHandler(newTestAgent, nil)
	broken := acpnet.NewHandler(func(io.ReadWriteCloser, acpnet.Peer) *acpsdk.Conn { return nil }, nil)
	mux := http.NewServeMux()
	mux.Handle("/acp", h)
	mux.Handle("/broken", broken)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer func() { require.NoError(t, broken.Close()) }()
	defer func() { require.NoError(t, h.Close()) }()
	acpnettest.Statuses(t, acpnettest.Server{Endpoint: srv.URL + "/acp", BrokenEndpoint: srv.URL + "/broken"}, id)
}

func TestTR1_Statuses(t *testing.T) { statuses(t, "TR1") }
func TestTR2_Statuses(t *testing.T) { statuses(t, "TR2") }
func TestTR3_Statuses(t *testing.T) { statuses(t, "TR3") }
func TestTR4_Statuses(t *testing.T) { statuses(t, "TR4") }
func TestTR5_Statuses(t *testing.T) { statuses(t, "TR5") }
func TestTR6_Statuses(t *testing.T) { statuses(t, "TR6") }
func TestTR7_Statuses(t *testing.T) { statuses(t, "TR7") }
func TestTR8_Statuses(t *testing.T) { statuses(t, "TR8") }
func TestTR9_Statuses(t *testing.T) { statuses(t, "TR9") }
