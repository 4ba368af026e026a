package jsonx

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// boundedFields is the descriptor a generated object with v2's bounds
// would have: a list with minItems, a required integer with a minimum,
// and an optional lenient one (ToolCallLocation's line).
var boundedFields = NewFields(
	F("items", Required|Empty).MinItems(2),
	F("n", Required).Min(1),
	F("line", Omit|Nullable|Lenient).Min(3),
)

type bounded struct {
	Items []int64
	N     uint16
	Line  *uint32
}

func (x *bounded) decodeAt(data []byte) error {
	var d Decoder
	for d.Begin(data, boundedFields, nil); d.Next(); {
		switch string(d.Key()) {
		case "items":
			List(d.At(0), &x.Items, Int64)
		case "n":
			IntMin(d.At(1), &x.N, Uint16)
		case "line":
			IntMinPtr(d.At(2), &x.Line, Uint32)
		}
	}
	_, err := d.End(nil, nil)
	return err
}

func TestSDK4_MinItemsAndMinimumInTheWalker(t *testing.T) {
	var x bounded
	require.NoError(t, x.decodeAt([]byte(`{"items":[1,2],"n":1,"line":3}`)))
	require.Equal(t, uint32(3), *x.Line)

	for in, path := range map[string]string{
		`{"items":[1],"n":1}`:   "items",
		`{"items":[],"n":1}`:    "items",
		`{"items":[1,2],"n":0}`: "n",
	} {
		x = bounded{}
		err := x.decodeAt([]byte(in))
		var de *DecodeError
		require.True(t, errors.As(err, &de), in)
		require.ErrorIs(t, err, ErrInvalidValue, in)
		require.Equal(t, path, de.Path, in)
	}
	x = bounded{}
	require.EqualError(t, x.decodeAt([]byte(`{"items":[1],"n":1}`)), "items: invalid value: fewer than 2 items")
	require.EqualError(t, x.decodeAt([]byte(`{"items":[1,2],"n":0}`)), "n: invalid value: less than the minimum 1")

	// Lenient: a line below its minimum is dropped, not a failure.
	x = bounded{}
	require.NoError(t, x.decodeAt([]byte(`{"items":[1,2],"n":1,"line":2}`)))
	require.Nil(t, x.Line)
}

func TestSDK4_MinimumAcrossSignedness(t *testing.T) {
	require.NoError(t, Minimum(uint64(math.MaxUint64), 1))
	require.Error(t, Minimum(uint64(0), 1))
	require.NoError(t, Minimum(int64(-3), -3))
	require.Error(t, Minimum(int64(-4), -3))
	require.NoError(t, Minimum(uint16(0), -3))
	require.Error(t, Minimum(int32(-1), 0))
	require.NoError(t, MinItems(2, 2))
	require.Error(t, MinItems(1, 2))
}
