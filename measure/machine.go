package measure

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// LoadAverage is the 1-minute load average, or "unknown" off Linux.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// Machine describes what figures were measured on, since a race's rate
// depends on the machine's speed and load: its CPUs, how many lanes (of
// unit: "runs", "topologies") went at once, and the load average at the
// start (startLoad) and now.
func Machine(lanes int, unit, startLoad string) string {
	return fmt.Sprintf("%d CPUs, %d %s at once, load average %s at the start, %s at the end", runtime.NumCPU(), lanes, unit, startLoad, LoadAverage())
}
