package acpnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"acpkit.dev/acpsdk/internal/jsonx"
)

// maxErrorBody bounds the body kept from a refused request (TR-11).
const maxErrorBody = 8 << 10

// deleteTimeout bounds the DELETE a closing stream sends.
const deleteTimeout = 5 * time.Second

// connectionFailure lists the POST statuses that mean the connection is
// unusable or gone (TR-11).
func connectionFailure(code int) bool {
	switch code {
	case 401, 403, 404, 410:
		return true
	}
	return false
}

// HTTPStream is the client end of ACP's Streamable HTTP transport: what
// the client's acpsdk.Conn writes is POSTed one message at a time, in
// order, and what the agent sends arrives on event streams — the
// connection's, and one per session, opened before the session's first
// message — and is read by the Conn. Pass it to acpsdk.NewClientSide as
// both reader and writer. Close (which the Conn's Close calls) sends
// DELETE.
//
// Statuses follow the TypeScript SDK (TR-11): 401, 403, 404 or 410 on a
// POST, a network error, the end of the connection's event stream, or a
// refused notification or answer end the transport (the Conn's calls then
// fail with an error wrapping a *StatusError or the cause); 409 fails the
// requests of that session until session/load or session/resume; any
// other status fails only that request, with a -32603 error whose data is
// {"status", "body"}.
type HTTPStream struct {
	url  string
	opts DialOptions
	// ownClient: opts.HTTPClient is the stream's own, its connections
	// closed with it (else they would outlive Close, idle, until the
	// transport's idle timeout, holding goroutines on both ends).
	ownClient bool
	log       *slog.Logger
	cookies   cookieStore
	in        *linePipe
	split     lineSplitter // the writer's
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup // event-stream readers, the closing DELETE

	mu      sync.Mutex
	connID  string
	closed  bool
	streams map[string]*eventStream // open or opening session streams
	retired map[string]*eventStream // ended ones whose reader may still run
	// failed holds the sessions refused 409, until session/load or
	// session/resume reattaches them.
	failed map[string]error
	// answerSession: the agent's requests read on a session stream, by id
	// key; the answer is POSTed with that session's id.
	answerSession map[string]string
	// inFlight: our requests of a session, by id key, awaiting answers.
	inFlight map[string]sessionRequest
	// turn is held by the stream reader that parses what it read (cap 1,
	// a lock whose waiters queue in order and can give up).
	turn chan struct{}
}

type sessionRequest struct {
	sid string
	id  []byte
}

// eventStream is one event stream being opened or read.
type eventStream struct {
	sid    string // "" for the connection's
	ctx    context.Context
	stop   context.CancelFunc
	ready  chan struct{} // closed once the GET answered; err says how
	err    error
	done   chan struct{} // closed once its reader returned
	parser sseParser     // used by whoever holds the turn
}

// NewHTTPStream returns the client end of a Streamable HTTP connection to
// the agent at endpoint (such as http://127.0.0.1:8080/acp). It does no
// I/O: the connection opens when the first message, which must be
// initialize, is written. opts may be nil.
func NewHTTPStream(endpoint string, opts *DialOptions) (*HTTPStream, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("acpnet: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("acpnet: %q is not an http or https URL", endpoint)
	}
	o := opts.withDefaults()
	ownClient := o.HTTPClient == nil
	if ownClient {
		o.HTTPClient = newHTTPClient()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &HTTPStream{
		url:           endpoint,
		opts:          o,
		ownClient:     ownClient,
		log:           o.Logger,
		in:            newLinePipe(defaultPipeBytes),
		ctx:           ctx,
		cancel:        cancel,
		streams:       make(map[string]*eventStream),
		retired:       make(map[string]*eventStream),
		failed:        make(map[string]error),
		answerSession: make(map[string]string),
		inFlight:      make(map[string]sessionRequest),
		turn:          make(chan struct{}, 1),
	}, nil
}

// ConnectionID returns the Acp-Connection-Id the server gave, "" before
// initialize was answered.
func (s *HTTPStream) ConnectionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connID
}

// Read returns the agent's messages as newline-delimited JSON.
func (s *HTTPStream) Read(b []byte) (int, error) { return s.in.Read(b) }

// Write sends the client's messages, each complete line one POST.
func (s *HTTPStream) Write(p []byte) (int, error) {
	if s.isClosed() {
		return 0, ErrClosed
	}
	if err := s.split.split(p, s.post); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close ends the connection: the event streams are dropped and DELETE is
// sent. A server that no longer knows the connection is not an error.
func (s *HTTPStream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		s.closeIdle()
		return nil
	}
	s.closed = true
	connID := s.connID
	s.mu.Unlock()
	s.cancel()
	s.in.close(ErrClosed)
	err := s.deleteConnection(connID)
	s.cookies.clear()
	s.wg.Wait()
	s.closeIdle()
	return err
}

// closeIdle closes the kept-alive connections of the stream's own client,
// once nothing of the stream uses them.
func (s *HTTPStream) closeIdle() {
	if s.ownClient {
		s.opts.HTTPClient.CloseIdleConnections()
	}
}

func (s *HTTPStream) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// fail ends the transport with err, which the reader returns after what
// was already read: the Conn's calls then fail with it.
func (s *HTTPStream) fail(err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	connID := s.connID
	s.mu.Unlock()
	s.log.Warn("acpnet: connection failed", "connection", connID, "err", err.Error())
	s.cancel()
	s.in.close(err)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.deleteConnection(connID)
		s.cookies.clear()
	}()
}

func (s *HTTPStream) deleteConnection(connID string) error {
	if connID == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	resp, err := s.do(ctx, http.MethodDelete, nil, map[string]string{HeaderConnectionID: connID})
	if err != nil {
		return fmt.Errorf("acpnet: DELETE: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotFound {
		return statusError(http.MethodDelete, resp)
	}
	return nil
}

// do sends one request with the caller's headers, the transport's and the
// kept cookies, and keeps the cookies the answer sets.
func (s *HTTPStream) do(ctx context.Context, method string, body []byte, hdr map[string]string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.url, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range s.opts.Header {
		req.Header[k] = append([]string(nil), v...)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	s.cookies.apply(req)
	resp, err := s.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	s.cookies.keep(resp.Header)
	return resp, nil
}

// statusError reads the start of a refused request's body into a
// *StatusError, and closes the body.
func statusError(method string, resp *http.Response) *StatusError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	return &StatusError{Method: method, StatusCode: resp.StatusCode, Status: resp.Status, Body: string(body)}
}

// post sends one of the client's messages.
func (s *HTTPStream) post(line []byte) error {
	env, _ := scanEnvelope(line, false)
	s.mu.Lock()
	connID := s.connID
	s.mu.Unlock()
	if connID == "" {
		return s.postInitialize(line, &env)
	}
	return s.postMessage(connID, line, &env)
}

// postInitialize opens the connection (TR-2): the answer's body is the
// agent's answer, its Acp-Connection-Id the connection.
func (s *HTTPStream) postInitialize(line []byte, env *envelope) error {
	if !env.jsonrpc2 || env.method != "initialize" || env.id == nil {
		return errors.New("acpnet: the first message over HTTP must be an initialize request")
	}
	resp, err := s.do(s.ctx, http.MethodPost, line, map[string]string{"Content-Type": mediaJSON})
	if err != nil {
		err = fmt.Errorf("acpnet: POST initialize: %w", err)
		s.fail(err)
		return err
	}
	if resp.StatusCode/100 != 2 {
		se := statusError(http.MethodPost, resp)
		// A server that failed initialize may say so in JSON-RPC (the
		// TypeScript one answers 500 with -32603 "Initialize failed").
		if answer, ok := answerTo([]byte(se.Body), env.id); ok {
			return s.in.sendNow(answer)
		}
		return s.refused(se, env, "")
	}
	body, err := readLimited(resp.Body, s.opts.MaxMessageBytes)
	resp.Body.Close()
	if err != nil {
		err = fmt.Errorf("acpnet: initialize response: %w", err)
		s.fail(err)
		return err
	}
	answer, ok := answerTo(body, env.id)
	if !ok {
		err := errors.New("acpnet: the initialize response is not a JSON-RPC response to initialize")
		s.fail(err)
		return err
	}
	if err := s.in.sendNow(answer); err != nil {
		return err
	}
	// Without an id (an agent error, from servers that then leave it
	// out) there is no connection yet: a later initialize opens one.
	if id := resp.Header.Get(HeaderConnectionID); id != "" {
		s.mu.Lock()
		s.connID = id
		s.mu.Unlock()
		s.log.Info("acpnet: connection opened", "connection", id, "url", s.url)
		s.openStream("")
	}
	return nil
}

// answerTo returns body as one line if it is a JSON-RPC response to id.
func answerTo(body, id []byte) ([]byte, bool) {
	env, err := scanEnvelope(body, true)
	if err != nil || !env.isResponse() || !bytes.Equal(env.id, id) {
		return nil, false
	}
	return append(oneLine(bytes.Clone(body)), '\n'), true
}

func readLimited(r io.Reader, max int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrMessageTooLarge, max)
	}
	return b, nil
}

// postMessage POSTs a message of an open connection, with its session
// (TR-4), after that session's stream is open.
func (s *HTTPStream) postMessage(connID string, line []byte, env *envelope) error {
	sid := ""
	var key string
	var keyOK bool
	if env.id != nil {
		key, keyOK = idKey(env.id)
	}
	switch {
	case env.hasMethod:
		sid = env.sessionID
	case env.isResponse() && keyOK:
		s.mu.Lock()
		sid = s.answerSession[key]
		s.mu.Unlock()
	}
	if sid != "" {
		if env.method == "session/load" || env.method == "session/resume" {
			s.mu.Lock()
			delete(s.failed, sid)
			s.mu.Unlock()
		}
		if err := s.awaitStream(sid); err != nil {
			if isConflict(err) {
				s.dropForSession(env, err)
				return nil
			}
			return err
		}
	}
	tracked := sid != "" && env.hasMethod && keyOK
	if tracked {
		s.mu.Lock()
		s.inFlight[key] = sessionRequest{sid: strings.Clone(sid), id: bytes.Clone(env.id)}
		s.mu.Unlock()
	}
	hdr := map[string]string{"Content-Type": mediaJSON, HeaderConnectionID: connID}
	if sid != "" {
		hdr[HeaderSessionID] = sid
	}
	resp, err := s.do(s.ctx, http.MethodPost, line, hdr)
	if err != nil {
		if s.isClosed() {
			return ErrClosed
		}
		err = fmt.Errorf("acpnet: POST: %w", err)
		s.fail(err)
		return err
	}
	if resp.StatusCode/100 != 2 {
		se := statusError(http.MethodPost, resp)
		stillPending := true
		if tracked {
			s.mu.Lock()
			_, stillPending = s.inFlight[key]
			delete(s.inFlight, key)
			s.mu.Unlock()
		}
		if !stillPending && !connectionFailure(se.StatusCode) && se.StatusCode != http.StatusConflict {
			return nil // answered meanwhile, or its session's stream ended
		}
		return s.refused(se, env, sid)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if env.isResponse() && keyOK {
		s.mu.Lock()
		delete(s.answerSession, key)
		s.mu.Unlock()
	}
	return nil
}

// refused applies TR-11 to a refused POST.
func (s *HTTPStream) refused(se *StatusError, env *envelope, sid string) error {
	switch {
	case connectionFailure(se.StatusCode):
	case se.StatusCode == http.StatusConflict && sid != "":
		s.failSession(sid, se)
		s.dropForSession(env, se)
		return nil
	case env.hasMethod && env.id != nil:
		return s.answerWithError(env.id, se)
	}
	s.fail(se)
	return se
}

func isConflict(err error) bool {
	se, ok := errors.AsType[*StatusError](err)
	return ok && se.StatusCode == http.StatusConflict
}

// answerWithError answers one of our requests with -32603 in the agent's
// place: the request failed in the transport (TR-11).
func (s *HTTPStream) answerWithError(id []byte, err error) error {
	var data []byte
	if se, ok := errors.AsType[*StatusError](err); ok {
		data = []byte(`{"status":`)
		data = fmt.Appendf(data, "%d", se.StatusCode)
		data = append(data, `,"body":`...)
		if body := []byte(se.Body); jsonx.Valid(body) && len(bytes.TrimSpace(body)) > 0 {
			data = append(data, oneLine(body)...)
		} else {
			data = jsonx.AppendString(data, se.Body)
		}
		data = append(data, '}')
	}
	return s.in.sendNow(errorLine(id, -32603, err.Error(), data))
}

// dropForSession settles a message that cannot go out because its
// session failed: a request is answered with the failure; a notification
// or an answer has nowhere to report it.
func (s *HTTPStream) dropForSession(env *envelope, err error) {
	if env.id == nil {
		return
	}
	if env.hasMethod {
		_ = s.answerWithError(env.id, err)
		return
	}
	if key, ok := idKey(env.id); ok {
		s.mu.Lock()
		delete(s.answerSession, key)
		s.mu.Unlock()
	}
}

// failSession marks a session refused (409) until it is reattached: its
// stream is dropped and its requests in flight fail.
func (s *HTTPStream) failSession(sid string, err error) {
	sid = strings.Clone(sid) // it may alias a message
	s.mu.Lock()
	s.failed[sid] = err
	if es := s.streams[sid]; es != nil {
		s.retireLocked(es)
		es.stop()
	}
	s.mu.Unlock()
	s.failInFlight(sid, err)
}

// retireLocked forgets a session's stream whose reader may still be
// running: a stream opened for the session later waits for it to end, so
// that the server has seen that GET end before the next one asks for the
// same stream (else 409, TR-5). s.mu is held.
func (s *HTTPStream) retireLocked(es *eventStream) {
	if s.streams[es.sid] == es {
		delete(s.streams, es.sid)
		s.retired[es.sid] = es
	}
}

// failInFlight fails the session's requests still awaiting answers.
func (s *HTTPStream) failInFlight(sid string, err error) {
	s.mu.Lock()
	var ids [][]byte
	for key, r := range s.inFlight {
		if r.sid == sid {
			ids = append(ids, r.id)
			delete(s.inFlight, key)
		}
	}
	s.mu.Unlock()
	for _, id := range ids {
		_ = s.answerWithError(id, err)
	}
}

// awaitStream opens the session's event stream if it is not open, and
// waits until the server answered the GET: the TypeScript client does
// this before POSTing to a session (TR-5).
func (s *HTTPStream) awaitStream(sid string) error {
	s.mu.Lock()
	if err := s.failed[sid]; err != nil {
		s.mu.Unlock()
		return err
	}
	s.mu.Unlock()
	es := s.openStream(sid)
	if es == nil {
		return ErrClosed
	}
	select {
	case <-es.ready:
		return es.err
	case <-s.ctx.Done():
		return ErrClosed
	}
}

// openStream starts reading an event stream, the connection's ("") or a
// session's, unless it is open or opening; it returns the stream (nil
// once closed).
func (s *HTTPStream) openStream(sid string) *eventStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if es := s.streams[sid]; es != nil {
		return es
	}
	sid = strings.Clone(sid) // it may alias a message
	ctx, stop := context.WithCancel(s.ctx)
	es := &eventStream{sid: sid, ctx: ctx, ready: make(chan struct{}), done: make(chan struct{}), stop: stop,
		parser: sseParser{max: s.opts.MaxMessageBytes}}
	var prev *eventStream
	if sid != "" {
		s.streams[sid] = es
		prev = s.retired[sid]
		delete(s.retired, sid)
	}
	s.wg.Add(1)
	go s.readEvents(es, prev)
	return es
}

// arrival is a chunk read from one event stream, or its end (err).
type arrival struct {
	es   *eventStream
	data []byte
	err  error
}

// chunkSize is what a stream reader reads at once.
const chunkSize = 32 << 10

// readEvents reads one event stream (TR-5). Each chunk is parsed, and its
// messages handed to the Conn, by the reader that read it, holding the
// turn: so what the server wrote on one stream before another reaches
// the Conn first (the replay of session/load, on the session's stream,
// before its answer, on the connection's), and a message reaches the Conn
// without a hand-off to another goroutine.
func (s *HTTPStream) readEvents(es *eventStream, prev *eventStream) {
	defer s.wg.Done()
	defer close(es.done)
	if prev != nil {
		select {
		case <-prev.done:
		case <-es.ctx.Done():
		}
	}
	hdr := map[string]string{"Accept": mediaEventStream, HeaderConnectionID: s.ConnectionID()}
	if es.sid != "" {
		hdr[HeaderSessionID] = es.sid
	}
	resp, err := s.do(es.ctx, http.MethodGet, nil, hdr)
	if err == nil && resp.StatusCode/100 != 2 {
		err = statusError(http.MethodGet, resp)
	} else if err != nil {
		err = fmt.Errorf("acpnet: GET: %w", err)
	}
	if err != nil {
		es.err = err
		close(es.ready)
		es.stop()
		s.endStream(es, err)
		return
	}
	defer resp.Body.Close()
	close(es.ready)
	buf := make([]byte, chunkSize) // the parser copies what it keeps
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 && !s.arrive(arrival{es: es, data: buf[:n]}) {
			return
		}
		if err != nil {
			// The stream ends after the chunks before it.
			s.arrive(arrival{es: es, err: err})
			return
		}
	}
}

// arrive takes the turn and consumes a chunk or a stream's end; false
// once the stream is stopped.
func (s *HTTPStream) arrive(a arrival) bool {
	select {
	case s.turn <- struct{}{}:
	case <-a.es.ctx.Done():
		return false
	}
	defer func() { <-s.turn }()
	s.consume(a)
	return true
}

func (s *HTTPStream) consume(a arrival) {
	es := a.es
	if es.ctx.Err() != nil {
		return // a stopped stream's last chunks
	}
	emit := func(data []byte) error {
		if !s.deliverEvent(es.sid, data) {
			return ErrClosed
		}
		return nil
	}
	if a.data != nil {
		if err := es.parser.feed(a.data, emit); err != nil {
			es.stop()
			s.endStream(es, err)
		}
		return
	}
	err := a.err
	if errors.Is(err, io.EOF) {
		if perr := es.parser.end(emit); perr != nil {
			err = perr
		}
	}
	es.stop()
	s.endStream(es, err)
}

// endStream handles the end of a stream (TR-10, TR-11).
func (s *HTTPStream) endStream(es *eventStream, err error) {
	s.mu.Lock()
	if es.sid != "" {
		s.retireLocked(es)
	}
	s.mu.Unlock()
	if s.ctx.Err() != nil || errors.Is(err, ErrClosed) {
		return
	}
	switch {
	case es.sid != "" && isConflict(err):
		s.failSession(es.sid, err)
	case es.sid != "" && errors.Is(err, io.EOF):
		// A session stream may end: its requests in flight fail and its
		// next message opens it again (TR-10).
		s.failInFlight(es.sid, ErrSessionStreamEnded)
	case errors.Is(err, io.EOF):
		s.fail(ErrStreamEnded)
	case es.sid != "" && errors.Is(err, context.Canceled):
		// The session failed and its stream was dropped.
	default:
		s.fail(err)
	}
}

// deliverEvent hands one event's message to the reader, noting what the
// transport must remember of it; anything but a JSON object is skipped
// (TR-6). It reports false once the transport is closed.
func (s *HTTPStream) deliverEvent(sid string, data []byte) bool {
	env, err := scanEnvelope(data, true)
	if err != nil {
		s.log.Warn("acpnet: skipped an event that is not a JSON object", "bytes", len(data))
		return true
	}
	if env.isResponse() && env.resultSessionID != "" {
		// session/new and the like: open the new session's stream now, as
		// the TypeScript client does.
		s.openStream(strings.Clone(env.resultSessionID))
	}
	if key, ok := idKey(env.id); ok && env.id != nil {
		s.mu.Lock()
		switch {
		case env.hasMethod && sid != "":
			s.answerSession[key] = sid
		case env.isResponse():
			delete(s.inFlight, key)
		}
		s.mu.Unlock()
	}
	line := append(oneLine(bytes.Clone(data)), '\n')
	return s.in.send(s.ctx, line) == nil
}
