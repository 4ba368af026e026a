package measure

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is a Source that claims launches of one program; it exists only to
// exercise the seam.
type fake struct {
	name    string
	claimed bool
	closed  int
}

func (f *fake) Name() string { return f.name }
func (f *fake) Claim(l Launch) (bool, error) {
	f.claimed = !l.Remote && (l.Program == f.name || l.RuntimeName == f.name+"-cli")
	return f.claimed, nil
}
func (f *fake) Recognize(n string) bool { return n == f.name+"-cli" }
func (f *fake) Env() []string {
	if !f.claimed {
		return nil
	}
	return []string{"FAKE=" + f.name}
}
func (f *fake) Open(string) error { return nil }
func (f *fake) Drain(ctx context.Context, bound int64) (Figure, bool) {
	if ctx.Err() != nil {
		return Figure{}, false
	}
	return Figure{Usage: Usage{Input: bound, Total: bound}, Origin: "fake", Grade: GradeAccounted}, true
}
func (f *fake) Close() error { f.closed++; return nil }

var _ Source = (*fake)(nil)

func TestRegistryKeepsOrderAndMakesFreshSources(t *testing.T) {
	var r Registry
	assert.Zero(t, r.Len())
	assert.Empty(t, r.Instantiate(), "the zero registry measures nothing")

	require.NoError(t, r.Register("b", func() Source { return &fake{name: "b"} }))
	require.NoError(t, r.Register("a", func() Source { return &fake{name: "a"} }))
	assert.Equal(t, []string{"b", "a"}, r.Names())
	assert.Equal(t, 2, r.Len())

	first, second := r.Instantiate(), r.Instantiate()
	require.Len(t, first, 2)
	assert.Equal(t, "b", first[0].Name())
	assert.Equal(t, "a", first[1].Name())
	assert.NotSame(t, first[0], second[0], "each session start gets its own instances")

	ok, err := first[0].Claim(Launch{Program: "b"})
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []string{"FAKE=b"}, first[0].Env())
	assert.Empty(t, second[0].Env())
}

func TestRegistryRefusesDuplicatesAndBlanks(t *testing.T) {
	var r Registry
	f := func() Source { return &fake{name: "x"} }
	require.NoError(t, r.Register("x", f))
	assert.ErrorIs(t, r.Register("x", f), ErrDuplicate)
	assert.Error(t, r.Register("", f))
	assert.Error(t, r.Register("y", nil))
	assert.Equal(t, []string{"x"}, r.Names())
}

func TestGradeString(t *testing.T) {
	assert.Equal(t, "unknown", GradeUnknown.String())
	assert.Equal(t, "partial", GradePartial.String())
	assert.Equal(t, "accounted", GradeAccounted.String())
	assert.Equal(t, "Grade(9)", Grade(9).String())
}
