package gentest

import (
	"testing"

	"github.com/segmentio/encoding/json"

	"acpkit.dev/acpsdk/gen"
)

// chunk is a ~200-byte agent_message_chunk session/update params object,
// the hot path of every turn (SDK-11).
const chunk = `{"sessionId":"sess_01HZY8M3Q4T7W2X9K5R6B1C0DE","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Sure, I can help with that. Let me look at the failing test first and then propose a fix."}}}`

// plainChunk is the floor: a plain struct decoded by segmentio reflection.
type plainChunk struct {
	SessionID string `json:"sessionId"`
	Update    struct {
		SessionUpdate string `json:"sessionUpdate"`
		Content       struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"update"`
}

func BenchmarkSessionNotificationDecodeEncode(b *testing.B) {
	data := []byte(chunk)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var n gen.SessionNotification
		if err := n.UnmarshalJSON(data); err != nil {
			b.Fatal(err)
		}
		if _, err := n.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSessionNotificationDecode(b *testing.B) {
	data := []byte(chunk)
	b.ReportAllocs()
	for b.Loop() {
		var n gen.SessionNotification
		if err := n.UnmarshalJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlainStructDecodeEncode(b *testing.B) {
	data := []byte(chunk)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var n plainChunk
		if err := json.Unmarshal(data, &n); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(&n); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSessionNotificationEncode(b *testing.B) {
	var n gen.SessionNotification
	if err := n.UnmarshalJSON([]byte(chunk)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCPU reports CPU time per op beside wall time, for a shared box.
func BenchmarkCPU(b *testing.B) {
	data := []byte(chunk)
	b.Run("decode+encode/ours", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuNow(b)
		for b.Loop() {
			var n gen.SessionNotification
			if err := n.UnmarshalJSON(data); err != nil {
				b.Fatal(err)
			}
			if _, err := n.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuNow(b)-start)/float64(b.N), "cpu-ns/op")
	})
	b.Run("decode+encode/floor", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuNow(b)
		for b.Loop() {
			var n plainChunk
			if err := json.Unmarshal(data, &n); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(&n); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuNow(b)-start)/float64(b.N), "cpu-ns/op")
	})
	b.Run("decode/ours", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuNow(b)
		for b.Loop() {
			var n gen.SessionNotification
			if err := n.UnmarshalJSON(data); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuNow(b)-start)/float64(b.N), "cpu-ns/op")
	})
	b.Run("decode/floor", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuNow(b)
		for b.Loop() {
			var n plainChunk
			if err := json.Unmarshal(data, &n); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuNow(b)-start)/float64(b.N), "cpu-ns/op")
	})
}
