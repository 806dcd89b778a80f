package main

import (
	"io"
	"slices"
	"testing"

	"github.com/lockcheck/lockcheck/scenarios"
)

// TestSelectClients: --clients keeps the named clients of each claim and
// drops the claims that run none of them, so a changed client's rows are
// measured again alone.
func TestSelectClients(t *testing.T) {
	all := scenarios.MigrationClaims()
	claims, mutants, code := selectClients(all, []string{"mutant"}, "valkeylock", io.Discard)
	if code != 0 || len(mutants) != 0 {
		t.Fatalf("selectClients: code %d, mutants %v", code, mutants)
	}
	want := 0
	for _, c := range all {
		if slices.Contains(c.Clients, "valkeylock") {
			want++
		}
	}
	if len(claims) != want || want == 0 {
		t.Fatalf("%d claims kept, want the %d that run valkeylock", len(claims), want)
	}
	for _, c := range claims {
		if !slices.Equal(c.Clients, []string{"valkeylock"}) {
			t.Fatalf("claim %s runs %v, want valkeylock alone", c.Name, c.Clients)
		}
	}
	if kept, _, _ := selectClients(all, nil, "", io.Discard); len(kept) != len(all) {
		t.Fatalf("no --clients kept %d claims of %d", len(kept), len(all))
	}
}
