package adapter

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLOG1_AgentImplementationOncePerSession(t *testing.T) {
	h := newHarness(t)
	s := h.start("sid=s-1")
	_, err, _ := h.turn(s, "stop:end_turn")
	require.NoError(t, err)
	h.stop(s)
	recs := h.log.find("agent implementation")
	require.Len(t, recs, 1)
	assert.Equal(t, "INFO", recs[0].Level.String())
	assert.Equal(t, "s-1", recs[0].Attrs["session_id"])
	assert.Equal(t, "fakeagent", recs[0].Attrs["name"])
	assert.Equal(t, "1.0.0", recs[0].Attrs["version"])

	h2 := newHarness(t)
	h2.stop(h2.start("noinfo", "sid=s-2"))
	recs = h2.log.find("agent implementation")
	require.Len(t, recs, 1, "once per session, agentInfo or not")
	assert.Equal(t, "s-2", recs[0].Attrs["session_id"])
	assert.Empty(t, recs[0].Attrs["name"])
}

func TestLOG_EveryRecordCarriesComponent(t *testing.T) {
	h := newHarness(t)
	s := h.start("close", "closeerr=-32603")
	_, _, _ = h.turn(s, "mystery foreign stray perm:allow_once stop:end_turn")
	h.stop(s)
	recs := h.log.all()
	require.NotEmpty(t, recs)
	for _, r := range recs {
		assert.Equal(t, "clientprotocol-adapter", r.Attrs["component"], r.Message)
	}
}

func TestConcurrent16Sessions(t *testing.T) {
	h := newHarness(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := h.params(fmt.Sprintf("sid=c-%d", i), "close")
			s, err := h.a.StartSession(context.Background(), p)
			if err != nil {
				errs <- err
				return
			}
			defer h.a.StopSession(context.Background(), s)
			if s.ID != fmt.Sprintf("c-%d", i) {
				errs <- fmt.Errorf("session %d got id %q", i, s.ID)
			}
			for range 3 {
				ev := &events{}
				r, err := h.a.RunTurn(context.Background(), s, TurnParams{Prompt: "chunk:m:hi tool:t:read tooldone:t:completed:ok stop:end_turn", OnEvent: ev.on})
				if err != nil {
					errs <- err
					return
				}
				if r.SessionID != s.ID {
					errs <- fmt.Errorf("turn result for %q on session %q", r.SessionID, s.ID)
				}
				for _, e := range ev.list() {
					if e.SessionID != s.ID || e.AgentPID != s.AgentPID {
						errs <- fmt.Errorf("event of another session: %+v", e)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
