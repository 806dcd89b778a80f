package scenarios

import (
	"slices"
	"testing"

	"github.com/lockcheck/lockcheck/scenarios/fault"
)

// TestReportCardCells: every fault of the card is a cell on both
// topologies; the Lua-less cell runs only the libraries that script, and
// measures them; glide is on the cluster alone.
func TestReportCardCells(t *testing.T) {
	cells := map[string]Claim{}
	for _, c := range ReportCardClaims() {
		cells[c.Name] = c
	}
	for _, topo := range []string{"sentinel", "cluster"} {
		for _, f := range ReportCardFaults {
			if _, ok := cells[topo+"/"+cardFaultName(f)]; !ok {
				t.Errorf("no cell %s/%s", topo, cardFaultName(f))
			}
		}
		lua := cells[topo+"/"+fault.UnloadLua.Name()]
		want := []string{"redsync", "redislock", "valkeylock", PythonLock}
		if !slices.Equal(lua.Clients, want) || lua.Expect != ExpectMeasured {
			t.Errorf("%s/unload-lua runs %q (%s); want %q, measured", topo, lua.Clients, lua.Expect, want)
		}
		for _, f := range []string{"kill-primary", "partition-primary"} {
			if c := cells[topo+"/"+f]; c.Expect != ExpectMeasured || slices.Contains(c.Clients, "fenced") || cells[topo+"/"+f+"/fenced"].Expect != ExpectGateMet {
				t.Errorf("%s/%s: the unfenced clients are not measured apart from the fenced one", topo, f)
			}
		}
		if got := slices.Contains(cells[topo+"/none"].Clients, "glide"); got != (topo == "cluster") {
			t.Errorf("%s/none has glide: %v", topo, got)
		}
	}
}
