package checker

import (
	"math"
	"testing"

	"github.com/anishathalye/porcupine"
)

// fuzzCase decodes bytes into a small one-key history of model inputs, with
// times in nanoseconds on a small integer grid so that the reference can
// enumerate every instant.
type fuzzCase struct {
	lock, fence []input
	loss        lossWindows
	tol         int64
}

type byteReader struct {
	b []byte
	i int
}

func (r *byteReader) next(n int) int64 {
	if r.i >= len(r.b) {
		return 0
	}
	v := int64(r.b[r.i]) % int64(n)
	r.i++
	return v
}

func decodeFuzz(data []byte) fuzzCase {
	r := &byteReader{b: data}
	var c fuzzCase
	n := 1 + int(r.next(5))
	c.tol = r.next(2)
	if r.next(4) == 0 {
		a := r.next(14)
		c.loss = lossWindows{{a, a + r.next(5)}}
	}
	for i := range n {
		in := input{kind: [...]opKind{kAcquire, kExtend, kRelease, kObserve, kAcquire}[r.next(5)],
			out: outcome(r.next(3)), token: int32(1 + r.next(3)), op: int32(i), client: int32(i)}
		in.call = r.next(10)
		in.ret = in.call + r.next(5)
		in.ttl = 2 + r.next(4)
		if r.next(12) == 0 {
			in.ttl = 0
		}
		if in.kind == kObserve {
			in.out = outOK
			in.val = [...]int64{pttlMissing, pttlNoExpiry, 0, 2, 4}[r.next(5)]
			if r.next(3) == 0 {
				in.token = 0
			}
		}
		if in.out == outUnknown {
			in.ret = never
		}
		c.lock = append(c.lock, in)
		if in.kind == kAcquire && in.out == outOK && r.next(2) == 0 {
			f := in
			f.kind, f.val = kFence, r.next(4)
			c.fence = append(c.fence, f)
		}
	}
	sortInputs(c.lock)
	sortInputs(c.fence)
	return c
}

func sortInputs(ins []input) {
	for i := 1; i < len(ins); i++ {
		for j := i; j > 0 && ins[j].call < ins[j-1].call; j-- {
			ins[j], ins[j-1] = ins[j-1], ins[j]
		}
	}
}

// checkAgainstReference compares porcupine with the model, the greedy
// search and the brute-force reference on one case.
func checkAgainstReference(t *testing.T, c fuzzCase) {
	t.Helper()
	m := &model{loss: c.loss, counterLoss: c.loss, tol: c.tol}
	pm := m.porcupineModel()
	if len(c.lock) > 0 {
		begin := lockBegin(c.lock, nil)
		got := porcupine.CheckOperations(pm, porcupineOps(nil, &begin, nil, c.lock, ""))
		want := newReference(c.lock, c.loss, c.tol).legal(0, false)
		if got != want {
			t.Fatalf("lock model says %v, reference says %v for\n%s", got, want, dumpInputs(c))
		}
		var g greedy
		if g.run(m, &begin, nil, c.lock) && !want {
			t.Fatalf("greedy found an order the reference rules out for\n%s", dumpInputs(c))
		}
	}
	if len(c.fence) > 0 {
		seg := segment{fence: math.MinInt64}
		begin := fenceBegin(&seg, c.fence)
		got := porcupine.CheckOperations(pm, porcupineOps(nil, &begin, nil, c.fence, ""))
		want := newReference(c.fence, c.loss, c.tol).legal(math.MinInt64, false)
		if got != want {
			t.Fatalf("fence model says %v, reference says %v for\n%s", got, want, dumpInputs(c))
		}
	}
}

func dumpInputs(c fuzzCase) string {
	s := ""
	for _, in := range append(append([]input(nil), c.lock...), c.fence...) {
		ret := "inf"
		if in.ret != never {
			ret = itoa64(in.ret)
		}
		s += "  " + in.describe(nil) + " tok=" + itoa64(int64(in.token)) + " [" + itoa64(in.call) + "," + ret + "]\n"
	}
	for _, w := range c.loss {
		s += "  loss [" + itoa64(w.start) + "," + itoa64(w.end) + "]\n"
	}
	return s + "  tol " + itoa64(c.tol)
}

func itoa64(v int64) string {
	if v == 0 {
		return "0"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	var b []byte
	for v > 0 {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}

// FuzzModel compares the porcupine models with the brute-force reference
// on small histories (every order of a few operations). The seed corpus
// runs as a normal test; `go test -fuzz=FuzzModel ./checker` searches on.
func FuzzModel(f *testing.F) {
	seeds := [][]byte{
		{},
		{1, 0, 1, 0, 0, 0, 1, 0, 3, 0, 0, 0, 0, 1, 2, 0},
		{2, 1, 1, 0, 0, 1, 0, 1, 3, 1, 0, 0, 1, 5, 4, 2, 1, 2},
		{3, 0, 0, 5, 2, 0, 0, 1, 0, 2, 1, 1, 1, 0, 0, 3, 0, 1, 2, 0, 4, 1, 2, 0},
		{4, 1, 1, 4, 0, 2, 1, 0, 1, 2, 0, 4, 1, 0, 2, 3, 0, 2, 0, 5, 2, 1, 2, 3, 0},
		{4, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 3, 0, 1, 0, 3, 0, 0, 4, 1, 1, 0, 2, 3},
		{2, 0, 0, 3, 0, 0, 0, 1, 4, 0, 0, 0, 2, 2, 0, 2, 1, 4, 3},
	}
	for _, s := range seeds {
		f.Add(s)
	}
	for i := range 40 {
		b := make([]byte, 40)
		x := uint32(i*2654435761 + 12345)
		for j := range b {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			b[j] = byte(x)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstReference(t, decodeFuzz(data))
	})
}
