package normalize

import (
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzUpdate feeds arbitrary update objects to the normalizer: it must never
// panic, and every message it reports stays within the rune cap.
func FuzzUpdate(f *testing.F) {
	for _, s := range []string{
		chunk("m", "hello"), chunk("", "x"),
		`{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","kind":"read"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed","title":"done"}`,
		`{"sessionUpdate":"plan","entries":[]}`, `{"sessionUpdate":"weird"}`, `{}`, `null`, `"x"`, `{"sessionUpdate":1}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","name":42,"kind":7}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"image"}}`, `{"sessionUpdate":"usage_update","used":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var n Normalizer
		check := func(evs []Event) {
			for _, e := range evs {
				if utf8.ValidString(e.Message) && utf8.RuneCountInString(e.Message) > MaxRunes+1 {
					t.Fatalf("message over cap: %d runes", utf8.RuneCountInString(e.Message))
				}
			}
		}
		evs, _ := n.Update(b, time.Unix(0, 0))
		check(evs)
		evs, _ = n.Update(b, time.Unix(1, 0))
		check(evs)
		check(n.Flush())
	})
}

// FuzzDecodeNotification: arbitrary params never panic; success always
// yields an object update.
func FuzzDecodeNotification(f *testing.F) {
	for _, s := range []string{`{"sessionId":"s","update":{"sessionUpdate":"plan"}}`, `{}`, `[]`, `{"sessionId":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, upd, err := DecodeNotification(b)
		if err == nil && !IsObject(upd) {
			t.Fatalf("accepted a non-object update %q", upd)
		}
	})
}

// FuzzErrorText: any message and data render within the cap.
func FuzzErrorText(f *testing.F) {
	f.Add("m", []byte(`"d"`))
	f.Add("m", []byte(`{"a":1}`))
	f.Add("m", []byte(`nonsense`))
	f.Fuzz(func(t *testing.T, msg string, data []byte) {
		s := ErrorText(msg, data)
		if utf8.RuneCountInString(s) > MaxRunes+1 {
			t.Fatalf("over cap")
		}
	})
}

// FuzzReadEnvelope: any line is read or refused without a panic, and an
// envelope read agrees with Member on every member it holds.
func FuzzReadEnvelope(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"prompt":[]}}`))
	f.Add([]byte(`{"ID":1,"id":2,"result":{},"error":null}`))
	f.Add([]byte(`{"method":7}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, ok := ReadEnvelope(line)
		if !ok {
			return
		}
		for name, got := range map[string][]byte{"id": e.ID, "params": e.Params, "result": e.Result} {
			if want, _ := Member(line, name); string(want) != string(got) {
				t.Fatalf("%s: envelope %q, Member %q", name, got, want)
			}
		}
	})
}
