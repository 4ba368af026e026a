package bench

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"
)

// topologyEcho is the round trip's floor: a request line and its answer
// through exactly the goroutine topology SP-8 asks of a connection, with
// no JSON. The caller hands its line to a writer goroutine; the far side's
// reader starts a goroutine per request, which hands the answer (the
// request's id spliced into a fixed result) to the far side's writer
// goroutine; the near side's reader hands the answer line to the caller.
// Lines are copied out of the read buffers where they change goroutine,
// as any design must; nothing is parsed beyond finding the id. Each line
// is written with one Write, so over a WebSocket it is one message.
type topologyEcho struct {
	out     chan []byte // to the near writer
	answers chan []byte // near reader to the caller
	done    chan error  // one per goroutine that can fail
	closers []io.Closer // closed last
}

// newTopologyEcho is topologyEcho over a pair of OS pipes.
func newTopologyEcho(tb testing.TB) *topologyEcho {
	p := newPipePair(tb)
	return newTopologyEchoOver(p.aR, p.aW, p.bR, p.bW, p.aR, p.bR)
}

// newTopologyEchoOver runs topologyEcho with the near side reading nearR
// and writing nearW, and the far side reading farR and writing farW. Each
// writer is closed when its side is done: closing nearW must end farR,
// and closing farW must end nearR. closers are closed last.
func newTopologyEchoOver(nearR io.Reader, nearW io.WriteCloser, farR io.Reader, farW io.WriteCloser, closers ...io.Closer) *topologyEcho {
	t := &topologyEcho{
		out:     make(chan []byte, 64),
		answers: make(chan []byte, 1),
		done:    make(chan error, 3),
		closers: closers,
	}
	farOut := make(chan []byte, 64)
	go func() { t.done <- writeFrames(nearW, t.out) }()
	go func() { t.done <- writeFrames(farW, farOut) }()
	go func() {
		// The far reader: a goroutine per request; it closes farOut once
		// every request it started has answered.
		var handlers sync.WaitGroup
		err := readLines(farR, func(line []byte) {
			handlers.Go(func() { farOut <- answerLine(line) })
		})
		handlers.Wait()
		close(farOut)
		t.done <- err
	}()
	go func() {
		// The near reader hands each answer to the caller.
		_ = readLines(nearR, func(line []byte) { t.answers <- line })
		close(t.answers)
	}()
	return t
}

// call makes one round trip.
func (t *topologyEcho) call(tb testing.TB, id int) {
	t.out <- appendPingLine(make([]byte, 0, frameCap), id)
	if _, ok := <-t.answers; !ok {
		tb.Fatal("topologyecho: the answer stream ended")
	}
}

// batch returns roundTripBatch round trips as one function, the ids
// counting on from one batch to the next.
func (t *topologyEcho) batch(tb testing.TB) func() {
	id := 0
	return func() {
		for range roundTripBatch {
			id++
			t.call(tb, id)
		}
	}
}

// close ends both sides and waits for every goroutine.
func (t *topologyEcho) close(tb testing.TB) {
	tb.Helper()
	close(t.out) // the near writer closes its stream: the far reader ends
	var errs []error
	for range 3 {
		errs = append(errs, <-t.done)
	}
	// The far writer closed its stream once farOut ended: the near reader
	// ends.
	for range t.answers {
	}
	closeAll(tb, t.closers...)
	if err := errors.Join(errs...); err != nil {
		tb.Fatal(err)
	}
}

// frameCap matches acpsdk's initial frame capacity.
const frameCap = 512

// writeFrames writes each frame from frames to w, and closes w when frames
// is closed.
func writeFrames(w io.WriteCloser, frames <-chan []byte) error {
	var err error
	for f := range frames {
		if err == nil {
			_, err = w.Write(f)
		}
	}
	return errors.Join(err, w.Close())
}

// readLines calls f with a copy of each line of r, newline included, until
// r ends.
func readLines(r io.Reader, f func(line []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		f(append(make([]byte, 0, len(line)), line...))
	}
}

var (
	idMember     = []byte(`"id":`)
	answerPrefix = []byte(`{"jsonrpc":"2.0","id":`)
	answerSuffix = []byte(`,"result":{}}` + "\n")
)

// answerLine is the answer to a request line: its id, found by searching
// for the member rather than parsing, with an empty result.
func answerLine(req []byte) []byte {
	id := req[bytes.Index(req, idMember)+len(idMember):]
	id = id[:bytes.IndexByte(id, ',')]
	a := make([]byte, 0, frameCap)
	a = append(a, answerPrefix...)
	a = append(a, id...)
	return append(a, answerSuffix...)
}
