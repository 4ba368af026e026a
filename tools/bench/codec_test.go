package bench

import (
	stdjson "encoding/json"
	"testing"

	"acpkit.dev/acpsdk/gen"
	acp "github.com/coder/acp-go-sdk"
	"github.com/segmentio/encoding/json"
)

// Sinks keep the compiler from discarding the work being measured.
var (
	sinkBytes []byte
	sinkErr   error
)

// BenchmarkCodec measures decoding and encoding chunkParams (issue #2) the
// way each side does it on its hot path: ours with the generated
// UnmarshalJSON/MarshalJSON (what acpsdk's dispatch calls), coder's types
// through encoding/json (what its connection calls), and the floor struct
// through segmentio/encoding/json.
func BenchmarkCodec(b *testing.B) {
	b.Run("decode/ours", func(b *testing.B) {
		b.SetBytes(int64(len(chunkParams)))
		b.ReportAllocs()
		cpu := cpuClock(b)
		for b.Loop() {
			var n gen.SessionNotification
			sinkErr = n.UnmarshalJSON(chunkParams)
		}
		reportCPU(b, cpu)
	})
	b.Run("decode/coder", func(b *testing.B) {
		b.SetBytes(int64(len(chunkParams)))
		b.ReportAllocs()
		cpu := cpuClock(b)
		for b.Loop() {
			var n acp.SessionNotification
			sinkErr = stdjson.Unmarshal(chunkParams, &n)
		}
		reportCPU(b, cpu)
	})
	b.Run("decode/floor", func(b *testing.B) {
		b.SetBytes(int64(len(chunkParams)))
		b.ReportAllocs()
		cpu := cpuClock(b)
		for b.Loop() {
			var n floorNotification
			sinkErr = json.Unmarshal(chunkParams, &n)
		}
		reportCPU(b, cpu)
	})

	var ours gen.SessionNotification
	var coder acp.SessionNotification
	var floor floorNotification
	if err := ours.UnmarshalJSON(chunkParams); err != nil {
		b.Fatal(err)
	}
	if err := stdjson.Unmarshal(chunkParams, &coder); err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(chunkParams, &floor); err != nil {
		b.Fatal(err)
	}
	b.Run("encode/ours", func(b *testing.B) {
		b.SetBytes(int64(len(chunkParams)))
		b.ReportAllocs()
		cpu := cpuClock(b)
		for b.Loop() {
			sinkBytes, sinkErr = ours.MarshalJSON()
		}
		reportCPU(b, cpu)
	})
	b.Run("encode/coder", func(b *testing.B) {
		b.SetBytes(int64(len(chunkParams)))
		b.ReportAllocs()
		cpu := cpuClock(b)
		for b.Loop() {
			sinkBytes, sinkErr = stdjson.Marshal(&coder)
		}
		reportCPU(b, cpu)
	})
	b.Run("encode/floor", func(b *testing.B) {
		b.SetBytes(int64(len(chunkParams)))
		b.ReportAllocs()
		cpu := cpuClock(b)
		for b.Loop() {
			sinkBytes, sinkErr = json.Marshal(&floor)
		}
		reportCPU(b, cpu)
	})
}
