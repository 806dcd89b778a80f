package jepsen

import (
	"strings"
	"testing"
)

// TestEDNBoundsAValue: a value past the bounds of an operation is refused
// where it starts, having read no more than the bound.
func TestEDNBoundsAValue(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{strings.Repeat("x", 1<<16), "line 1, column 1: a symbol, keyword or number longer than"},
		{"\n{:error \"" + strings.Repeat("a", maxEDNValue+1), "line 2, column 1: more than 1 MiB for one value"},
		{"[{:x [" + strings.Repeat("1 ", maxEDNItems+1) + "]}]", "line 1, column 2: a value of more than"},
		{"[1 2 3]", "line 1, column 2: want an operation map"},
	} {
		_, err := Import(strings.NewReader(c.text), Options{TTL: 1})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40q: error %v, want %q", c.text, err, c.want)
		}
	}
}
