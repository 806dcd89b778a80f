package measure

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is which part of a plan one machine runs: the I-th (from 1) of N,
// every N-th item from the I-th. The zero Shard is the whole plan. Every
// shard sees the whole plan, so an item's seed and name do not depend on
// how the plan was split.
type Shard struct{ I, N int }

// ParseShard reads "I/N" with 1 <= I <= N; "" is the whole plan.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, ierr := strconv.Atoi(is)
	n, nerr := strconv.Atoi(ns)
	if !ok || ierr != nil || nerr != nil || n < 1 || i < 1 || i > n || fmt.Sprintf("%d/%d", i, n) != s {
		return Shard{}, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N, e.g. 2/3", s)
	}
	return Shard{I: i, N: n}, nil
}

// Whole says the shard is the whole plan.
func (s Shard) Whole() bool { return s.N <= 1 }

// Mine says whether the plan's i-th item (from 0) is this shard's.
func (s Shard) Mine(i int) bool { return s.Whole() || i%s.N == s.I-1 }

func (s Shard) String() string {
	if s.Whole() {
		return "the whole plan"
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}
