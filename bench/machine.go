package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// machine is what the results say about where they were measured.
type machine struct {
	Date, CPU, Memory, Docker, Go, Server string
	NProc, GoMaxProcs                     int
	LoadStart, LoadEnd, Wall, Note        string
}

func describeMachine(ctx context.Context) machine {
	m := machine{
		Date:       time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		NProc:      runtime.NumCPU(),
		GoMaxProcs: runtime.GOMAXPROCS(0),
		Go:         runtime.Version(),
		LoadStart:  loadAvg(),
		CPU:        "unknown",
		Memory:     "unknown",
		Docker:     "unknown",
	}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPU = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		if kb, err := strconv.ParseFloat(strings.Fields(v)[0], 64); err == nil {
			m.Memory = fmt.Sprintf("%.1f GiB", kb/(1<<20))
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(cctx, "docker", "version", "--format", "server {{.Server.Version}}, client {{.Client.Version}}").Output(); err == nil {
		m.Docker = strings.TrimSpace(string(out))
	}
	return m
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// procField is the value of the first "name: value" line of a /proc file.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// statusBytes reads a "VmRSS"/"VmHWM" field of /proc/<pid>/status in
// bytes; pid "self" is this process.
func statusBytes(pid, field string) (int64, error) {
	v := procField("/proc/"+pid+"/status", field)
	if v == "" {
		return 0, fmt.Errorf("no %s in /proc/%s/status", field, pid)
	}
	kb, err := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", field, err)
	}
	return kb << 10, nil
}
