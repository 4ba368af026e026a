package bench

import "testing"

// reportCPU reports the CPU time used since start per op as "cpu-ns/op".
// Call it after the b.Loop loop, with start read just before it.
func reportCPU(b *testing.B, start int64) {
	b.ReportMetric(float64(cpuClock(b)-start)/float64(b.N), "cpu-ns/op")
}
