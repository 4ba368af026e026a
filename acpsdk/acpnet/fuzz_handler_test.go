package acpnet_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"acpkit.dev/acpsdk/acpnet"
)

// FuzzHandlerRequests sends the Handler any request: any method, media
// types, session id and body, to no connection or to a live one. It never
// panics or hangs, and answers only with the statuses TR-1…TR-9 and TR-18
// document.
func FuzzHandlerRequests(f *testing.F) {
	h := acpnet.NewHandler(newTestAgent, &acpnet.ServerOptions{MaxMessageBytes: 4 << 10, MaxBufferedBytes: 16 << 10, MaxOutputStall: 50 * time.Millisecond})
	f.Cleanup(func() { _ = h.Close() })
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	for _, seed := range []struct {
		method, media, accept, session string
		live                           bool
		body                           []byte
	}{
		{"POST", "application/json", "", "", false, init},
		{"POST", "Application/JSON; charset=utf-8", "", "", false, init},
		{"POST", "text/plain", "", "", false, init},
		{"POST", "application/json", "", "", true, []byte(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)},
		{"POST", "application/json", "", "s1", true, []byte(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s2","prompt":[]}}`)},
		{"POST", "application/json", "", "", true, []byte(`[{"jsonrpc":"2.0","id":1}]`)},
		{"POST", "application/json", "", "", true, []byte(`{"jsonrpc":"2.0","id":9,"result":{}}`)},
		{"POST", "application/json", "", "", false, []byte(`{"jsonrpc"`)},
		{"GET", "", "text/event-stream", "", true, nil},
		{"GET", "", "text/event-stream", "s1", true, nil},
		{"GET", "", "*/*", "", true, nil},
		{"DELETE", "", "", "", true, nil},
		{"PUT", "application/json", "", "", false, init},
	} {
		f.Add(seed.method, seed.media, seed.accept, seed.session, seed.live, seed.body)
	}
	documented := map[int]bool{200: true, 202: true, 400: true, 404: true, 405: true, 406: true, 409: true, 413: true, 415: true, 500: true, 503: true}
	serve := func(req *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	deleteConn := func(id string) {
		req := httptest.NewRequest(http.MethodDelete, "/acp", nil)
		req.Header.Set(acpnet.HeaderConnectionID, id)
		serve(req)
	}
	f.Fuzz(func(t *testing.T, method, media, accept, session string, live bool, body []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var id string
		if live {
			req := httptest.NewRequest(http.MethodPost, "/acp", bytes.NewReader(init))
			req.Header.Set("Content-Type", "application/json")
			rec := serve(req.WithContext(ctx))
			if rec.Code != 200 {
				t.Fatalf("initialize: %d %s", rec.Code, rec.Body)
			}
			id = rec.Header().Get(acpnet.HeaderConnectionID)
			defer deleteConn(id)
		}
		if method == http.MethodGet {
			// An event stream lasts as long as its request: end it at once.
			var stop context.CancelFunc
			ctx, stop = context.WithCancel(ctx)
			stop()
		}
		req, err := http.NewRequestWithContext(ctx, method, "http://127.0.0.1/acp", bytes.NewReader(body))
		if err != nil {
			return // not a method net/http would serve
		}
		for k, v := range map[string]string{"Content-Type": media, "Accept": accept, acpnet.HeaderSessionID: session, acpnet.HeaderConnectionID: id} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		rec := serve(req)
		if !documented[rec.Code] {
			t.Fatalf("%s answered %d: %s", method, rec.Code, rec.Body)
		}
		if opened := rec.Header().Get(acpnet.HeaderConnectionID); opened != "" && opened != id {
			deleteConn(opened)
		}
	})
}
