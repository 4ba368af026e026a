package acpnet

// ConnStats is what the bounds tests read of a connection.
type ConnStats struct {
	Buffered, PeakBuffered int // bytes queued on its streams, now and at most
	Unread                 int // session streams holding unread messages
	Sessions               int // session streams it keeps
	Closed                 bool
	Why                    error
}

// TestConn is a connection as the tests see it.
type TestConn struct{ c *serverConn }

// Conn finds the connection with the given id while its Handler keeps it.
func (h *Handler) Conn(id string) *TestConn {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.all {
		if c.id == id {
			return &TestConn{c}
		}
	}
	return nil
}

// Gone is closed once the connection is retired.
func (t *TestConn) Gone() <-chan struct{} { return t.c.gone }

// Stats reports the connection's state.
func (t *TestConn) Stats() ConnStats {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return ConnStats{Buffered: c.buffered, PeakBuffered: c.peakBuffered, Unread: c.unread, Sessions: len(c.sessions), Closed: c.closed, Why: c.why}
}

// Live counts the connections the Handler keeps.
func (h *Handler) Live() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.all)
}
