package acpnet

import (
	"bytes"
	"context"
	"sync"
)

// defaultPipeBytes is how much a linePipe holds before its writers wait:
// what an OS pipe holds, so a Conn fed over the network sees the same
// backpressure as one reading a subprocess's stdout.
const defaultPipeBytes = 64 << 10

// linePipe carries whole newline-terminated lines to one reader, an
// acpsdk.Conn's, the way an OS pipe carries a subprocess's output:
// writers wait while it holds its bound (a line that finds it empty is
// always admitted, however long), so a Conn that stops reading stops what
// feeds it (SDK-9). Lines never interleave. Closing it lets the reader
// drain what is queued and then see the close error.
type linePipe struct {
	mu    sync.Mutex
	queue [][]byte // lines, the first partly read up to off
	off   int
	bytes int // queued bytes not yet read
	limit int
	err   error         // set by close; reads return it once drained
	data  chan struct{} // cap 1: wakes the reader
	space chan struct{} // closed (and replaced) when a read makes room
	// wantSpace says a writer waits on space, so a read must replace it.
	wantSpace bool
	closed    chan struct{} // closed by close
}

func newLinePipe(limit int) *linePipe {
	return &linePipe{
		limit:  limit,
		data:   make(chan struct{}, 1),
		space:  make(chan struct{}),
		closed: make(chan struct{}),
	}
}

// Read copies queued lines into b, as many as fit.
func (p *linePipe) Read(b []byte) (int, error) {
	for {
		p.mu.Lock()
		if p.bytes > 0 {
			n := 0
			for n < len(b) && len(p.queue) > 0 {
				line := p.queue[0][p.off:]
				c := copy(b[n:], line)
				n += c
				if c < len(line) {
					p.off += c
					break
				}
				p.queue[0] = nil
				p.queue = p.queue[1:]
				p.off = 0
			}
			p.bytes -= n
			if len(p.queue) == 0 {
				p.queue = nil // let the backing array go
			}
			if p.wantSpace {
				close(p.space)
				p.space, p.wantSpace = make(chan struct{}), false
			}
			p.mu.Unlock()
			return n, nil
		}
		err := p.err
		p.mu.Unlock()
		if err != nil {
			return 0, err
		}
		select {
		case <-p.data:
		case <-p.closed:
		}
	}
}

// send queues line, which ends in a newline and is the pipe's from now
// on, waiting for room while the pipe is over its bound; ctx bounds that
// wait. It fails with the close error once the pipe is closed.
func (p *linePipe) send(ctx context.Context, line []byte) error {
	p.mu.Lock()
	for p.err == nil && p.bytes > 0 && p.bytes+len(line) > p.limit {
		space := p.space
		p.wantSpace = true
		p.mu.Unlock()
		select {
		case <-space:
		case <-p.closed:
		case <-ctx.Done():
			return ctx.Err()
		}
		p.mu.Lock()
	}
	err := p.push(line)
	p.mu.Unlock()
	return err
}

// sendNow queues line without waiting for room: for the few lines a
// transport makes up itself (an error answer per request at most), which
// must not wait behind the peer's.
func (p *linePipe) sendNow(line []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.push(line)
}

func (p *linePipe) push(line []byte) error {
	if p.err != nil {
		return p.err
	}
	p.queue = append(p.queue, line)
	p.bytes += len(line)
	select {
	case p.data <- struct{}{}:
	default:
	}
	return nil
}

// close ends the pipe: the reader gets err after the queued lines, and
// writers fail with it. The first close wins.
func (p *linePipe) close(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return
	}
	p.err = err
	close(p.closed)
}

// lineSplitter cuts what a Conn writes into lines. The Conn's writer
// batches lines into one Write and may split a long one across two, so a
// line can arrive in pieces; they are joined here.
type lineSplitter struct {
	partial []byte
}

// split calls each for every complete line in p, without its terminator;
// the line is valid only during the call. Blank lines are skipped.
func (s *lineSplitter) split(p []byte, each func(line []byte) error) error {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.partial = append(s.partial, p...)
			return nil
		}
		line := p[:i]
		p = p[i+1:]
		if len(s.partial) > 0 {
			s.partial = append(s.partial, line...)
			line = s.partial
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		var err error
		if len(bytes.TrimSpace(line)) > 0 {
			err = each(line)
		}
		s.partial = s.partial[:0]
		if err != nil {
			return err
		}
	}
	return nil
}
