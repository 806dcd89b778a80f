package suites

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/lockcheck/lockcheck/topology"
)

// logTail is how many of each node's last log lines a failed spec's report
// shows: CI often keeps only the report, and a failover that never
// finished is explained by the sentinels' and servers' last lines.
const logTail = 12

// KeepLogs saves a failed spec's node logs into its run folder, beside
// whatever the spec wrote there, and adds each node's last lines to the
// spec's report; what names them in the report ("node logs", or a shared
// server's since it started).
func KeepLogs(ctx context.Context, t *topology.Topology, what string) {
	dir := filepath.Join(specDir(), "nodes")
	AddReportEntry(what, dir)
	if err := t.SaveLogs(ctx, dir); err != nil {
		AddReportEntry("node logs not saved", err.Error())
		return
	}
	for _, n := range t.Nodes {
		b, err := os.ReadFile(filepath.Join(dir, n.Name+".log"))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		lines = lines[max(0, len(lines)-logTail):]
		AddReportEntry(fmt.Sprintf("log of %s (last %d lines)", n.Name, len(lines)), strings.Join(lines, "\n"))
	}
}
