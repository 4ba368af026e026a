package adapter

// pumpProbe runs a function on the pump goroutine: tests post it to look at
// or change pump-owned state without a race. It exists only in the test
// binary.
type pumpProbe func(p *pump)

func (f pumpProbe) apply(p *pump) { f(p) }
