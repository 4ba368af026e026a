package adapter

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDI4_DecodeStopReason(t *testing.T) {
	for raw, want := range map[string]string{
		`{"stopReason":"end_turn"}`:                          "end_turn",
		`{"stopReason":"paused","usage":{"x":1},"_meta":{}}`: "paused",
	} {
		got, ok := decodeStopReason([]byte(raw))
		assert.True(t, ok, raw)
		assert.Equal(t, want, got)
	}
	for _, raw := range []string{`{}`, `{"stopReason":5}`, `{"stopReason":null}`, `null`, `[]`, `"end_turn"`, ``} {
		_, ok := decodeStopReason([]byte(raw))
		assert.False(t, ok, raw)
	}
}

func TestSR10_DecodeNewSession(t *testing.T) {
	id, ok := decodeNewSession([]byte(`{"sessionId":"s","models":{"a":1}}`))
	assert.True(t, ok)
	assert.Equal(t, "s", id)
	for _, raw := range []string{`{}`, `{"sessionId":""}`, `{"sessionId":1}`, `{"sessionId":null}`, `null`, `x`} {
		_, ok := decodeNewSession([]byte(raw))
		assert.False(t, ok, raw)
	}
}

func TestPM1_PM2_SelectRefusalFromParams(t *testing.T) {
	id, ok := selectRefusal([]byte(`{"options":[{"optionId":"a","kind":"allow_once"},{"optionId":7,"kind":"reject_once"},{"optionId":"r","kind":"reject_once"}]}`))
	assert.True(t, ok)
	assert.Equal(t, "r", id, "a malformed option is skipped, not chosen")
	for _, raw := range []string{`{}`, `{"options":null}`, `{"options":"x"}`, `[]`, `nope`} {
		_, ok := selectRefusal([]byte(raw))
		assert.False(t, ok, raw)
	}
}

func FuzzDecodeStopReason(f *testing.F) {
	f.Add([]byte(`{"stopReason":"end_turn"}`))
	f.Add([]byte(`{"stopReason":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, ok := decodeStopReason(b); !ok && r != "" {
			t.Fatal("a reason from a failed decode")
		}
	})
}

func FuzzDecodeNewSession(f *testing.F) {
	f.Add([]byte(`{"sessionId":"s"}`))
	f.Add([]byte(`{"sessionId":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, ok := decodeNewSession(b); ok && id == "" {
			t.Fatal("an empty id accepted")
		}
	})
}

func FuzzSelectRefusal(f *testing.F) {
	f.Add([]byte(`{"options":[{"optionId":"r","kind":"reject_once"}]}`))
	f.Add([]byte(`{"options":[{"optionId":"a","kind":"allow_once"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, ok := selectRefusal(b); !ok && id != "" {
			t.Fatal("an option from a failed selection")
		}
	})
}
