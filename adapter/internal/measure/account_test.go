package measure

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counts is a read that hands out one count after another, then repeats
// the last.
func counts(cs ...Count) func() Count {
	return func() Count {
		c := cs[0]
		if len(cs) > 1 {
			cs = cs[1:]
		}
		return c
	}
}

func count(basis int64, records, nonZero int, model string) Count {
	return Count{Usage: Usage{Input: basis, Total: basis}, Basis: basis, Records: records, NonZero: nonZero, Model: model}
}

const (
	every  = time.Millisecond
	within = 50 * time.Millisecond
)

func TestGEM7_DrainEndsOnceTheCountCoversTheBound(t *testing.T) {
	var a Account
	f, ok := a.Drain(context.Background(), 100, every, time.Hour, Count{}, counts(count(40, 1, 1, "m"), count(120, 2, 2, " m ")), "o")
	require.True(t, ok, "the second read covers 100: no need to wait the hour")
	assert.Equal(t, GradeAccounted, f.Grade)
	assert.Equal(t, Usage{Input: 120, Total: 120}, f.Usage)
	assert.Equal(t, "m", f.Model, "trimmed")
	assert.Equal(t, "o", f.Origin)
	assert.Equal(t, int64(120), a.Answered())
}

func TestGEM10_GEM11_DrainGradesCarriesAndNeverGoesBack(t *testing.T) {
	var a Account
	f, ok := a.Drain(context.Background(), 100, every, within, Count{}, counts(count(60, 1, 1, "m")), "o")
	require.True(t, ok)
	assert.Equal(t, GradePartial, f.Grade, "60 of 100")
	assert.Equal(t, int64(40), a.Carry())

	f, ok = a.Drain(context.Background(), 10, every, within, count(60, 1, 1, "m"), counts(count(110, 2, 2, "")), "o")
	require.True(t, ok)
	assert.Equal(t, GradeAccounted, f.Grade, "50 covers 10 + the 40 carried")
	assert.Zero(t, a.Carry())
	assert.Equal(t, "m", f.Model, "the last non-empty model")

	_, ok = a.Drain(context.Background(), 10, every, within, count(110, 2, 2, ""), counts(count(110, 2, 2, "")), "o")
	assert.False(t, ok, "nothing new")
	assert.Equal(t, int64(10), a.Carry(), "a turn with nothing carries its whole need")

	f = a.Answer(0, count(90, 3, 3, ""), "o")
	assert.Equal(t, GradeUnknown, f.Grade, "no bound")
	assert.Equal(t, Usage{Input: 110, Total: 110}, f.Usage, "a smaller count never moves the figure back")
	assert.Equal(t, Usage{Input: 110, Total: 110}, a.Last())
}

func TestGEM10_ZeroRecordsProveNothingAgainstABound(t *testing.T) {
	var a Account
	_, ok := a.Drain(context.Background(), 10, every, within, Count{}, counts(count(0, 1, 0, "")), "o")
	assert.False(t, ok, "a zero record cannot prove a positive bound")
	f, ok := a.Drain(context.Background(), 0, every, time.Hour, count(0, 1, 0, ""), counts(count(0, 2, 0, "")), "o")
	require.True(t, ok, "without a bound a record is a measurement, and ends the poll")
	assert.Equal(t, GradeUnknown, f.Grade)
}

func TestGEM7_CancelledDrainIsNothing(t *testing.T) {
	var a Account
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, ok := a.Drain(ctx, 10, every, time.Hour, Count{}, counts(count(5, 1, 1, "")), "o")
	assert.False(t, ok, "even with a partial figure in hand")
	assert.Equal(t, int64(10), a.Carry())
}
